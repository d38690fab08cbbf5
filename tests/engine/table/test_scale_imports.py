"""``import engine.api`` and planning a native table never load the lakehouse libraries:
pyiceberg + sqlalchemy + deltalake are costly at import (bench/planning/README.md), for every CLI call and every cold ``plan create``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.core.errors import DataFileError
from engine.table.store import TableStore

ROOT = Path(__file__).resolve().parents[3]
LAKE = ("pyiceberg", "sqlalchemy", "deltalake")

NATIVE_PLAN = """
import json, sys
from engine.api import analyze, create_table, pruning
from engine.core.config import load_settings
from engine.table.model import ColumnStats, Partition, TableSchema
from engine.table.store import TableStore
settings = load_settings({"home": sys.argv[1]})
schema = TableSchema((("a", "int"),))
parts = [Partition(f"/nowhere/p{i}.parquet", 10, 1000, {"a": ColumnStats(i * 10, i * 10 + 9, 0, 100)}, i)
         for i in range(5)]
TableStore(settings).create("t", schema=schema, partitions=parts, operation="register",
                            managed=False, location="/nowhere")
snap = TableStore(settings).current_snapshot("t")
zm = snap.zonemaps()
print(json.dumps({"partitions": len(zm), "lake": sorted(m for m in sys.modules
                                                          if m.split(".")[0] in %r)}))
""" % (LAKE,)


def _fresh(code: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         env=env, cwd=str(ROOT), timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_import_engine_api_loads_no_lakehouse_library() -> None:
    line = _fresh("import sys, json, engine.api, engine.cli\n"
                  f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {LAKE!r})))")
    assert json.loads(line) == []


def test_native_table_snapshot_and_zonemaps_load_no_lakehouse_library(tmp_path) -> None:
    got = json.loads(_fresh(NATIVE_PLAN, str(tmp_path)))
    assert got == {"partitions": 5, "lake": []}


def test_lake_formats_still_resolve_on_use(settings, tmp_path) -> None:
    """The lazy import still reaches the real format module: a folder without a Delta log
    is refused with its path in the message."""
    with pytest.raises(DataFileError, match=str(tmp_path)):
        TableStore(settings).register_delta("d", str(tmp_path))
