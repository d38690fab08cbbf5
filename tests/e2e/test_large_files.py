"""Tables of large files (tests/helpers/large_files.py: 4 files of 50,000 rows in row groups
of 5,000, an Iceberg table made by pyiceberg with its default properties, unclustered on
``ip``): WAIR, DD, PAW and PTO each propose a rewrite whose predicted saving is counted by
row group and positive; the preview says that the output keeps the files and where the
saving comes from; WAIR's run writes the model's row groups and realizes its prediction.

Why the numbers prove row-group pricing: before the rewrite every row group spans the whole
``ip`` range, so every query reads everything at either unit. Counted by whole files, a
rewrite that keeps 4 files saves at most 3/4 of that (a query reads at least one file);
only row groups of 5,000 rows (40 in the table) let a 1% range query skip more."""

from __future__ import annotations

import dataclasses

import pytest

from engine import api
from engine.cli import main
from engine.policy.base import PlanGroup
from engine.policy.output_check import check_output
from engine.scan import rowgroups
from engine.table.store import TableStore
from large_files import FILES, GROUP_ROWS, QUERIES, ROWS, TABLE, large_table, row_group_rows
from security_helpers import sign_in

KEEPS_FILES = ("the files keep their size: 4 files of 50,000 rows, in row groups of 5,000 rows; "
               "the rows are re-sorted across the files of each group, so queries skip whole "
               "files and row groups inside the files they read")


@pytest.fixture
def big(settings, tmp_path):
    return large_table(settings, tmp_path)


@pytest.mark.parametrize("policy,params", [
    ("wair", {"window": QUERIES}),
    ("dd", {}),
    ("paw", {}),
    ("pto", {"refine_sizes": True}),
])
def test_every_policy_predicts_a_row_group_saving_on_large_files(big, policy, params):
    plan = api.preview_plan(big, TABLE, policy, params).to_json()
    assert plan.get("groups"), plan.get("reason")
    assert sorted(p for g in plan["groups"] for p in g["partitions"]) == sorted(
        p.path for p in TableStore(big).current_snapshot(TABLE).partitions)
    saving = plan["predicted_saving"]
    checked = plan["details"]["output"]
    assert saving["window_queries"] == QUERIES
    # every row group is read before; after, far less than the 1/4 whole files allow
    assert saving["bytes"] > 0.9 * checked["bytes_before"], (saving, checked)
    assert checked["bytes_after"] < 0.1 * checked["bytes_before"], checked
    shape = checked["groups"][0]
    assert shape["row_groups_per_file"] > 1, shape
    if policy in ("wair", "dd", "paw"):  # the table sets no size: the inputs' files and row groups
        assert (shape["files"], shape["rows_per_file"], shape["row_group_rows"]) == (
            FILES, ROWS, GROUP_ROWS), shape
        assert checked["files_note"] == KEEPS_FILES
    if policy == "dd":  # deep by row groups: 40 row groups all overlap on ip (4 files: depth 4)
        assert "deepest 40" in plan["groups"][0]["reason"], plan["groups"][0]["reason"]
    if policy in ("paw", "pto"):  # their designs are priced by the output check
        assert plan["details"]["saving_from"] == "output check"
        assert saving["bytes"] == pytest.approx(checked["bytes_before"] - checked["bytes_after"])
        assert plan["break_even_queries"] is not None and plan["break_even_queries"] > 0


def test_at_file_level_the_same_output_saves_at_most_three_quarters(big):
    """The output check prices the written shape at the unit the scans are charged by: by
    whole files the 4 sorted files leave each query at least one file to read."""
    files_only = dataclasses.replace(big, prune_row_groups=False)
    by_file = api.preview_plan(files_only, TABLE, "wair", {"window": QUERIES}).to_json()
    by_group = api.preview_plan(big, TABLE, "wair", {"window": QUERIES}).to_json()
    at_files, at_groups = by_file["details"]["output"], by_group["details"]["output"]
    assert at_files["bytes_before"] == pytest.approx(at_groups["bytes_before"], rel=0.01)
    assert at_files["bytes_after"] >= 0.25 * at_files["bytes_before"], at_files
    assert at_groups["bytes_after"] < 0.1 * at_groups["bytes_before"], at_groups
    assert not at_files["files_note"]  # no row groups counted: no claim about them


def test_a_within_file_reordering_is_named_as_such(big):
    """One group per file (sorted inside itself): the files, their rows and their row
    groups stay; read file by file the window reads as much as before."""
    store = TableStore(big)
    snap = store.current_snapshot(TABLE)
    groups = [PlanGroup((p.path,), "sort", ("ip",), "one file") for p in snap.partitions]
    window = list(api.workload_fragments(big, TABLE))
    checked = check_output(snap.zonemaps(), groups, window, store.write_target(TABLE),
                           rowgroups.for_snapshot(store, TABLE, snap))
    assert checked.files_note == (
        "a within-file reordering: each of the 4 files keeps its 50,000 rows; the saving comes "
        "from row groups of 5,000 rows (file by file, the window would read as much as before)")
    assert checked.bytes_after < 0.4 * checked.bytes_before, checked.to_json()


def test_plan_preview_and_create_say_the_files_keep_their_size(big, capsys):
    argv = ["--home", str(big.home), "plan", "preview", TABLE, "--window", str(QUERIES)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"  output: {KEEPS_FILES}" in out.splitlines(), out
    assert ("writes 4 files of 50,000 rows (input granularity: the median input file holds "
            "50,000 rows), 10 row groups of 5,000 rows each") in out
    assert main(["--home", str(big.home), "plan", "create", TABLE, "--window", str(QUERIES)]) == 0
    assert f"  output: {KEEPS_FILES}" in capsys.readouterr().out.splitlines()


@pytest.mark.spark
def test_wair_on_large_files_writes_the_model_row_groups_and_keeps_its_promise(big, spark):
    store = TableStore(big)
    before = store.current_snapshot(TABLE)
    plan = api.create_plan(big, TABLE, "wair", {"window": QUERIES},
                           created_by=sign_in(big, "carol"))
    assert plan.groups, plan.reason
    shape = plan.details["output"]["groups"][0]
    alice = sign_in(big, "alice")
    checked = api.verify_plan(big, plan.id, alice, spark=spark)
    assert checked.sample["duck_bytes_after"] < 0.5 * checked.sample["duck_bytes_before"], checked.sample
    if api.approve_plan(big, plan.id, alice, reason="test").status == "proposed":
        api.approve_plan(big, plan.id, sign_in(big, "bob"), reason="test")
    result = api.run_plan(big, plan.id, spark=spark, actor=alice)
    written = [f for g in result["groups"] for f in g["files"]]
    assert len(written) == shape["files"] == FILES
    for f in written:  # the model's row groups, exactly: 10 of 5,000 rows per file
        assert row_group_rows(f) == [shape["row_group_rows"]] * shape["row_groups_per_file"], f
    after = store.current_snapshot(TABLE)
    assert sorted(p.rows for p in after.partitions) == [ROWS] * FILES
    assert sum(p.rows for p in after.partitions) == sum(p.rows for p in before.partitions)
    real = result["re_estimated"]
    assert real["bytes_after"] < 0.1 * real["bytes_before"], real
    ratio = real["saving_bytes"] / real["predicted_saving_bytes"]
    assert 0.7 <= ratio <= 1.3, (ratio, real)
    assert result["delivery"]["underdelivered"] is False, result["delivery"]
