"""A run's inputs and outputs checked where a user cannot see them:

- an input file deleted under the table, before the run or while its Spark job reads it:
  one line naming the file, exit 2, nothing committed, the run's files removed;
- input files whose Arrow types differ (int32 beside int64, a column one file lacks,
  milliseconds beside microseconds): refused before anything is written, one line naming
  both files and the column;
- an Iceberg or Delta commit whose added file vanished, or holds another row count than
  verified: refused by the commit's re-check, nothing published.
"""

from __future__ import annotations

import dataclasses
import os
import shutil

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from engine import api
from engine.cli import main
from engine.core.errors import DataFileError
from engine.policy.base import PlanGroup
from engine.spark import writing
from engine.table import fs
from engine.table.footers import read_partitions
from engine.table.store import TableStore
import format_tables
from format_tables import NAME
from plan_helpers import insert_plan, lineitem_arrow
from security_helpers import secret_file, sign_in


def _tree(settings) -> set[str]:
    """Every file under the table's data location and its table folder (leases too)."""
    store = TableStore(settings)
    out = set()
    for root in {store.data_root(NAME), store.table_dir(NAME)}:
        for dirpath, _, names in os.walk(root):
            out.update(os.path.join(dirpath, n) for n in names if not n.endswith(".lock"))
    return out


def _approved_plan(settings, base, n: int = 3) -> int:
    chosen = tuple(p.path for p in base.partitions[:n])
    pid = insert_plan(settings, base, [PlanGroup(chosen, "sort", ("l_shipdate",), "test")])
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="input test")
    return pid


def _cli_run(settings, pid: int, tmp_path, capsys) -> tuple[int, list[str]]:
    code = main(["--home", str(settings.home), "plan", "run", str(pid), "--as", "alice",
                 "--secret-file", secret_file(tmp_path)])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    return code, err


# -- differing Arrow schemas ----------------------------------------------------------------
def _with_ts(table: pa.Table) -> pa.Table:
    ts = pc.cast(table.column("l_shipdate"), pa.timestamp("us"))
    return table.append_column("l_shipped_at", ts)


SCHEMA_CASES = {  # name: (how the second file is rewritten, the column named, its two types)
    "int32-vs-int64": (lambda t: t.set_column(0, "l_orderkey", pc.cast(t.column(0), pa.int32())),
                       "l_orderkey", "int64 in the first, int32 in the second"),
    "missing-column": (lambda t: t.drop_columns(["l_comment"]),
                       "l_comment", "string in the first, missing in the second"),
    "timestamp-units": (lambda t: t.set_column(t.schema.get_field_index("l_shipped_at"),
                                               "l_shipped_at",
                                               pc.cast(t.column("l_shipped_at"),
                                                       pa.timestamp("ms"))),
                        "l_shipped_at", "timestamp[us] in the first, timestamp[ms] in the second"),
}


@pytest.mark.parametrize("case", list(SCHEMA_CASES))
def test_inputs_with_differing_arrow_types_are_refused_before_anything_is_written(
        case, settings, tmp_path, capsys):
    store = TableStore(settings)
    root = store.managed_location(NAME)
    os.makedirs(root)
    data = _with_ts(lineitem_arrow(1500))
    paths = []
    for i in range(3):
        paths.append(os.path.join(root, f"part-{i}.parquet"))
        pq.write_table(data.slice(500 * i, 500), paths[-1])
    schema, parts = read_partitions(paths)
    base = store.create(NAME, schema=schema, partitions=parts, operation="create",
                        target_rows=500)
    change, column, types = SCHEMA_CASES[case]
    pq.write_table(change(pq.read_table(paths[1])), paths[1])  # another writer's file
    pid = _approved_plan(settings, base)
    tree = _tree(settings)

    code, err = _cli_run(settings, pid, tmp_path, capsys)
    assert code == 2 and len(err) == 1, err
    assert paths[0] in err[0] and paths[1] in err[0] and repr(column) in err[0], err
    assert types in err[0] and "nothing was written" in err[0]
    assert "Traceback" not in err[0]
    assert _tree(settings) == tree  # nothing written: no folder, no lease, no file
    assert store.current_id(NAME) == base.id
    shown = api.show_plan(settings, pid)
    assert shown.status == "failed" and column in shown.result["error"]


# -- a data file deleted under the table ------------------------------------------------------
def test_input_deleted_before_the_run_is_named_in_one_line(settings, tmp_path, capsys):
    base = format_tables.make("native", settings, tmp_path)
    pid = _approved_plan(settings, base)
    victim = base.partitions[1].path
    os.remove(victim)
    tree = _tree(settings)
    code, err = _cli_run(settings, pid, tmp_path, capsys)
    assert code == 2 and len(err) == 1 and err[0].startswith(f"layout-advisor: error: {victim}:"), err
    assert "missing" in err[0] and "nothing was written or committed" in err[0]
    assert _tree(settings) == tree
    assert TableStore(settings).current_id(NAME) == base.id
    assert api.show_plan(settings, pid).status == "failed"


@pytest.mark.spark
@pytest.mark.parametrize("fmt", ["native", "delta"])
def test_input_deleted_while_the_job_reads_fails_naming_it(fmt, settings, spark, tmp_path,
                                                          monkeypatch):
    """The file goes after the run's own check, as the write job starts: Spark fails
    reading it; the user sees one line naming it, and the run's folder is removed."""
    base = format_tables.make(fmt, settings, tmp_path)
    pid = _approved_plan(settings, base)
    victim = base.partitions[1].path
    tree = _tree(settings) - {fs.local_path(victim)}
    real_write = writing.write

    def write_after_deleting(*args, **kwargs):
        os.remove(fs.local_path(victim))  # deleted under the running job
        return real_write(*args, **kwargs)

    monkeypatch.setattr(writing, "write", write_after_deleting)
    with pytest.raises(DataFileError) as caught:
        api.run_plan(settings, pid, spark=spark, actor=sign_in(settings, "alice"))
    message = str(caught.value)
    assert message.startswith(f"{victim}:") and "\n" not in message
    assert "missing" in message and "nothing was written or committed" in message
    store = TableStore(settings)
    assert store.current_id(NAME) == base.id
    leases_left = {p for p in _tree(settings) - tree if "/leases/" in p}
    assert _tree(settings) - tree == leases_left  # the run's files are gone (its lease: gc's)
    shown = api.show_plan(settings, pid)
    assert shown.status == "failed" and victim in shown.result["error"]
    if fmt == "delta":  # the Delta log did not move
        from deltalake import DeltaTable

        assert DeltaTable(store.info(NAME).location).version() == len(base.partitions) - 1


# -- the Iceberg and Delta commits re-check the files they add --------------------------------
def _copies(settings, name: str) -> tuple:
    """Byte copies of the table's first two files in a leased folder, with their footers."""
    store = TableStore(settings)
    snap = store.current_snapshot(name)
    out = store.new_data_dir(name, "recheck-test")
    copies = []
    for i, p in enumerate(snap.partitions[:2]):
        copies.append(f"{out}/part-{i}.parquet")
        shutil.copyfile(fs.local_path(p.path), fs.local_path(copies[-1]))
    _, added = read_partitions(copies, schema=snap.schema)
    return snap, added, [p.path for p in snap.partitions[:2]]


@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
@pytest.mark.parametrize("damage", ["deleted", "other-row-count"])
def test_open_format_commit_rechecks_the_files_it_adds(fmt, damage, settings, tmp_path):
    format_tables.make(fmt, settings, tmp_path)
    before = format_tables.read(fmt, settings)
    store = TableStore(settings)
    snap, added, removed = _copies(settings, NAME)
    if damage == "deleted":
        os.remove(fs.local_path(added[1].path))
        needle = "is gone"
    else:  # the file is there, but not what was verified (rows, same size)
        p = added[1]
        added[1] = dataclasses.replace(p, rows=p.rows + 1)
        needle = f"holds {p.rows} rows but was verified at {p.rows + 1}"
    with pytest.raises(DataFileError) as caught:
        store.format(NAME).commit_rewrite(snap.id, removed, added, {"plan_id": "t"})
    assert str(caught.value).startswith(f"{added[1].path}:") and needle in str(caught.value)
    assert "nothing was committed" in str(caught.value)
    assert store.current_id(NAME) == snap.id
    assert format_tables.read(fmt, settings) == before

