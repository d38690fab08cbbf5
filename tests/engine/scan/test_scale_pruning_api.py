"""``iter_pruning`` streams the pruning report: one object per stored query,
the same as ``pruning`` and as the dense reference evaluator's counts."""

from __future__ import annotations

import types

import numpy as np
import pytest

from engine import api
from engine.core.logical_types import decode_scalar
from engine.scan.pruning import analyze_fragment_dense
from engine.table.model import ColumnStats, Partition
from engine.table.store import TableStore
from engine.workload.store import WorkloadStore
from tests.helpers.scale_scenario import SCHEMA, window, zonemaps


@pytest.fixture
def workspace(settings, tmp_path):
    zm = zonemaps(120)
    parts = []
    for i in range(len(zm)):
        stats = {}
        for name, ltype in SCHEMA.columns:
            c = zm.column(name)
            lo = decode_scalar(ltype, c.lo[i]) if c.valid[i] else None
            hi = decode_scalar(ltype, c.hi[i]) if c.valid[i] else None
            stats[name] = ColumnStats(lo, hi, None if c.null_count[i] < 0 else int(c.null_count[i]),
                                      int(c.compressed_bytes[i]))
        parts.append(Partition(f"{tmp_path}/p{i:04d}.parquet", int(zm.rows[i]), int(zm.bytes[i]), stats, i))
    TableStore(settings).create("t", schema=SCHEMA, partitions=parts, operation="register",
                                managed=False, location=str(tmp_path))
    frags = window(60)
    WorkloadStore(settings).replace("t", frags, SCHEMA)
    return settings


def test_iter_pruning_streams_the_same_records(workspace) -> None:
    stream = api.iter_pruning(workspace, "t", selectivity=True)
    assert isinstance(stream, types.GeneratorType)
    first = next(stream)
    rest = list(stream)
    whole = api.pruning(workspace, "t", selectivity=True)
    assert [first, *rest] == whole and len(whole) == 60
    snap = TableStore(workspace).current_snapshot("t")
    zm = snap.zonemaps()
    frags = WorkloadStore(workspace).fragments("t")
    for rec, frag in zip(whole, frags):
        ref = analyze_fragment_dense(zm, frag)
        assert rec["query_id"] == frag.query_id
        assert rec["scanned"] == int(ref.scanned.sum())
        assert rec["fully_covered"] == int(ref.fully_covered.sum())
        assert rec["boundary"] == int(ref.boundary.sum())
        assert rec["pruned"] == len(zm) - rec["scanned"]
        expect = float((ref.utilization * zm.rows).sum() / zm.rows.sum())
        assert rec["selectivity"] == pytest.approx(expect, rel=1e-12)
    assert any(0 < r["scanned"] < len(zm) for r in whole)
    assert np.mean([r["boundary"] for r in whole]) > 0
