#!/bin/sh
# Dockerfile, runtime stage: the unprivileged user owns only what the processes write: Ponder's .ponder/ and
# generated/, and ponder-env.d.ts (`ponder start` rewrites it at every start). Code and node_modules stay
# root-owned, read-only to it.
set -eu
user="${1:-node}"
mkdir -p .ponder generated
chown -R "$user" .ponder generated ponder-env.d.ts
