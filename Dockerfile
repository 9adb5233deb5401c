# tacit as a container entrypoint: `docker run --rm -i tacit run - < script.ts`
FROM node:20-bookworm-slim
WORKDIR /opt/tacit
COPY package.json package-lock.json ./
COPY bin ./bin
COPY cli ./cli
COPY runner ./runner
COPY library ./library
COPY bench ./bench
COPY examples ./examples
COPY build ./build
COPY tsconfig.json rolldown.config.mjs ./
# The same install as the README: npm builds tacit (dist/) in its prepare step.
RUN npm ci && npm link
WORKDIR /work
ENTRYPOINT ["tacit"]
CMD ["--help"]
