#!/bin/sh
# Dockerfile, runtime stage: the unprivileged user owns only what the processes write: Ponder's .ponder/ and
# generated/, ponder-env.d.ts (`ponder start` rewrites it at every start), and .cache/ (the API process's V8 code
# cache, NODE_COMPILE_CACHE in its command). Code and node_modules stay root-owned, read-only to it.
set -eu
user="${1:-node}"
mkdir -p .ponder generated .cache
chown -R "$user" .ponder generated .cache ponder-env.d.ts
