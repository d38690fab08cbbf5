# Layout Advisor: the demo dashboard on the embedded default (Spark local, the committed sample).
#   docker build -t layout-advisor . && docker run -p 8501:8501 layout-advisor
#
# No approver is baked into the image. On its first start `demo` creates the demo admin
# `dba` with a generated secret and prints it once (read it with `docker logs CONTAINER`),
# or uses the secret you pass: `docker run -e LAYOUT_ADVISOR_DEMO_SECRET=... ...`. Only its
# Argon2id hash is stored (in the /data volume). Lost it? Another admin can reset it
# (`docker exec -it CONTAINER layout-advisor approvers passwd dba --as OTHER_ADMIN`), or
# start over with a fresh volume.
# The container must listen on 0.0.0.0 (the port is published by Docker), so `demo` prints a
# warning that the dashboard is exposed: read-only pages are open, changes need a sign-in.
# `docker stop` sends SIGTERM: the command stops Streamlit and its Spark JVM, then exits.
FROM python:3.11-slim

# Spark needs a Java 17 runtime; headless is enough.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openjdk-17-jre-headless procps \
 && rm -rf /var/lib/apt/lists/*

ENV SPARK_LOCAL_IP=127.0.0.1 \
    LAYOUT_ADVISOR_HOME=/data/.layout-advisor \
    PYTHONUNBUFFERED=1

WORKDIR /opt/layout-advisor
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY app ./app
COPY sample_data ./sample_data
RUN pip install --no-cache-dir .

EXPOSE 8501
VOLUME ["/data"]
# Builds the demo table and workload (idempotent), then serves the dashboard on 0.0.0.0:8501.
# `--sample` (the committed 200k-row sample, 100 partitions) starts in seconds; for the full
# TPC-H SF 1 demo (6M rows, 3,001 partitions) override the command:
#   docker run -p 8501:8501 layout-advisor layout-advisor demo --port 8501 --address 0.0.0.0
CMD ["layout-advisor", "demo", "--sample", "--port", "8501", "--address", "0.0.0.0"]
