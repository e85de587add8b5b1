#!/bin/sh
# Dockerfile, build stage: the API bundle, the deployments it reads and the pre-compressed docs assets (dist/).
set -eu
npm run build
