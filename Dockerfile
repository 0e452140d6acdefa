# syntax=docker/dockerfile:1
# Latchkey: multi-stage build on Node 24 LTS, the release line CI tests (.nvmrc), running as the unprivileged `node` user.

FROM node:24-bookworm-slim AS build
WORKDIR /app
# No compiler needed: better-sqlite3 13 (Node-API) and the argon2 binding ship prebuilt binaries.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ormconfig.ts ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production PORT=3000 HOST=0.0.0.0
WORKDIR /app
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
# The email templates are read from src/mail/templates at start-up when SMTP_URL is set (MAIL_TEMPLATES_DIR overrides them).
COPY --from=build --chown=node:node /app/src/mail/templates ./src/mail/templates
COPY --chown=node:node package.json ./
COPY --chown=node:node views ./views
COPY --chown=node:node public ./public
COPY --chown=node:node config ./config
RUN mkdir -p /app/data && chown node:node /app/data
USER node
VOLUME ["/app/data"]
# 3000: the public port (behind the load balancer); 9464: Prometheus metrics, for the private network only.
EXPOSE 3000 9464
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The process settings of src/runtime/process-tuning.ts, as in `npm start` (bench/RESULTS.md, "Memory"): two glibc
# malloc arenas and an 8 MB young-generation semi-space keep RSS under load below 200 MB.
ENV MALLOC_ARENA_MAX=2
CMD ["node", "--max-semi-space-size=8", "dist/src/main.js"]
