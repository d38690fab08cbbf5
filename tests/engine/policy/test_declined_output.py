"""A proposal the output check declines (the shape the executor writes would not read less)
is explained by the check, whatever the policy: DD's "no plan" says why the output cannot
deliver, not which partitions DD would have sorted."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from engine import api
from engine.cli import main
from engine.core.config import load_settings
from engine.workload.store import WorkloadStore
from rowgroup_helpers import rowgroup_table, xy_fragment

MERGED = ("the output cannot deliver the saving: table target: the table's target rows = 100 "
          "rows writes 8 files as 1; sorting rows inside a file saves nothing at file level")


@pytest.fixture
def home(tmp_path):
    """8 files of 10 rows, each spanning x 0..79 (file i holds i, i + 8, ..., i + 72: depth 8),
    one row group each, at file level; the table's target of 100 rows writes any group of
    them as one file, which every query of the window reads whole."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "layout-advisor.toml").write_text("prune_row_groups = false\n")
    settings = load_settings({"home": str(home)}, environ={})
    files = [(pa.table({"x": x, "y": x}), 10) for x in (i + 8.0 * np.arange(10) for i in range(8))]
    snap = rowgroup_table(settings, "t", files)
    WorkloadStore(settings).append(
        "t", [xy_fragment(f"q{j}", {"x": (5.0 * j, 5.0 * j + 3)}) for j in range(14)], snap.schema)
    return home


def test_dd_declined_by_the_output_check_says_why(home, capsys):
    settings = load_settings({"home": str(home)}, environ={})
    rec = api.preview_plan(settings, "t", "dd")
    assert rec.status == "no-action"
    assert rec.reason.startswith(MERGED), rec.reason
    assert rec.explanation["why"].startswith(MERGED[:1].upper() + MERGED[1:]), rec.explanation
    assert "DD: the 8 deepest" not in rec.explanation["why"]
    assert "smaller target file size" in rec.explanation["what_would_change"]
    # WAIR's proposal on the same table (alpha low enough to propose) is declined alike
    wair = api.preview_plan(settings, "t", "wair", {"alpha": 0.001})
    assert wair.reason == rec.reason and wair.explanation == rec.explanation

    assert main(["--home", str(home), "plan", "create", "t", "--policy", "dd"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("no plan for t (dd): The output cannot deliver the saving: table "
                             "target: the table's target rows = 100 rows writes 8 files as 1;"), out
    assert out[1].startswith("  An output the window's queries can skip more of"), out
    assert len(out) == 2, out  # the reason is not printed a second time
    assert api.list_plans(settings, "t") == []
