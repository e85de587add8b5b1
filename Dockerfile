# syntax=docker/dockerfile:1
# One image, two roles: the API process (the default command) and the indexer (compose.yaml overrides the
# command with `ponder start`). Every RUN step is a script of scripts/container/, and
# test/production/container.test.ts runs this file's steps in order without a Docker engine (none runs on the
# CI machines): the same installs, the same build, the same COPY lists, the same command and health check.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
RUN sh scripts/container/install-build.sh
COPY . .
# The commit the bundle reports in api_build_info: the context has no .git (.dockerignore), so it is given
# (--build-arg GIT_COMMIT=$(git rev-parse HEAD); compose passes $GIT_COMMIT); without it, "unknown".
ARG GIT_COMMIT=""
RUN sh scripts/container/build.sh

FROM ${NODE_IMAGE} AS runtime
# No PORT here: Ponder reads PORT before its --port, so the indexer would take the API's port. The API process
# listens on 42069 by default; compose sets PORT on the API services only.
ENV NODE_ENV=production PONDER_TELEMETRY_DISABLED=true
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/container ./scripts/container
RUN sh scripts/container/install-runtime.sh
RUN sh scripts/container/install-allocator.sh
# The API process: the bundle and what it reads.
COPY --from=build /app/dist ./dist
# The health check; the runbook's sync-cache rewind (docs/operations.md, Unrecoverable reorg).
COPY scripts/healthcheck.mjs scripts/rewind-sync-cache.mjs ./scripts/
# The indexer: Ponder compiles its config, schema and handlers itself at start (its entry imports api/).
COPY ponder.config.ts ponder.schema.ts ponder-env.d.ts tsconfig.json ./
COPY abis ./abis
COPY api ./api
COPY deployments ./deployments
COPY indexer ./indexer
COPY src ./src
RUN sh scripts/container/own.sh node
USER node
# Node's code cache of the bundle, made as the user that runs it (Node keeps one per user id), so a new container's
# first start reads it (docs/operations.md).
RUN sh scripts/container/warm-code-cache.sh
EXPOSE 42069
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["node", "scripts/healthcheck.mjs"]
# Node itself is PID 1's child under `init: true` (compose) or PID 1: exec form, no shell, no npm in between
# (`env` execs node), so SIGTERM reaches the process's drain (api/server/main.ts). jemalloc, as `npm run serve:api`
# sets it (docs/operations.md): glibc's malloc kept ~140 MB of freed memory after a connection storm.
CMD ["env", "LD_PRELOAD=libjemalloc.so.2", "MALLOC_CONF=background_thread:true,muzzy_decay_ms:0", "NODE_COMPILE_CACHE=.cache/node-compile-cache", "node", "--min-semi-space-size=16", "--max-semi-space-size=16", "--no-allocation-site-pretenuring", "--heap-growing-percent=50", "--v8-pool-size=1", "dist/server/main.js"]
