#!/bin/sh
# Dockerfile, runtime stage: jemalloc, the allocator the API process's command preloads (docs/operations.md);
# nothing to do where it is already installed. No apt lists left behind.
set -eu
# Asked of the dynamic loader, as the command's LD_PRELOAD is: it prints an error when it cannot preload.
if [ -z "$(LD_PRELOAD=libjemalloc.so.2 /bin/true 2>&1)" ]; then exit 0; fi
apt-get update
apt-get install -y --no-install-recommends libjemalloc2
rm -rf /var/lib/apt/lists/*
