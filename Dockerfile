# The warden worker image: `docker build -t warden .` (docker-compose.yml builds it as warden-worker).
# Debian (glibc), not Alpine: @temporalio/core-bridge ships prebuilt binaries for linux-gnu only.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# --- build: full dependency tree, compile TypeScript, then drop the dev dependencies -------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: nothing warden needs runs an install script (the Temporal core bridge and swc
# ship prebuilt platform packages), and npm 11 would not run them unapproved anyway. The lockfile
# lists every optional platform package of @swc/core, so the npm 11 of the Node 24 image accepts it.
RUN npm ci --ignore-scripts --no-audit --no-fund
# Exactly what tsconfig.json compiles ("include"); test/unit/compose.test.ts keeps the two in step.
COPY tsconfig.json ./
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
COPY workers ./workers
COPY bench ./bench
COPY scripts ./scripts
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force

# --- runtime: compiled JavaScript + production node_modules, as the unprivileged `node` user ------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
# The worker's state (driven agents' work and session directories, delegated results by hash).
# docker-compose.yml mounts the named volume `warden-home` here; a new named volume takes this
# directory's owner (the `node` user), so the unprivileged worker can write to it.
ENV WARDEN_HOME=/var/lib/warden
RUN mkdir -p /var/lib/warden && chown 1000:1000 /var/lib/warden && chmod 0750 /var/lib/warden
WORKDIR /app
# Owned by root and read-only to the worker: the process cannot rewrite its own code.
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The image's `node` user, by number so runAsNonRoot-style checks can verify it.
USER 1000:1000
# Connection: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, WARDEN_TASK_QUEUE. Secrets come from the
# environment at run time (compose env_file), never from this image.
CMD ["node", "dist/workers/main.js"]
