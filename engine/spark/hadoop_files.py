"""The rewrite's files, through Hadoop's FileSystem (``file:``, ``hdfs:``, ``s3a:`` alike).

Nothing here assumes the driver and the executors share a disk except through the table
location: files are listed, moved and removed through the FileSystem the executors use.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from engine.core.errors import ExecutionError
from engine.table.formats.partitioning import group_file_name, group_index

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Spark's ``partitionBy`` directory of a group: ``__la_g=<i>``
_GROUP_DIR = re.compile(r"__la_g=(\d+)")

def _hadoop_fs(spark: "SparkSession", path: str) -> tuple[Any, Any]:
    jvm = spark.sparkContext._jvm
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    return hpath.getFileSystem(conf), hpath


def file_path_spellings(spark: "SparkSession", path: str) -> list[str]:
    """How Spark's ``_metadata.file_path`` may spell ``path``: the qualified, URL-encoded
    URI, with and without an empty authority (``file:/x`` and ``file:///x``), with no
    Spark job and no call to the file system's server (makeQualified is local)."""
    fs, hpath = _hadoop_fs(spark, path)
    uri = fs.makeQualified(hpath).toUri()
    full = str(uri.toString())
    if uri.getAuthority() is None and uri.getScheme() is not None:
        return sorted({full, f"{uri.getScheme()}:{uri.getRawPath()}"})
    return [full]


def list_data_files(spark: "SparkSession", directory: str) -> list[str]:
    """Parquet files under ``directory`` (recursively), spelled like ``directory``."""
    fs, hpath = _hadoop_fs(spark, directory)
    if not fs.exists(hpath):
        return []
    root = str(fs.makeQualified(hpath).toUri().getPath()).rstrip("/")
    base = directory.rstrip("/")
    found = []
    it = fs.listFiles(hpath, True)
    while it.hasNext():
        p = it.next().getPath()
        name = str(p.getName())
        if not name.endswith(".parquet") or name.startswith(("_", ".")):
            continue
        rel = str(p.toUri().getPath())[len(root):]
        found.append(base + rel)
    return sorted(found)


def remove_dir(spark: "SparkSession", directory: str) -> None:
    """Delete a directory this run wrote (never one a snapshot references)."""
    fs, hpath = _hadoop_fs(spark, directory)
    if fs.exists(hpath):
        fs.delete(hpath, True)


def flatten(spark: "SparkSession", out_dir: str) -> list[str]:
    """Move the files Spark's ``partitionBy`` wrote into ``__la_g=i/[__la_part=v/]`` out
    of those directories, as ``g<i>-<n>-<name>``, and remove the directories.

    Hive-style directory names would make DuckDB, pyarrow datasets and Spark itself add
    the helper columns to the table when they read the files. A rename is a metadata
    operation on local disks and HDFS (a copy on object stores).
    """
    fs, _ = _hadoop_fs(spark, out_dir)
    jvm = spark.sparkContext._jvm
    moved = []
    for n, path in enumerate(list_data_files(spark, out_dir)):
        m = _GROUP_DIR.search(path)
        if not m:
            moved.append(path)
            continue
        target = group_file_name(out_dir, int(m.group(1)), n, path.rsplit("/", 1)[1])
        if not fs.rename(jvm.org.apache.hadoop.fs.Path(path), jvm.org.apache.hadoop.fs.Path(target)):
            raise ExecutionError(f"could not move {path} to {target}")
        moved.append(target)
    for st in fs.listStatus(jvm.org.apache.hadoop.fs.Path(out_dir)):
        if st.isDirectory() and str(st.getPath().getName()).startswith("__la_g"):
            fs.delete(st.getPath(), True)
    return sorted(moved)


def group_of_file(path: str) -> int | None:
    """The group a flattened output file belongs to (None for any other file).

    Example:
    >>> group_of_file("/t/data/plan3-b0/g12-00004-part-00000.parquet"), group_of_file("/x.parquet")
    (12, None)
    """
    return group_index(path)
