#!/bin/sh
# Dockerfile, runtime stage: only the runtime dependencies, exactly the lockfile; no npm cache left behind.
set -eu
npm ci --omit=dev --no-audit --no-fund
npm cache clean --force 2>/dev/null || true
