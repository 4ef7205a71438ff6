# Litestream, the official release (app/replica.py runs it when WAYLINE_REPLICA_URL is set).
ARG LITESTREAM_VERSION=0.5.17
FROM litestream/litestream:${LITESTREAM_VERSION} AS litestream

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    HOST=0.0.0.0 PORT=8080 \
    WAYLINE_DB=/data/wayline.db WAYLINE_UPLOADS=/data/uploads

COPY --from=litestream /usr/local/bin/litestream /usr/local/bin/litestream
WORKDIR /srv
# Only what the server needs: no .env, no tests, no local data.
COPY pyproject.toml README.md ./
COPY app ./app
COPY public ./public
COPY docs ./docs
# `python -m app` runs /srv/app (the working directory comes first on the
# path), and PYTHONDONTWRITEBYTECODE keeps Python from caching its bytecode at
# run time: compile it here, or every start compiles every module (~50 ms).
# The replica extra (boto3) keeps uploads in the bucket when replication is on.
RUN python -m compileall -q app && pip install --no-cache-dir '.[replica]' \
    && useradd --system --home /srv wayline && mkdir -p /data && chown wayline /data \
    && litestream version
USER wayline
EXPOSE 8080
# boot: with WAYLINE_REPLICA_URL, restore the database if the volume has none,
# then run the server under `litestream replicate -exec`; without it, plain
# `python -m app` (docs/deploy.md).
CMD ["python", "-m", "app", "boot"]
