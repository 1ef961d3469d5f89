# unigate gateway image.
#   docker build -t unigate .
#   docker run -p 8080:8080 -p 8081:8081 -e SECRET_KEY=… -e DATABASE_URL=postgres://… unigate
# Both stages use the same Node 24 LTS Debian image (SQLite is Node's built-in node:sqlite; argon2 loads the
# prebuilt N-API binary its package ships, so nothing is compiled).

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY bin ./bin
COPY src ./src
COPY web ./web
COPY bench ./bench
COPY test/support ./test/support
COPY test/mock-upstreams ./test/mock-upstreams
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/vendor.vite.config.ts ./scripts/
# One install: `npm ci` runs the package's `prepare` script, which compiles the TypeScript and the console into
# dist/. Then the development dependencies are removed from the same node_modules, and so are the optional ones:
# the Node.js package `npm ci` brings for running outside a container (the image has its own Node 24).
RUN npm ci && npm prune --omit=dev --omit=optional && npm cache clean --force

FROM node:24-bookworm-slim AS runtime
# jemalloc instead of glibc's malloc: glibc keeps the memory a burst of connections freed (holes in its heap it
# returns only when asked to trim), jemalloc hands freed pages back within a second from its own thread
# (docs/operators.md, "Memory"). The name without a path is looked up like any library, on every architecture.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libjemalloc2 \
 && rm -rf /var/lib/apt/lists/*
ENV HOST=0.0.0.0 \
    PORT=8080 \
    CONSOLE_PORT=8081 \
    DATA_DIR=/var/lib/unigate \
    LD_PRELOAD=libjemalloc.so.2 \
    MALLOC_CONF=background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json /app/package-lock.json ./
COPY --from=build --chown=root:root /app/bin ./bin
COPY --from=build --chown=root:root /app/dist ./dist
COPY --from=build --chown=root:root /app/node_modules ./node_modules
# The code is owned by root and read-only to the gateway; only the data directory (SQLite file, generated
# secret key) is writable by the unprivileged user.
RUN groupadd --system --gid 10001 unigate \
 && useradd --system --uid 10001 --gid unigate --home-dir /var/lib/unigate --shell /usr/sbin/nologin unigate \
 && mkdir -p /var/lib/unigate \
 && chown unigate:unigate /var/lib/unigate
USER 10001:10001
VOLUME ["/var/lib/unigate"]
EXPOSE 8080 8081
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "bin/unigate.js"]
CMD ["serve"]
