"""The Partitions page's table decodes zonemap bounds in bulk past
``views.tables.BULK_ROWS`` partitions; the values shown are the same as the one-by-one decode."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from app import views
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps

SCHEMA = TableSchema((("d", "date"), ("i", "int"), ("s", "string"), ("f", "float"),
                      ("t", "timestamp"), ("b", "bool")))


def _zonemaps(n: int) -> ZoneMaps:
    def stats(k: int, lo, hi) -> ColumnStats:
        return ColumnStats(None, None, 0, 5) if k % 4 == 0 else ColumnStats(lo, hi, 0, 5)
    parts = [Partition(f"/data/t/p{k}.parquet", 10, 100, {
        "d": stats(k, dt.date(2020, 1, 1) + dt.timedelta(days=k), dt.date(2021, 1, 1)),
        "i": stats(k, -k, k + 3), "s": stats(k, f"a{k}", "b"), "f": stats(k, k / 2, k),
        "t": stats(k, dt.datetime(2020, 1, 1, 3, 0, k), dt.datetime(2020, 1, 2)),
        "b": stats(k, False, True)}, k) for k in range(n)]
    return ZoneMaps.from_partitions(SCHEMA, parts)


@pytest.mark.parametrize("column", SCHEMA.names)
def test_bulk_decode_shows_the_same_values(monkeypatch, column: str) -> None:
    zm = _zonemaps(9)
    clus = {"depths": np.arange(9.0), "overlaps": np.zeros(9)}
    one_by_one = views.partition_frame(zm, column, clus)
    monkeypatch.setattr(views.tables, "BULK_ROWS", 3)
    bulk = views.partition_frame(zm, column, clus)
    assert bulk["file"].tolist() == [f"p{k}.parquet" for k in range(9)]
    for side in ("min", "max"):
        want = one_by_one[f"{side} {column}"].tolist()
        got = bulk[f"{side} {column}"].tolist()
        assert [pd.isna(g) for g in got] == [pd.isna(w) for w in want]
        for g, w in zip(got, want):
            if not pd.isna(w):
                g = g.date() if isinstance(w, dt.date) and not isinstance(w, dt.datetime) else g
                assert g == w


def test_ep_regions_draws_the_deepest_files_past_the_limit(monkeypatch) -> None:
    from app import charts
    monkeypatch.setattr(charts.partitions, "EP_REGIONS_SHOWN", 3)
    files = [{"ep_file": i, "min": i, "max": i + 2, "partition_count": 2, "average_depth": 1.0,
              "depth": d} for i, d in enumerate([1, 9, 2, 8, 7, 3, 1])]
    fig = charts.ep_regions(files, {"ep_files": [6], "start": 6, "end": 7}, "int", "k")
    drawn = sorted({y for trace in fig.data for y in trace.y if y is not None})
    assert drawn == [1, 3, 4, 6]  # depths 9, 8, 7 and the seed file 6
    assert "(4 of 7 EP files: the deepest" in fig.layout.title.text
