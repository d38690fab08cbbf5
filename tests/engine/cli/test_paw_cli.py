"""``layout-advisor design paw`` and ``plan create --policy paw`` from the command line, without
Spark: every PAW parameter reachable (δ, b_min, α, Ψ, refinement, N_mbr), and a
bad one refused in one line naming the argument, exit code 2, no traceback."""

from __future__ import annotations

import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.cli import main
from engine.table.footers import read_partitions
from engine.table.store import TableStore
from engine.workload.model import Range, ScanFragment
from engine.workload.store import WorkloadStore


def _exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code)


@pytest.fixture
def table(settings):
    """2,000 rows, x = 0..1999 (y a shuffle of it) in 4 files; 6 queries on x and y."""
    store = TableStore(settings)
    root = store.managed_location("t")
    os.makedirs(os.path.join(root, "data"), exist_ok=True)
    rng = np.random.default_rng(0)
    x = np.arange(2000.0)
    y = rng.permutation(x)
    paths = []
    for i in range(4):
        path = os.path.join(root, "data", f"part-{i}.parquet")
        pq.write_table(pa.table({"x": x[i::4], "y": y[i::4]}), path)
        paths.append(path)
    schema, parts = read_partitions(paths)
    snap = store.create("t", schema=schema, partitions=parts, operation="create", target_rows=500)
    frags = [ScanFragment(f"q{i}", "t", ({"x": Range(100.0 * i, 100.0 * i + 99), "y": Range(0.0, 999.0)},), ("x",),
                          ts=f"2024-01-01T00:0{i}:00") for i in range(6)]
    WorkloadStore(settings).append("t", frags, snap.schema)
    return str(settings.home)


def test_design_paw_refuses_bad_arguments_in_one_line(table, capsys):
    for bad, line in ((["--delta", "-1"], "argument --delta: -1 must be at least 0"),
                      (["--delta", "lots"], "argument --delta: 'lots' is not a number"),
                      (["--delta", "inf"], "argument --delta: 'inf' is not a finite number"),
                      (["--delta", "1.5"], "argument --delta: 1.5 must be at most 1"),
                      (["--b-min-rows", "0"], "argument --b-min-rows: 0 must be at least 1"),
                      (["--b-min-rows", "1.5"], "argument --b-min-rows: '1.5' is not an integer"),
                      (["--alpha", "1"], "argument --alpha: 1 must be greater than 1"),
                      (["--alpha", "nan"], "argument --alpha: 'nan' is not a finite number"),
                      (["--psi", "bogus"], "argument --psi: invalid choice: 'bogus'"),
                      (["--n-mbr", "-1"], "argument --n-mbr: -1 must be at least 0"),
                      (["--window", "0"], "argument --window: 0 must be at least 1")):
        assert _exit_code(["--home", table, "design", "paw", "t", *bad]) == 2, bad
        err = capsys.readouterr().err
        assert line in err and "Traceback" not in err, (bad, err)
    for command in (["design", "paw", "t"], ["plan", "create", "t", "--policy", "paw"]):
        assert _exit_code(["--home", table, *command, "--b-min-rows", "2001"]) == 2  # the table holds 2,000
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert line.endswith("b_min_rows 2,001 exceeds the table's 2,000 rows: no layout can hold that many "
                             "rows in every partition"), line
    assert _exit_code(["--home", table, "design", "paw", "nosuch"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("layout-advisor: error: no table named 'nosuch' in ") and line.endswith("; tables are: t")


def test_delta_above_one_is_refused_at_every_entry(table, capsys):
    """δ is a fraction of each column's domain: above 1 every q* already covers the whole
    domain, so 1.5 must not be answered as 1. The CLI's two commands, the API and
    the policy refuse it naming the argument; δ = 1 itself stays accepted."""
    from engine import api
    from engine.core.config import load_settings
    from engine.core.errors import InvalidParameterError
    from engine.policy.paw import PawPolicy

    assert _exit_code(["--home", table, "plan", "create", "t", "--policy", "paw", "--delta", "1.01"]) == 2
    err = capsys.readouterr().err  # argparse's usage, then the one error line
    assert err.strip().splitlines()[-1].endswith("error: argument --delta: 1.01 must be at most 1"), err
    assert "Traceback" not in err
    settings = load_settings({"home": table})
    for entry in (lambda: api.design_paw(settings, "t", delta=1.5),
                  lambda: api.preview_plan(settings, "t", "paw", {"delta": "2"}),
                  lambda: PawPolicy(delta=1.5)):
        with pytest.raises(InvalidParameterError, match=r"^delta must be a fraction of each column's "
                                                         r"domain, at most 1, got "):
            entry()
    assert main(["--home", table, "design", "paw", "t", "--delta", "1", "--b-min-rows", "500", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["design"]["summary"]["delta"] == 1.0


def test_refinement_and_alpha_are_reachable_from_the_cli(table, capsys):
    """With refinement every rectangular partition holds [b_min, 2·b_min) sampled rows; without,
    the tree keeps the large leaves PAW's splits leave (§IV-E)."""
    def design(*flags: str) -> dict:
        assert main(["--home", table, "design", "paw", "t", "--delta", "0", "--b-min-rows", "100",
                     *flags, "--json"]) == 0
        return json.loads(capsys.readouterr().out)["design"]

    refined, plain = design("--refine"), design("--no-refine")
    b_min = refined["summary"]["b_min"]
    assert b_min == 100  # the whole table is the sample here
    assert all(b_min <= lf["rows"] < 2 * b_min for lf in refined["leaves"] if not lf["irregular"])
    assert max(lf["rows"] for lf in plain["leaves"]) >= 2 * b_min
    assert len(refined["leaves"]) > len(plain["leaves"])
    assert design("--alpha", "5")["summary"]["alpha"] == 5.0
    assert main(["--home", table, "plan", "create", "t", "--policy", "paw", "--no-refine", "--b-min-rows", "100",
                 "--json"]) == 0
    created = json.loads(capsys.readouterr().out)
    assert created["params"]["refine"] is False
