#!/bin/sh
# Dockerfile, runtime stage: Node's code cache of the API bundle, made when the image is built, so a new container's
# first start reads it instead of compiling the 5 MB bundle (docs/operations.md; a restart would otherwise be the
# first to have it). The CMD's command is `serve:api`'s (test/production/dependencies.test.ts keeps them equal):
# its V8 flags are read from package.json here, since Node keys the cache by its version and those flags (and the
# bundle's path and content), and ignores any entry that does not match. The bundle is started with a
# configuration it refuses (NETWORK=none), so it stops at once — after Node compiled it, which is when the cache is
# made — and Node writes the cache as it exits. Run as the image's user (after own.sh gave it .cache/): Node keeps
# a cache folder per user id, and the process reads the one of the user it runs as.
set -eu
flags=$(node -e '
  const script = require("./package.json").scripts["serve:api"];
  const m = / node((?: --[\w-]+(?:=\S+)?)*) dist\/server\/main\.js$/.exec(script);
  if (!m) { console.error("serve:api has no node <flags> dist/server/main.js: " + script); process.exit(1); }
  process.stdout.write(m[1].trim());
')
cache=.cache/node-compile-cache
mkdir -p "$cache"
# shellcheck disable=SC2086 # the flags are words
if env NETWORK=none NODE_COMPILE_CACHE="$cache" node $flags dist/server/main.js >/dev/null 2>&1; then
  echo "warm-code-cache: the bundle started with NETWORK=none; it should have refused it" >&2
  exit 1
fi
if [ -z "$(find "$cache" -type f)" ]; then
  echo "warm-code-cache: Node wrote no code cache into $cache" >&2
  exit 1
fi
echo "warm-code-cache: $(du -sh "$cache" | cut -f1) in $cache"
