# llmbench in a container, for running shards on Kubernetes (deploy/k8s/README.md) or anywhere else.
#
#   docker build -t llmbench:$(node -p "require('./package.json').version") .
#   docker run --rm --init -e MY_API_KEY -v "$PWD:/results" llmbench:0.1.0 run -c settings.json
#
# The tag is the package version because `llmbench k8s-manifest` defaults to that image.

# --- build: the full install (TypeScript is a dev dependency) and the compile -----------------------
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the sources are not copied yet (the build is the next step). The only dependency with
# an install script is esbuild (under tsx, for tests), which the build does not use.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npm run build

# --- runtime: production dependencies and the compiled CLI only -------------------------------------
FROM node:20-slim
# resvg draws the text of charts/*.png with a system font (DejaVu Sans); without one, the PNGs have
# lines but no labels. Installed at build time: nothing downloads when a benchmark runs.
RUN apt-get update \
  && apt-get install -y --no-install-recommends fonts-dejavu-core \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts again: no production
# dependency needs an install script (resvg's native binary is a plain optional package).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The same files the npm package ships: the sample prompt datasets, at /app/datasets, and the
# OpenAI encodings' rank files the tokenizer reads (dist/workload finds them at ../../tokenizers).
COPY datasets ./datasets
COPY tokenizers ./tokenizers
# Results are written relative to the working directory; the image's `node` user (uid 1000) owns it.
# Kubernetes mounts a volume here (the manifests run as uid 1000 too).
RUN mkdir -p /results && chown node:node /results
USER node
WORKDIR /results
ENTRYPOINT ["node", "/app/dist/cli/main.js"]
CMD ["--help"]
