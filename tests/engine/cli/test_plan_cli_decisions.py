"""``plan approve`` and ``plan reject`` on the command line: the decision is recorded with its
actor and reason, and the text names it (both commands are built by one helper)."""

from __future__ import annotations

import json

import pytest

from engine import api
from engine.cli import main
from engine.policy.base import PlanGroup
from plan_helpers import insert_plan, make_table
from security_helpers import ensure_account, secret_file


@pytest.fixture
def plans(settings, monkeypatch, tmp_path):
    for name in ("alice", "bob"):  # real accounts; the CLI reads the secret from a file
        ensure_account(settings, name)
    monkeypatch.setenv("LAYOUT_ADVISOR_SECRET_FILE", secret_file(tmp_path))
    snap = make_table(settings, n=1000, rows_per_file=250)
    paths = tuple(p.path for p in snap.partitions[:2])
    return [insert_plan(settings, snap, [PlanGroup(paths, "sort", ("l_shipdate",), "test")]) for _ in range(2)]


@pytest.mark.parametrize("action,status", [("approve", "approved"), ("reject", "rejected")])
def test_decision_text_names_status_and_actor(settings, plans, capsys, action, status):
    pid = plans[0]
    argv = ["--home", str(settings.home), "plan", action, str(pid), "--as", "bob", "--reason", "looked at it"]
    assert main(argv) == 0
    assert capsys.readouterr().out.strip() == f"plan {pid} {status} by bob"
    shown = api.show_plan(settings, pid)
    assert shown.status == status
    last = shown.audit[-1]
    assert (last["action"], last["actor"], last["reason"]) == (action, "bob", "looked at it")
    assert api.show_plan(settings, plans[1]).status == "proposed"


def test_reject_json_prints_the_plan(settings, plans, capsys):
    assert main(["--home", str(settings.home), "plan", "reject", str(plans[1]), "--as", "alice", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["id"] == plans[1] and out["status"] == "rejected"
