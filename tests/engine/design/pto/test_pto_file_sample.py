"""PTO's design sample read from whole files drawn at random (``load_file_sample``), not
from every row: its size, its determinism for a seed, and the files it reads."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.design.pto import data as pto_data
from engine.design.pto.data import load_file_sample, load_table
from engine.design.pto.optimizer import PtoConfig, design_rows, run_on_files
from engine.workload.model import Range, ScanFragment

TYPES = {"k": "int64", "s": "string"}


@pytest.fixture
def files(tmp_path):
    """Ten files of 100-109 rows (file i holds 100 + i rows; column k = its file number)."""
    paths, rows = [], []
    for i in range(10):
        n = 100 + i
        path = tmp_path / f"part-{i}.parquet"
        pq.write_table(pa.table({"k": np.full(n, i, dtype=np.int64),
                                 "s": [f"v{(i * 7 + j) % 13}" for j in range(n)]}), path)
        paths.append(str(path))
        rows.append(n)
    return paths, rows


def test_reads_the_shortest_prefix_of_a_seeded_file_order_past_the_rows_wanted(files):
    paths, rows = files
    sample = load_file_sample(paths, rows, ["k", "s"], TYPES, 5_000, rows_wanted=300, seed=4)
    read = sorted({int(k) for k in sample.data["k"]})
    # by hand: the same permutation the function draws, then files until > 300 rows
    order = np.random.default_rng([4, 2]).permutation(10)
    cum = np.cumsum(np.asarray(rows)[order])
    want = sorted(order[:int(np.argmax(cum > 300)) + 1].tolist())
    assert read == want
    assert sample.n_rows == sum(rows[i] for i in want) > 300
    assert sample.n_rows - max(rows[i] for i in want) <= 300  # one file fewer would not do
    assert sample.n_table == sum(rows) == 1045 and sample.table_bytes == 5_000
    # whole files, in the table's order
    assert np.all(np.diff(sample.data["k"]) >= 0)
    assert all((sample.data["k"] == i).sum() == rows[i] for i in want)


def test_same_seed_same_sample_another_seed_other_files(files):
    paths, rows = files
    a = load_file_sample(paths, rows, ["k", "s"], TYPES, 0, 300, seed=1)
    b = load_file_sample(paths, rows, ["k", "s"], TYPES, 0, 300, seed=1)
    assert np.array_equal(a.data["k"], b.data["k"]) and np.array_equal(a.data["s"], b.data["s"])
    others = {tuple(np.unique(load_file_sample(paths, rows, ["k"], TYPES, 0, 300, seed=s).data["k"]))
              for s in range(2, 8)}
    assert len(others) > 1


def test_a_table_no_larger_than_wanted_is_read_whole(files):
    paths, rows = files
    whole = load_table(paths, ["k", "s"], TYPES)
    sample = load_file_sample(paths, rows, ["k", "s"], TYPES, 0, rows_wanted=sum(rows), seed=0)
    assert sample.n_rows == whole.n_rows == sum(rows)
    assert np.array_equal(sample.data["k"], whole.data["k"])
    with pytest.raises(ValueError, match="10 paths but 9 row counts"):
        load_file_sample(paths, rows[:9], ["k"], TYPES, 0, 10)


def test_design_sample_is_the_right_size_and_deterministic(files):
    """The design's Bernoulli sample drawn from the files read keeps about
    ``max_design_rows`` rows (each row read with probability cap / rows read)."""
    paths, rows = files
    cap = 150
    sample = load_file_sample(paths, rows, ["k", "s"], TYPES, 0, pto_data.FILE_SAMPLE_FACTOR * cap, seed=0)
    assert sample.n_rows > 2 * cap
    config = PtoConfig(max_design_rows=cap)
    sizes = [design_rows(sample, PtoConfig(max_design_rows=cap, seed=s)).n_rows for s in range(40)]
    # binomial(n_read, cap / n_read): mean cap, sd < sqrt(cap)
    assert abs(np.mean(sizes) - cap) < 3 * np.sqrt(cap / 40) + 1
    assert all(abs(n - cap) < 5 * np.sqrt(cap) for n in sizes)
    first, again = design_rows(sample, config), design_rows(sample, config)
    assert np.array_equal(first.data["k"], again.data["k"])
    assert first.n_table == sum(rows)  # the table's cardinality is kept


def test_run_on_files_reads_only_the_sampled_files(files, monkeypatch):
    paths, rows = files
    opened = []
    real = pq.read_table
    monkeypatch.setattr(pto_data.pq, "read_table",
                        lambda path, **kw: opened.append(path) or real(path, **kw))
    frags = [ScanFragment(query_id=f"q{i}", table="t", boxes=({"k": Range(i % 10, i % 10 + 2)},),
                          columns=("k",), ts=f"2024-01-01T00:00:{i:02d}") for i in range(12)]
    run = run_on_files(paths, dict(TYPES), 50_000, frags, PtoConfig(max_design_rows=100, label="skip"),
                       file_rows=rows)
    assert 2 <= len(opened) < len(paths)  # > 200 rows: 2-3 files of about 100
    assert run.sample.n_table == sum(rows)
    opened.clear()
    run_on_files(paths, dict(TYPES), 50_000, frags, PtoConfig(max_design_rows=100, label="skip"))
    assert len(opened) == len(paths)  # without the files' row counts: every file, as before
