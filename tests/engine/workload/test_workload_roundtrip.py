"""The generator's SQL log, parsed back, gives exactly the generator's fragments (all presets:
dates, timestamps, floats, strings), and survives the import path and the store."""

from __future__ import annotations

import pytest

from engine.workload.importer import extract_entries, read_log
from engine.scenarios.presets import build_scenario
from engine.workload.sql.extract import extract_fragments


@pytest.mark.parametrize("preset", ["tpch", "dsb", "mirrors"])
def test_generated_sql_parses_back_to_the_same_boxes(preset: str, tmp_path) -> None:
    sc = build_scenario(preset, rows=20_000, seed=3, overrides={"periods": 3, "batches_per_period": 2})
    frags = sc.fragments()
    assert frags
    for f in frags:
        [g] = extract_fragments(f.sql, sc.table, sc.schema, f.query_id)
        assert g.boxes == f.boxes, f.sql
        assert set(g.columns) == set(f.columns), f.sql

    log = sc.to_sql_log(tmp_path / "log.jsonl")
    parsed, report = extract_entries(read_log(str(log)), sc.table, sc.schema, str(log), strict=True,
                                     sql_file=False)
    assert report.statements == len(frags) and not report.skipped
    assert [(g.query_id, g.ts, g.boxes) for g in parsed] == [(f.query_id, f.ts, f.boxes) for f in frags]
