"""The unit the pruning figures count, named wherever they are shown: files, charged by the
row groups met where files hold several (row-group level), or whole files."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from engine import api
from engine.cli import main
from engine.core.config import load_settings
from engine.scan.units import count_unit
from engine.workload.store import WorkloadStore
from rowgroup_helpers import rowgroup_table, xy_fragment

ROW_GROUPS = "unit: files, charged by the row groups met (files hold 10 row groups each)"
FILE_LEVEL = "unit: files (a scanned file is read whole; prune_row_groups is off)"


@pytest.mark.parametrize("files,start,total,level,expected", [
    (4, [0, 10, 20, 30, 40], 40, True, ROW_GROUPS),
    (4, [0, 10, 20, 30, 40], 40, False, FILE_LEVEL),
    (3, [0, 4, 4, 12], 13, True, "unit: files, charged by the row groups met (2 of 3 files "
                                 "hold 4 to 8 row groups, 6 on median, the others one)"),
    (3, None, 3, True, "unit: files (each holds one row group)"),
], ids=["uniform", "file-level", "mixed", "one-each"])
def test_the_label_names_the_unit(files, start, total, level, expected):
    unit = count_unit(files, None if start is None else np.array(start), total, level)
    assert unit.label() == expected
    assert unit.row_groups == (expected == ROW_GROUPS or "row groups met" in expected)


def _home(tmp_path, row_groups: bool):
    """Two files of 30 rows in row groups of 10 (x 0..29 and 100..129), two queries."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "layout-advisor.toml").write_text(
        f"target_rows = 30\nprune_row_groups = {'true' if row_groups else 'false'}\n")
    settings = load_settings({"home": str(home)}, environ={})
    a = np.arange(30, dtype=float)
    snap = rowgroup_table(settings, "t", [(pa.table({"x": a, "y": a}), 10),
                                          (pa.table({"x": a + 100, "y": a}), 10)])
    WorkloadStore(settings).append("t", [xy_fragment("in", {"x": (12.0, 15.0)}),
                                         xy_fragment("far", {"x": (105.0, 106.0)})], snap.schema)
    return home, settings


def test_pruning_unit_follows_the_setting_and_the_cli_prints_it(tmp_path, capsys):
    home, settings = _home(tmp_path, row_groups=True)
    unit = api.pruning_unit(settings, "t")
    assert (unit.unit, unit.files, unit.total, unit.multi_files, unit.most) == ("row groups", 2, 6, 2, 3)
    label = "unit: files, charged by the row groups met (files hold 3 row groups each)"
    assert unit.label() == label
    assert api.pruning_unit(settings, "t", row_groups=False).label() == FILE_LEVEL

    assert main(["--home", str(home), "pruning", "t"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "row-group level: 2 of 12 row groups read" in lines[-2]
    assert lines[-1] == label
    assert main(["--home", str(home), "pruning", "t", "--files"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == FILE_LEVEL


def test_the_workload_overview_and_partitions_pages_name_the_unit(tmp_path, monkeypatch):
    from app_open import open_page

    home, _ = _home(tmp_path, row_groups=True)
    monkeypatch.setenv("LAYOUT_ADVISOR_HOME", str(home))
    label = "Unit: files, charged by the row groups met (files hold 3 row groups each)."
    at = open_page("workload", "t")
    captions = [c.value for c in at.caption]
    assert label in captions  # under the one query's counts
    assert any(c.endswith(" " + label) for c in captions)  # the all-queries table's caption

    at = open_page("overview", "t")  # beside the average pruning rate
    assert any(c.value.endswith(" " + label) for c in at.caption)

    at = open_page("partitions", "t")
    at.text_input(key="partitions_where").input("x between 12 and 15").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "unit: files (files hold 3 row groups each; readers skip row groups inside them too)" \
        in [c.value for c in at.caption]
