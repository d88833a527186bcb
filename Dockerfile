# One image per KRM function and one for the orchestrator, built from the same
# layers; each image's entrypoint is the program in bin/ that `exec:` runs.
#
#   docker build --target package-context -t ghcr.io/kpt-variants/package-context:v0.1.0 .
#
# `npm run images` builds them all, named and labelled (org.opencontainers.image.source, version,
# revision, licenses, description: scripts/image-build.ts). BASE is any Node 22 (or 24) image with npm at
# /usr/local/lib/node_modules/npm (the official node images have it); the
# images run as nobody, as `kpt fn render` runs function containers.
# Every instruction uses the exec form, so BASE needs no shell; only the orchestrator's
# base runs a shell, to install git (Debian's package) where GIT_BASE lacks it.
ARG BASE=node:22-slim
# The orchestrator's base: BASE (git is installed into it), or an image that has node and git.
ARG GIT_BASE=${BASE}

# Compile the TypeScript with every dependency installed.
FROM ${BASE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN ["node", "/usr/local/lib/node_modules/npm/bin/npm-cli.js", "ci", "--ignore-scripts", "--no-audit", "--no-fund"]
COPY tsconfig.json tsconfig.build.json ./
COPY functions functions
COPY orchestrator orchestrator
COPY scripts/bundle.ts scripts/programs.ts scripts/
RUN ["node", "node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"]
# Each function's program in one file, with the code cache its launcher in bin/ loads it with
# (scripts/bundle.ts, bin/load-bundle.js): made here, by the Node of the image that runs it.
COPY bin/load-bundle.js bin/
RUN ["node", "dist/scripts/bundle.js"]

# Only the runtime dependencies ship; the functions' images leave out the optional Kubernetes client,
# which only the orchestrator's --cluster uses.
# The package.json an image ships lists what it has installed, no development tools: npm inside the image
# (`npm sbom`, which the release's image SBOMs are made with) then finds nothing missing.
FROM ${BASE} AS dependencies
WORKDIR /src
COPY package.json package-lock.json ./
RUN ["node", "/usr/local/lib/node_modules/npm/bin/npm-cli.js", "ci", "--omit=dev", "--omit=optional", "--ignore-scripts", "--no-audit", "--no-fund"]
RUN ["node", "/usr/local/lib/node_modules/npm/bin/npm-cli.js", "pkg", "delete", "devDependencies", "scripts"]

FROM ${BASE} AS orchestrator-dependencies
WORKDIR /src
COPY package.json package-lock.json ./
RUN ["node", "/usr/local/lib/node_modules/npm/bin/npm-cli.js", "ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund"]
RUN ["node", "/usr/local/lib/node_modules/npm/bin/npm-cli.js", "pkg", "delete", "devDependencies", "scripts"]

FROM ${BASE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=dependencies /src/package.json ./
COPY --from=dependencies /src/node_modules node_modules
COPY --from=build /src/dist/functions dist/functions
COPY --from=build /src/dist/orchestrator dist/orchestrator
COPY --from=build /src/dist/bundles dist/bundles
COPY bin bin
USER 65534:65534

FROM runtime AS package-context
ENTRYPOINT ["node", "/app/bin/package-context"]

FROM runtime AS pipeline-prepend
ENTRYPOINT ["node", "/app/bin/pipeline-prepend"]

FROM runtime AS config-injection
ENTRYPOINT ["node", "/app/bin/config-injection"]

FROM runtime AS package-variant
ENTRYPOINT ["node", "/app/bin/package-variant"]

FROM runtime AS fan-out
ENTRYPOINT ["node", "/app/bin/fan-out"]

FROM runtime AS dependency-check
ENTRYPOINT ["node", "/app/bin/dependency-check"]

FROM ${GIT_BASE} AS base-with-git
RUN ["/bin/sh", "-c", "command -v git >/dev/null || { apt-get update && apt-get install -y --no-install-recommends git ca-certificates && rm -rf /var/lib/apt/lists/*; }"]

# The orchestrator, for the in-cluster CronJob and Indexed Job: it runs git.
FROM base-with-git AS kpt-variants
ENV NODE_ENV=production
WORKDIR /app
COPY --from=orchestrator-dependencies /src/package.json ./
COPY --from=orchestrator-dependencies /src/node_modules node_modules
COPY --from=build /src/dist/functions dist/functions
COPY --from=build /src/dist/orchestrator dist/orchestrator
COPY --from=build /src/dist/bundles dist/bundles
COPY bin bin
USER 65534:65534
ENTRYPOINT ["node", "/app/bin/kpt-variants"]
