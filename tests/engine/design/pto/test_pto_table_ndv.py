"""The partition guardrail (10 <= NDV <= 4,000, PTO section 4.1.3) and the human expert's
partition count (Algorithm 4) use the table's distinct counts, also when the design runs
on a sample of ``max_design_rows`` rows: a sample of 1,000 rows holds at most 1,000 of a
column's 5,000 values."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from engine.design.pto.baselines import human_expert
from engine.design.pto.data import TableData
from engine.design.pto.optimizer import PtoConfig, run, run_on_files
from engine.workload.model import Range, ScanFragment

N = 20_000
TYPES = {"wide": "int", "narrow": "int"}


def columns() -> dict[str, np.ndarray]:
    """``wide``: 5,000 values (over the 4,000 cap); ``narrow``: 3,000 values (inside it)."""
    i = np.arange(N)
    return {"wide": (i * 7919 % 5_000).astype(np.int64), "narrow": (i * 104_729 % 3_000).astype(np.int64)}


def fragments() -> list[ScanFragment]:
    out = []
    for i in range(12):
        col = "wide" if i % 2 else "narrow"
        out.append(ScanFragment(f"q{i}", "t", ({col: Range(100 * i, 100 * i + 50)},), (col,),
                                ts=f"2024-01-01T00:00:{i:02d}"))
    return out


CONFIG = PtoConfig(max_design_rows=1_000, label="skip", seed=3)


def test_in_memory_design_sample_uses_the_tables_distinct_counts():
    table = TableData({c: v.astype(np.float64) for c, v in columns().items()}, dict(TYPES), N,
                      table_bytes=4_000_000)
    r = run(table, fragments(), CONFIG)
    assert r.design_rows < 1_200  # the design ran on a sample
    assert r.stats.ndv == {"wide": 5_000, "narrow": 3_000}
    assert r.partitions == ["narrow", None]  # 5,000 values fail the guardrail
    assert human_expert(r).labelled == 2 * len(r.sorts.schemes)  # Algorithm 4 per partition candidate


def test_file_sample_counts_distinct_values_over_every_file(tmp_path):
    data = columns()
    paths, rows = [], []
    for k in range(20):
        part = {c: v[k * 1_000:(k + 1) * 1_000] for c, v in data.items()}
        path = tmp_path / f"part-{k}.parquet"
        pq.write_table(pa.table(part), path)
        paths.append(str(path))
        rows.append(1_000)
    r = run_on_files(paths, dict(TYPES), 4_000_000, fragments(), CONFIG, file_rows=rows)
    assert r.sample.n_table == N and r.design_rows < 1_200
    assert r.stats.ndv["wide"] == 5_000 and r.stats.ndv["narrow"] == 3_000
    assert r.partitions == ["narrow", None]
