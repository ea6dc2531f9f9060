# syntax=docker/dockerfile:1.7
# Images of every deployable; deploy/build-images.sh builds them all from deploy/deployables.json.
#   runtime (last, the default)  compiled JavaScript and runtime dependencies only, one image per service:
#                                docker build --build-arg SERVICE=gateway -t whetstone/gateway .
#   migrate                      the migration runner (one bundled file) and every service's migrations, for the
#                                chart's migration Jobs
#   dev                          the whole workspace running `tsx watch`, for Tilt's live update (see the Tiltfile)
ARG NODE_VERSION=20.19.5

FROM node:${NODE_VERSION}-bookworm-slim AS base
ENV CI=true \
    ONNXRUNTIME_NODE_INSTALL=skip \
    PRISMA_ENGINES_MIRROR=http://127.0.0.1:9 \
    CHECKPOINT_DISABLE=1 \
    npm_config_store_dir=/pnpm-store
RUN npm install -g pnpm@10.28.1
WORKDIR /app

# Every download, keyed by the lockfile alone: a source edit keeps this layer and the store it fills.
FROM base AS fetch
COPY pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
RUN pnpm fetch

# The workspace, linked from that store without the network. The postinstall generates the Prisma clients and
# builds the ML assets (the GloVe subset is reused when the build context has it).
FROM fetch AS workspace
COPY . .
RUN pnpm install --offline --frozen-lockfile

FROM workspace AS dev
ARG SERVICE
ENV SERVICE=${SERVICE} HOME=/tmp
USER 10001:10001
# tsx restarts the service when Tilt syncs a source file; its cache goes to /tmp (an emptyDir in the chart).
CMD ["sh", "-c", "exec node_modules/.bin/tsx watch --clear-screen=false services/${SERVICE}/src/main.ts"]

# The chart's migration Jobs run `node migrate.js migrations/<service>`: tools/prisma/migrate-cli.ts bundled with
# pg, beside every service's prisma/migrations (under 1 MB on the base image; deploy/image/build-migrate.mjs).
FROM workspace AS migrate-build
RUN node deploy/image/build-migrate.mjs /out

FROM node:${NODE_VERSION}-bookworm-slim AS migrate
ENV NODE_ENV=production HOME=/tmp
COPY --from=migrate-build /out/ /app/
WORKDIR /app
USER 10001:10001
CMD ["node", "migrate.js", "--help"]

# TypeScript compiled to JavaScript, `pnpm deploy --prod`, the model runtime only where models run
# (deploy/image/build-service.mjs); /out/deps holds the third-party packages, /out/app the rest.
FROM workspace AS build
ARG SERVICE
RUN test -n "${SERVICE}" && node deploy/image/build-service.mjs "${SERVICE}" /out

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ARG SERVICE
ENV NODE_ENV=production HOME=/tmp
# Two layers: the dependencies' layer has the same content after a source-only edit, so BuildKit reuses it.
COPY --from=build /out/deps/ /app/
COPY --from=build /out/app/ /app/
WORKDIR /app/services/${SERVICE}
USER 10001:10001
CMD ["node", "--enable-source-maps", "dist/main.js"]
