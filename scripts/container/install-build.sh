#!/bin/sh
# Dockerfile, build stage: every dependency, exactly the lockfile (the build needs esbuild and the Scalar package).
set -eu
npm ci --no-audit --no-fund
