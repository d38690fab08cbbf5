"""``layout-advisor demo --large-files``: lineitem as a few large files in row groups (the
sample: 4 files of 49,586 rows in row groups of 4,959), counted with row-group pruning (on by
default: nothing is written into the workspace's config file), and plan previews (CLI and the Recommendation page) that say what
the output does to the files."""

from __future__ import annotations

import re

import pytest

from engine.cli import main
from engine.core.config import load_settings
from engine.table.store import TableStore
from large_files import row_group_rows


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("demo-large") / "home"
    mp = pytest.MonkeyPatch()
    mp.setenv("LAYOUT_ADVISOR_DEMO_SECRET", "a demo secret for the tests")
    try:
        assert main(["--home", str(home), "demo", "--sample", "--large-files", "--no-ui"]) == 0
    finally:
        mp.undo()
    return home


def test_the_sample_becomes_four_large_files_in_row_groups(demo_home, capsys):
    settings = load_settings({"home": str(demo_home)}, environ={})
    assert settings.prune_row_groups is True  # the default: the demo writes no setting for it
    config = demo_home / "layout-advisor.toml"
    assert not config.exists() or "prune_row_groups" not in config.read_text()
    snap = TableStore(settings).current_snapshot("lineitem")
    files = sorted(snap.partitions, key=lambda p: p.path)
    assert [p.rows for p in files] == [49_586] * 4  # 198,344 rows
    for p in files:
        groups = row_group_rows(p.path)
        assert groups == [4_959] * 9 + [49_586 - 9 * 4_959], groups


def test_plan_preview_on_the_large_files_demo_explains_the_output(demo_home, capsys):
    capsys.readouterr()
    assert main(["--home", str(demo_home), "plan", "preview", "lineitem"]) == 0
    out = capsys.readouterr().out
    assert "row groups of 4,959 rows each (input granularity: the median input row group holds 4,959 rows)" in out
    note = [line for line in out.splitlines() if line.startswith("  output: ")]
    assert note and note[0].startswith("  output: the files keep their size: 2 files of 49,586 rows, "
                                       "in row groups of 4,959 rows;"), out


def test_a_design_whose_output_reads_more_says_so(demo_home, capsys):
    """PTO's design here (files and row groups of 1 MB, one row group per file) would read
    more than the table's row groups in ingestion order do: no plan, and the answer says
    what the written shape would read against what the table reads today."""
    capsys.readouterr()
    assert main(["--home", str(demo_home), "plan", "preview", "lineitem", "--policy", "pto"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("no plan for lineitem (pto): The output cannot deliver the saving: at "
                          "the written shape the window would read "), out
    written, today = re.search(r"would read ([\d.]+) MiB from the rewritten files instead of "
                               r"([\d.]+) MiB", out).groups()
    assert float(written) > float(today), out


def test_large_files_with_the_spark_writer_is_refused_in_one_line(tmp_path, capsys):
    code = main(["--home", str(tmp_path / "h"), "demo", "--sample", "--large-files",
                 "--writer", "spark", "--no-ui"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "--large-files builds lineitem with the arrow writer: drop --writer spark" in err[0]


def test_the_recommendation_page_says_the_files_keep_their_size(demo_home, monkeypatch):
    import app_open

    monkeypatch.setenv("LAYOUT_ADVISOR_HOME", str(demo_home))
    at = app_open.open_page("recommendation", "lineitem", 180)
    notes = [i.value for i in at.info if "keep their size" in i.value]
    assert len(notes) == 1, [i.value for i in at.info]
    assert notes[0].startswith("The files keep their size: 2 files of 49,586 rows, in row groups "
                               "of 4,959 rows; the rows are re"), notes[0]
