"""The PAW replication script's partition-size setting (G6, bench/README_paw.md)."""

from __future__ import annotations

import sys

import pytest

from bench import paw_replication as pr


def test_b_share_sets_the_precise_runs_b_min():
    """LB_b(q) = max(|q ∩ D|, b_min) for a query that matches rows: with b_min = 5% of 4,000
    rows (200), the mean LB_b over the non-empty queries is at least 200."""
    small, large = (pr.precise_run(4_000, 0, "osm", "uniform", 0.01, b_share=s) for s in (pr.B_SHARE, 0.05))
    assert (small["b_share"], large["b_share"]) == (pr.B_SHARE, 0.05)
    assert large["lb_b"] >= 200 * (1 - large["empty_queries"]) - 1e-9
    assert large["lb_b"] > small["lb_b"]


def test_b_share_out_of_range_is_one_clear_line(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["paw_replication.py", "--b-share", "0.7", "--only", "precise"])
    with pytest.raises(SystemExit) as exc:
        pr.main()
    assert exc.value.code == 2
    assert "--b-share must be in (0, 0.5), got 0.7" in capsys.readouterr().err


def test_g6_runs_at_osms_block_ratio_with_the_specs_ratio_beside():
    """OSM: 100M points of 2 doubles = 1.6 GB; one 128 MB block of it is 8% of the rows."""
    assert pr.OSM_B_SHARE == pytest.approx(0.08)
    assert pr.PRECISE_B_SHARES == (pr.OSM_B_SHARE, pr.B_SHARE) and pr.B_SHARE == 0.00167


def test_precise_b_shares_out_of_range_is_one_clear_line(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["paw_replication.py", "--precise-b-shares", "0.08", "0.9", "--only", "precise"])
    with pytest.raises(SystemExit) as exc:
        pr.main()
    assert exc.value.code == 2
    assert "--precise-b-shares: each share must be in (0, 0.5)" in capsys.readouterr().err
