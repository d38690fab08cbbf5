"""Guarded destructive commands (roles, gc guards): gc is a dry run unless
--yes, keeps at least 7 days unless --force-retention, and deletes only as an admin; drop
and workload clear are an admin's; each is audited."""

from __future__ import annotations

import datetime as dt
import os

import pytest

from engine import api
from engine.cli import main
from engine.core.errors import ApprovalError, InvalidParameterError
from engine.table.store import TableStore
from plan_helpers import make_table
from security_helpers import ROOT, ensure_account, secret_file, sign_in


@pytest.fixture
def orphaned(settings):
    """A table whose first snapshot's files are no longer referenced (rolled forward to a
    snapshot without them), so gc has something to delete."""
    snap = make_table(settings, n=1000, rows_per_file=250)
    store = TableStore(settings)
    first = snap.partitions[0]
    store.commit("lineitem", snap.id, [first.path], [], "delete", {})
    return first.path


def test_gc_lists_by_default_and_refuses_a_short_retention(settings, orphaned):
    with pytest.raises(InvalidParameterError, match="below the minimum retention of 7 days; "
                                                    "add --force-retention"):
        api.gc_table(settings, "lineitem", "0s")
    assert api.gc_table(settings, "lineitem", "0s", force_retention=True) == [orphaned]
    assert os.path.exists(orphaned)  # a dry run by default
    alice = sign_in(settings, "alice")
    with pytest.raises(ApprovalError, match="'alice' is an approver; gc needs an admin"):
        api.gc_table(settings, "lineitem", "0s", dry_run=False, actor=alice,
                     force_retention=True)
    assert os.path.exists(orphaned)
    root = sign_in(settings, ROOT)
    assert api.gc_table(settings, "lineitem", dt.timedelta(0), dry_run=False, actor=root,
                        force_retention=True) == [orphaned]
    assert not os.path.exists(orphaned)
    last = api.audit_log(settings)[-1]
    assert (last["actor"], last["action"]) == (ROOT, "gc")
    assert last["reason"] == "table lineitem: deleted 1 file(s) not referenced by snapshots " \
                             "of the last 0:00:00"


def test_cli_gc_needs_yes_and_an_admin(settings, orphaned, tmp_path, capsys):
    ensure_account(settings, ROOT)
    home = str(settings.home)
    assert main(["--home", home, "table", "gc", "lineitem", "--older-than", "0s",
                 "--force-retention"]) == 0
    out = capsys.readouterr().out
    assert "would delete 1 file(s)" in out and "add --yes --as ADMIN" in out
    assert os.path.exists(orphaned)
    assert main(["--home", home, "table", "gc", "lineitem", "--older-than", "0s", "--yes",
                 "--force-retention"]) == 2
    assert "--yes deletes files: add --as ADMIN" in capsys.readouterr().err
    assert main(["--home", home, "table", "gc", "lineitem", "--older-than", "1h", "--yes",
                 "--as", ROOT, "--secret-file", secret_file(tmp_path)]) == 2
    assert "below the minimum retention" in capsys.readouterr().err
    assert os.path.exists(orphaned)
    assert main(["--home", home, "table", "gc", "lineitem", "--older-than", "0s", "--yes",
                 "--force-retention", "--as", ROOT, "--secret-file", secret_file(tmp_path)]) == 0
    assert "deleted 1 file(s)" in capsys.readouterr().out
    assert not os.path.exists(orphaned)


def test_drop_and_workload_clear_are_an_admins(settings, tmp_path, capsys):
    make_table(settings, n=1000, rows_per_file=250)
    alice = sign_in(settings, "alice")
    with pytest.raises(ApprovalError, match="'alice' is an approver; workload-clear needs an admin"):
        api.clear_workload(settings, "lineitem", actor=alice)
    with pytest.raises(ApprovalError, match="an approver is required"):
        api.drop_table(settings, "lineitem")
    home = str(settings.home)
    assert main(["--home", home, "table", "drop", "lineitem", "--as", "alice",
                 "--secret-file", secret_file(tmp_path)]) == 2
    assert "'alice' is an approver; drop needs an admin" in capsys.readouterr().err
    assert TableStore(settings).exists("lineitem")
    assert main(["--home", home, "workload", "clear", "lineitem", "--as", ROOT,
                 "--secret-file", secret_file(tmp_path)]) == 0
    assert main(["--home", home, "table", "drop", "lineitem", "--as", ROOT,
                 "--secret-file", secret_file(tmp_path)]) == 0
    assert not TableStore(settings).exists("lineitem")
    actions = [(e["actor"], e["action"], e["reason"]) for e in api.audit_log(settings)]
    assert actions[-4:] == [(ROOT, "sign-in", None), (ROOT, "workload-clear", "table lineitem"),
                            (ROOT, "sign-in", None), (ROOT, "drop", "table lineitem")]
    assert api.verify_audit(settings)["ok"]
