# syntax=docker/dockerfile:1.7
# One image recipe for every deployable: `docker build --build-arg SERVICE=gateway -t whetstone/gateway .`
ARG NODE_VERSION=20.19.5

FROM node:${NODE_VERSION}-bookworm-slim AS base
ENV CI=true \
    ONNXRUNTIME_NODE_INSTALL=skip \
    PRISMA_ENGINES_MIRROR=http://127.0.0.1:9 \
    CHECKPOINT_DISABLE=1
RUN npm install -g pnpm@10.28.1
WORKDIR /app

# The install stage copies the whole source tree, because pnpm's postinstall generates the Prisma clients and
# builds the ML assets from it; any source edit therefore re-runs the install. Splitting manifests from sources
# (and a `pnpm deploy --prod` slim image) is tracked with the Kubernetes work, not done here.
FROM base AS deps
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
COPY packages/ packages/
COPY services/ services/
COPY tools/ tools/
COPY test/e2e/package.json test/e2e/package.json
COPY bench/package.json bench/package.json
RUN pnpm install --frozen-lockfile

FROM base AS runtime
ARG SERVICE
ENV NODE_ENV=production SERVICE=${SERVICE} HOME=/tmp
COPY --from=deps --chown=10001:10001 /app /app
COPY --chown=10001:10001 proto/ proto/
USER 10001:10001
# Services run their TypeScript through tsx; its compile cache goes to /tmp (an emptyDir in the chart).
CMD ["sh", "-c", "exec node --require tsx/cjs services/${SERVICE}/src/main.ts"]
