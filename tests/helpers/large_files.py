"""A table of large files, as real tables of 64-512 MB files have, scaled for CI: 4 files of
50,000 rows in row groups of 5,000 rows, written by pyarrow and added to an Iceberg table
created by pyiceberg with its default properties (not by the advisor), every file spanning
the whole range of ``ip``, the column the workload filters: all pruning happens inside
files, by row group. Row-group pruning is on (``prune_row_groups``), in the settings and in
the workspace's ``layout-advisor.toml`` (what the CLI reads)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from engine import api
from engine.core.config import Settings
from engine.table.formats import iceberg

FILES, ROWS, GROUP_ROWS, QUERIES = 4, 50_000, 5_000, 40
TABLE, IDENT = "big", "ns.big"


def large_table(settings: Settings, tmp_path: Path) -> Settings:
    """Build and register table ``big`` with ``QUERIES`` range queries of 1% of ``ip``;
    the settings with ``prune_row_groups`` on."""
    settings.home.mkdir(parents=True, exist_ok=True)
    (settings.home / "layout-advisor.toml").write_text(
        "prune_row_groups = true\ntarget_rows = 1000\nauth_delay_s = 0.01\n")
    settings = dataclasses.replace(settings, prune_row_groups=True)
    rng = np.random.default_rng(3)
    n = FILES * ROWS
    data = pa.table({"id": pa.array(np.arange(n), pa.int64()),
                     "ip": pa.array(rng.integers(0, 1_000_000, n), pa.int64()),
                     "bytes": pa.array(rng.integers(0, 10_000, n), pa.int64()),
                     "note": pa.array([f"row-{i % 97}" for i in range(n)])})
    folder = tmp_path / "big-files"
    folder.mkdir()
    paths = []
    for i in range(FILES):
        path = folder / f"big-{i}.parquet"
        pq.write_table(data.slice(i * ROWS, ROWS), path, row_group_size=GROUP_ROWS)
        paths.append(iceberg.file_uri(str(path)))
    catalog = iceberg.workspace_catalog(str(settings.home))
    catalog.create_namespace_if_not_exists("ns")
    catalog.create_table(IDENT, schema=data.schema).add_files(paths)
    api.register_iceberg(settings, TABLE, IDENT)
    qrng = np.random.default_rng(9)
    lines = []
    for i in range(QUERIES):
        lo = int(qrng.integers(0, 990_000))
        lines.append(f"-- ts: 2024-01-01T00:{i:02d}:00\nSELECT sum(bytes) FROM {TABLE} "
                     f"WHERE ip BETWEEN {lo} AND {lo + 10_000};")
    log = tmp_path / "big.sql"
    log.write_text("\n".join(lines))
    assert api.import_workload(settings, TABLE, str(log))["fragments"] == QUERIES
    return settings


def row_group_rows(path: str) -> list[int]:
    """The rows of each row group of the Parquet file ``path`` (a path or file:// URI)."""
    meta = pq.ParquetFile(path.replace("file://", "")).metadata
    return [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
