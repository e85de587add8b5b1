#!/bin/sh
# Dockerfile, runtime stage: jemalloc, the allocator the API process's command preloads (docs/operations.md);
# nothing to do where it is already installed. No apt lists left behind.
set -eu
if ldconfig -p | grep -q 'libjemalloc\.so\.2 '; then exit 0; fi
apt-get update
apt-get install -y --no-install-recommends libjemalloc2
rm -rf /var/lib/apt/lists/*
