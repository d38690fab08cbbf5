"""The rewrite's files, through Hadoop's FileSystem (``file:``, ``hdfs:``, ``s3a:`` alike).

Nothing here assumes the driver and the executors share a disk except through the table
location: files are listed, moved and removed through the FileSystem the executors use.
"""

from __future__ import annotations

import os
import re
import shutil
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
    local = local_dir(out_dir)
    if local is not None:
        return _flatten_local(out_dir, local)
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


def local_dir(path: str) -> str | None:
    """The local file system path of ``path`` (a plain path or a ``file://`` URI), None
    for any other file system (``hdfs:``, ``s3a:``; ``file:/x`` is left to Hadoop too).

    >>> local_dir("/t/d"), local_dir("file:///t/d"), local_dir("s3a://b/d"), local_dir("file:/t")
    ('/t/d', '/t/d', None, None)
    """
    if path.startswith("file://"):
        return path[len("file://"):]
    return None if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", path) else path


def data_files(spark: "SparkSession", out_dir: str) -> list[str]:
    """:func:`list_data_files`, on a local disk by the operating system (no call into the
    JVM per file): the written files as Spark left them, in their ``__la_g=i/`` folders."""
    local = local_dir(out_dir)
    if local is None:
        return list_data_files(spark, out_dir)
    return _local_data_files(out_dir, local)


def _local_data_files(out_dir: str, root: str) -> list[str]:
    """The Parquet files under the local folder ``root`` (``out_dir``'s local path),
    spelled like ``out_dir``, sorted."""
    root = root.rstrip("/")
    base = out_dir.rstrip("/")
    found = []
    for dirpath, _, names in os.walk(root):
        for name in names:
            if name.endswith(".parquet") and not name.startswith(("_", ".")):
                found.append(base + os.path.join(dirpath, name)[len(root):])
    return sorted(found)


def _flatten_local(out_dir: str, root: str) -> list[str]:
    """:func:`flatten` on a local disk (``root`` is ``out_dir``'s local path), by the
    operating system: the same files, names and order, without the ~15 calls into the
    JVM per file that Hadoop's listing and rename take through py4j (seconds for a plan of many groups).
    Spark's own ``.crc`` files stay in the group directories, which are removed."""
    root = root.rstrip("/")
    base = out_dir.rstrip("/")
    moved = []
    for n, path in enumerate(_local_data_files(out_dir, root)):
        m = _GROUP_DIR.search(path)
        if not m:
            moved.append(path)
            continue
        target = group_file_name(out_dir, int(m.group(1)), n, path.rsplit("/", 1)[1])
        _rename_local(root + path[len(base):], root + target[len(base):], path, target)
        moved.append(target)
    for entry in os.scandir(root):
        if entry.is_dir(follow_symlinks=False) and entry.name.startswith("__la_g"):
            shutil.rmtree(entry.path)
    return sorted(moved)


def _rename_local(source: str, target: str, shown_source: str, shown_target: str) -> None:
    """Rename ``source`` to ``target`` on the local disk, refusing an existing target
    (``os.rename`` would replace it silently); the error names the paths as the user gave
    them (``shown_*``)."""
    if os.path.lexists(target):
        raise ExecutionError(f"could not move {shown_source} to {shown_target}: the target exists")
    os.rename(source, target)


def group_of_file(path: str) -> int | None:
    """The group an output file belongs to: from its flattened name, or before
    :func:`flatten` from Spark's ``__la_g=i`` folder (None for any other file).

    Example:
    >>> group_of_file("/t/data/plan3-b0/g12-00004-part-00000.parquet"), group_of_file("/x.parquet")
    (12, None)
    >>> group_of_file("/t/data/plan3-b0/__la_g=7/part-00001-c000.snappy.parquet")
    7
    """
    found = group_index(path)
    if found is None and (m := _GROUP_DIR.search(path)):
        return int(m.group(1))
    return found
