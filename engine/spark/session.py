"""The one SparkSession factory.

Spark is started only for work that touches data (ingest, exact statistics, rewrites,
footers of very many files); a cold start costs ~12 s here. Everything shared between the
driver and the executors goes through the table location, never a driver-local path, so
the same code runs on a standalone cluster.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING

from engine.core.config import Settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_LOCK = threading.Lock()


def get_spark(settings: Settings, app_name: str = "layout-advisor") -> "SparkSession":
    """Return the process's SparkSession, creating it on first use."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
    # Python workers (mapInArrow, UDFs) must use this interpreter: it has pyarrow and engine
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession  # pyspark: costly import, deferred to first use

    with _LOCK:
        active = SparkSession.getActiveSession()
        if active is not None:
            return active
        builder = (
            SparkSession.builder.master(settings.spark_master)
            .appName(app_name)
            .config("spark.driver.memory", settings.spark_driver_memory)
            .config("spark.sql.shuffle.partitions", str(settings.spark_shuffle_partitions))
            # the number of output files matters: never let AQE merge them
            .config("spark.sql.adaptive.coalescePartitions.enabled", "false")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.host", os.environ["SPARK_LOCAL_IP"])
            .config("spark.sql.parquet.compression.codec", "snappy")
            # INT96 timestamps carry no Parquet statistics: write microseconds so zonemaps work
            .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        )
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        return spark

