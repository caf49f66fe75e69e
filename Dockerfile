# syntax=docker/dockerfile:1
# One image for the clawplane operator (`clawplane k8s run`) and for the pods that host stdio MCP
# servers (`clawplane bridge -- uvx ... | npx ...`): Python 3.12 with uv/uvx, and Node.js LTS with npm/npx.
#   docker build -t ghcr.io/clawplane/clawplane:0.1.0 .

ARG PYTHON_IMAGE=python:3.12-slim-bookworm
ARG NODE_IMAGE=node:22-bookworm-slim

# Node.js LTS, copied from the official image (same Debian release, so the same glibc).
FROM ${NODE_IMAGE} AS node

# Build clawplane (with the k8s extra) and uv into a self-contained virtualenv.
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/clawplane
WORKDIR /src
COPY pyproject.toml README.md ./
COPY operator/ ./operator/
RUN /opt/clawplane/bin/pip install "uv>=0.5" ".[k8s]" \
 && /opt/clawplane/bin/clawplane --version

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="clawplane" \
      org.opencontainers.image.description="clawplane operator and MCP server bridge" \
      org.opencontainers.image.source="https://github.com/clawplane/clawplane" \
      org.opencontainers.image.licenses="Apache-2.0"
ARG UID=65532
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git libstdc++6 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid ${UID} clawplane \
 && useradd --uid ${UID} --gid ${UID} --home-dir /home/clawplane --create-home --shell /usr/sbin/nologin clawplane \
 && install -d -o ${UID} -g ${UID} /var/lib/clawplane
COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=node /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version && npx --version
COPY --from=build /opt/clawplane /opt/clawplane
# HOME holds the uv and npm caches of `uvx`/`npx` servers: mount an emptyDir there (and on /tmp)
# when the root filesystem is read-only.
ENV PATH=/opt/clawplane/bin:$PATH \
    HOME=/home/clawplane \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    UV_PYTHON_PREFERENCE=system \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false
RUN clawplane --version && uv --version && uvx --version
USER 65532:65532
WORKDIR /home/clawplane
EXPOSE 8080 8081 9090
ENTRYPOINT ["clawplane"]
CMD ["k8s", "run", "--all-namespaces"]
