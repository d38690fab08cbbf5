"""``plan verify`` replays a window of repeated dashboard queries once per distinct scan:
DuckDB runs each distinct predicate once and its bytes and seconds count as often as the
window repeats it, so the totals equal running every query (a DuckDB scan of the same
files reads the same bytes each time) at the cost of one query per panel."""

from __future__ import annotations

import datetime as dt

import pyarrow.parquet as pq

from engine.spark import verify_sample
from engine.spark.verify_sample import distinct_fragments, duck_window, replayed_scans
from engine.workload.model import Range, ScanFragment
from plan_helpers import EPOCH, lineitem_arrow


def _frag(qid: str, lo_day: int) -> ScanFragment:
    box = {"l_shipdate": Range(EPOCH + dt.timedelta(days=lo_day),
                               EPOCH + dt.timedelta(days=lo_day + 60))}
    return ScanFragment(qid, "lineitem", (box,), ("l_shipdate", "l_quantity"))


def test_repeated_scans_run_once_and_count_as_often_as_they_occur(tmp_path, monkeypatch):
    data = lineitem_arrow(4000)
    paths = []
    for i in range(4):
        path = tmp_path / f"part-{i}.parquet"
        pq.write_table(data.slice(i * 1000, 1000), path)
        paths.append(str(path))
    panel, other = _frag("a", 900), _frag("b", 2000)
    window = [panel, _frag("c", 900), other, _frag("d", 900), _frag("e", 900), _frag("f", 900)]
    assert [(f.query_id, n) for f, n in distinct_fragments(window)] == [("a", 5), ("b", 1)]

    runs = []
    real = verify_sample.DuckRunner.count

    def counted(self, paths_, fragment, columns=None, profile=True):
        runs.append(fragment.query_id)
        return real(self, paths_, fragment, columns, profile)

    monkeypatch.setattr(verify_sample.DuckRunner, "count", counted)
    nbytes, _ = duck_window(paths, window)
    assert runs == ["a", "b"]  # one DuckDB query per distinct scan, not six
    one_panel, _ = duck_window(paths, [panel])
    one_other, _ = duck_window(paths, [other])
    assert one_panel > 0 and nbytes == 5 * one_panel + one_other


def test_past_the_limit_the_most_frequent_scans_stand_for_the_window(tmp_path):
    data = lineitem_arrow(2000)
    path = tmp_path / "part.parquet"
    pq.write_table(data, path)
    panel, other = _frag("a", 900), _frag("b", 2000)
    window = [other, panel, _frag("c", 900), _frag("d", 900), _frag("e", 900), _frag("f", 900)]
    scans, coverage = replayed_scans(window, limit=1)
    assert [(f.query_id, n) for f, n in scans] == [("a", 5)] and coverage == 5 / 6
    assert replayed_scans(window, limit=2)[1] == 1.0
    one_panel, _ = duck_window([str(path)], [panel])
    bounded, _ = duck_window([str(path)], window, limit=1)
    assert abs(bounded - 6 * one_panel) < 1e-6 * bounded  # five panels stand for six queries
