# Layout Advisor: the demo dashboard on the embedded default (Spark local, sample data).
#   docker build -t layout-advisor . && docker run -p 8501:8501 layout-advisor
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
CMD ["layout-advisor", "demo", "--port", "8501", "--address", "0.0.0.0"]
