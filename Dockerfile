# loopguard, built from this repo: the CLI on Node 24. The default command is the alert
# subscriber on Kafka (stop reports as JSON lines on stdout); any other loopguard command can be
# given instead, e.g. `docker compose run --rm alert rebuild --kafka --json`.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY schemas ./schemas
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
# The Avro schemas are read at run time (dist/events finds them at ../../schemas).
COPY schemas ./schemas
COPY examples ./examples
USER node
ENTRYPOINT ["node", "bin/loopguard.js"]
CMD ["alert", "--kafka"]
