"""The write's output tree flattened on a local disk by the operating system gives exactly
what Hadoop's listing and renames give, without the py4j calls per file that cost
many-group plans."""

from __future__ import annotations

import os
import shutil

import pytest

from engine.spark import hadoop_files

pytestmark = pytest.mark.spark


def _tree(root):
    """What a partitionBy write leaves: group folders (one with a physical partition
    below), Hadoop's .crc files, a marker, and a file outside any group."""
    files = ["__la_g=0/part-00001-a.c000.snappy.parquet", "__la_g=0/part-00000-b.c000.snappy.parquet",
             "__la_g=12/__la_part=eu/part-00003-c.c000.snappy.parquet",
             "__la_g=3/part-00002-d.c000.snappy.parquet", "loose.parquet"]
    for rel in files + ["__la_g=0/.part-00001-a.c000.snappy.parquet.crc", "_SUCCESS",
                        "__la_g=3/_temporary_marker"]:
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), "wb") as handle:
            handle.write(rel.encode())


def _contents(root):
    out = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            with open(os.path.join(dirpath, name), "rb") as handle:
                out[os.path.relpath(os.path.join(dirpath, name), root)] = handle.read()
    return out


@pytest.mark.parametrize("spelling", ["plain", "file://"])
def test_local_flatten_equals_hadoops(spark, tmp_path, monkeypatch, spelling):
    local, hadoop = str(tmp_path / "local"), str(tmp_path / "hadoop")
    _tree(local)
    _tree(hadoop)
    prefix = "file://" if spelling == "file://" else ""
    got = hadoop_files.flatten(spark, prefix + local)
    monkeypatch.setattr(hadoop_files, "local_dir", lambda path: None)  # Hadoop's way
    want = hadoop_files.flatten(spark, prefix + hadoop)
    assert [p[len(prefix + local):] for p in got] == [p[len(prefix + hadoop):] for p in want]
    assert [os.path.basename(p) for p in got] == [
        "g0-00000-part-00000-b.c000.snappy.parquet", "g0-00001-part-00001-a.c000.snappy.parquet",
        "g12-00002-part-00003-c.c000.snappy.parquet", "g3-00003-part-00002-d.c000.snappy.parquet",
        "loose.parquet"]
    # the same files with the same bytes; Hadoop moves a .crc with its file (the executor
    # deletes those next: writing.drop_checksums), the OS way leaves none
    ours, theirs = _contents(local), _contents(hadoop)
    assert ours == {k: v for k, v in theirs.items() if not k.startswith(".")}
    assert ".g0-00001-part-00001-a.c000.snappy.parquet.crc" in theirs
    assert not any(k.startswith("__la_g") for k in ours)
    assert ours["g12-00002-part-00003-c.c000.snappy.parquet"] == \
        b"__la_g=12/__la_part=eu/part-00003-c.c000.snappy.parquet"


def test_local_flatten_refuses_to_replace_a_file(spark, tmp_path):
    root = str(tmp_path / "out")
    _tree(root)
    shutil.copy(os.path.join(root, "loose.parquet"),
                os.path.join(root, "g0-00000-part-00000-b.c000.snappy.parquet"))
    with pytest.raises(Exception, match="could not move .* the target exists"):
        hadoop_files.flatten(spark, root)
