"""The bad-input corpus (tests/bad_inputs/corpus.py): every case exits 2 with one line
naming the problem, no traceback, and leaves the workspace as it was."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from bad_inputs.corpus import CASES, DAMAGES, Case
from engine import api
from engine.cli import main
from engine.core.config import load_settings
from engine.policy.base import PlanGroup
from engine.table.formats.native_files import clear_snapshot_cache
from engine.table.model import Partition
from engine.table.store import TableStore
from engine.workload.store import WorkloadStore
from engine.workspace import Workspace
from plan_helpers import insert_plan, make_table
from security_helpers import ROOT, SECRET, ensure_account, secret_file

_LOG = ('{"ts": 1700000000, "sql": "SELECT * FROM lineitem WHERE l_shipdate < DATE '
        "'1995-01-01'\"}\n")
_AUDIT_TABLES = ("audit", "sessions", "sqlite_sequence")


def _workspace(tmp_path: Path) -> Path:
    """A small real workspace: table lineitem, a workload, admin root, approvers alice and
    tester, and plan 1 proposed by tester."""
    home = tmp_path / "home"
    settings = load_settings({"home": str(home), "target_rows": 1000}, environ={})
    snap = make_table(settings, n=1000, rows_per_file=250)
    log = tmp_path / "seed.jsonl"
    log.write_text(_LOG)
    api.import_workload(settings, "lineitem", str(log))
    log.unlink()
    for name in ("alice", "tester"):
        ensure_account(settings, name)
    insert_plan(settings, snap, [PlanGroup((snap.partitions[0].path,), "sort",
                                           ("l_shipdate",), "t")])
    return home


def _damage(kind: str, home: Path) -> None:
    meta = home / "tables" / "lineitem" / "metadata"
    control = home / "control.db"
    if kind in ("control-garbage", "control-directory", "control-missing-after-recluster"):
        if kind == "control-missing-after-recluster":
            settings = load_settings({"home": str(home)}, environ={})
            snap = TableStore(settings).current_snapshot("lineitem")
            first = snap.partitions[0]
            TableStore(settings).commit("lineitem", snap.id, [first.path], [first], "recluster",
                                        {"plan_id": 1})
        for suffix in ("", "-wal", "-shm"):
            Path(f"{control}{suffix}").unlink(missing_ok=True)
        if kind == "control-garbage":
            control.write_bytes(b"not a database at all " * 64)
        elif kind == "control-directory":
            control.mkdir()
    elif kind == "control-truncated":
        settings = load_settings({"home": str(home)}, environ={})
        Workspace(settings).control.record(ROOT, "note", "checkpoint")  # the WAL into the file
        with sqlite3.connect(control) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        for suffix in ("-wal", "-shm"):
            Path(f"{control}{suffix}").unlink(missing_ok=True)
        control.write_bytes(control.read_bytes()[:1000])
    elif kind == "workload-garbage":
        settings = load_settings({"home": str(home)}, environ={})
        path = WorkloadStore(settings).path("lineitem")
        path.write_text(path.read_text().splitlines()[0] + "\n{not json\n")
    elif kind == "pointer-garbage":
        (meta / "current").write_bytes(b"{not json")
    elif kind == "pointer-dangling":
        (meta / "current").write_text(json.dumps({"id": "77", "header": "snap-00000077.json"}))
    elif kind == "header-garbage":
        (meta / "snap-00000001.json").write_bytes(b"\x00\x01garbage")
    elif kind == "manifest-truncated":
        path = meta / "snap-00000001.manifest.parquet"
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif kind == "data-file-deleted":  # snapshot 2 replaced file 0 by a copy; file 0 gone
        settings = load_settings({"home": str(home)}, environ={})
        store = TableStore(settings)
        snap = store.current_snapshot("lineitem")
        first = snap.partitions[0]
        copy = os.path.join(store.new_data_dir("lineitem", "copy"), "part-0.parquet")
        shutil.copyfile(first.path, copy)
        store.commit("lineitem", snap.id, [first.path],
                     [Partition(copy, first.rows, first.bytes, first.columns, first.created_seq)],
                     "recluster")
        os.remove(first.path)
    elif kind == "workspace-copied":  # the scratch folder gets a copy of the workspace
        shutil.copytree(home, home.parent / "scratch" / "copy")
    elif kind == "table-json-garbage":
        (home / "tables" / "lineitem" / "table.json").write_text("{")
    else:  # pragma: no cover - a typo in the corpus
        raise AssertionError(f"unknown damage {kind!r}; one of {DAMAGES}")


def _control_dump(path: Path, audits: bool) -> list[str]:
    """The control store's content as SQL (byte-level changes from WAL checkpoints do not
    count); with ``audits`` the audit log and sessions may have grown."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        lines = list(conn.iterdump())
    finally:
        conn.close()
    if audits:
        lines = [s for s in lines
                 if not any(f'INSERT INTO "{t}"' in s or f"DELETE FROM \"{t}\"" in s
                            for t in _AUDIT_TABLES)]
    return lines


def _disk_state(root: Path, audits: bool) -> dict[str, object]:
    """Every file under ``root``: its hash (the control store: its content)."""
    state: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            state[os.path.relpath(os.path.join(dirpath, d), root) + "/"] = "dir"
        for f in filenames:
            path = Path(dirpath) / f
            rel = os.path.relpath(path, root)
            if f in ("control.db-wal", "control.db-shm", ".lock"):
                continue
            if f == "control.db":
                try:
                    state[rel] = _control_dump(path, audits)
                    continue
                except sqlite3.DatabaseError:
                    pass
            state[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, tmp_path, capsys, monkeypatch):
    home = _workspace(tmp_path)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    for name, data in case.files.items():
        (scratch / name).write_bytes(data)
    if case.config is not None:
        (home / "layout-advisor.toml").write_bytes(case.config)
    if case.damage:
        _damage(case.damage, home)
    for key, value in case.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr("sys.stdin", io.StringIO(case.stdin or ""))
    secret = secret_file(tmp_path / "scratch")
    assert Path(secret).read_text().strip() == SECRET
    argv = [a.format(home=home, tmp=scratch, secret=secret) for a in case.argv]
    if not argv or argv[0] != "--home":
        argv = ["--home", str(home), *argv]
    before = _disk_state(tmp_path, case.audits)
    capsys.readouterr()

    clear_snapshot_cache()  # as in a new process: read what is on disk
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse: usage and one error line
        code = exc.code
    out, err = capsys.readouterr()

    assert code == 2, f"exit {code}\nstdout: {out}\nstderr: {err}"
    assert "Traceback" not in err + out
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    assert re.search(case.expect, errors[0]), errors[0]
    assert _disk_state(tmp_path, case.audits) == before, "the command changed files on disk"


def test_the_corpus_ids_are_unique_and_every_damage_is_used():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    assert {c.damage for c in CASES if c.damage} == set(DAMAGES)
