"""End to end: ingest, import a query log, WAIR proposes, approve, run, realized savings."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest

from engine import api
from engine.cli import main
from engine.core.errors import InvalidParameterError
from engine.spark.ingest import create_table
from engine.table.store import TableStore
from engine.workspace import Workspace
from plan_helpers import EPOCH, lineitem_arrow, rows_of
from security_helpers import ROOT, ensure_account, secret_file, sign_in

pytestmark = pytest.mark.spark


@pytest.fixture
def lineitem(settings, spark, tmp_path):
    """4000 rows ingested in order-date order, 8 files; a log of 24 l_shipdate queries."""
    import pyarrow.parquet as pq

    src = tmp_path / "lineitem.parquet"
    pq.write_table(lineitem_arrow(4000), src)
    snap = create_table(TableStore(settings), "lineitem", str(src), target_rows=500, spark=spark)
    rng = np.random.default_rng(11)
    lines = []
    for i in range(24):
        lo = EPOCH + dt.timedelta(days=int(rng.integers(300, 2800)))
        hi = lo + dt.timedelta(days=45)
        lines.append(f"-- ts: 2024-01-01T00:{i:02d}:00\nSELECT sum(l_quantity) FROM lineitem "
                     f"WHERE l_shipdate BETWEEN DATE '{lo}' AND DATE '{hi}';")
    log = tmp_path / "queries.sql"
    log.write_text("\n".join(lines))
    report = api.import_workload(settings, "lineitem", str(log))
    assert report["fragments"] == 24
    return snap


def test_wair_plan_is_proposed_approved_run_and_realized(settings, spark, lineitem):
    preview = api.preview_plan(settings, "lineitem", "wair", {"window": 24})
    assert preview.status == "preview" and preview.id is None
    assert Workspace(settings).control.list_plans() == []  # a preview stores nothing

    plan = api.create_plan(settings, "lineitem", "wair", {"window": 24, "alpha": 1.0},
                           created_by=sign_in(settings, "carol"))
    assert plan.status == "proposed" and plan.base_snapshot == lineitem.id
    for key in ("id", "table", "policy", "params", "groups", "estimated_cost",
                "predicted_saving", "break_even_queries", "curve", "created_at", "audit",
                "progress", "result"):
        assert key in plan.to_json(), key
    assert set(plan.estimated_cost) == {"bytes_read", "bytes_written", "cpu_seconds", "money"}
    assert plan.predicted_saving["bytes"] > 0 and plan.curve
    all_paths = {p.path for p in lineitem.partitions}
    for g in plan.groups:
        assert set(g["partitions"]) <= all_paths and g["layout"] and g["columns"] and g["reason"]
        assert "l_shipdate" in g["columns"]
    assert plan.audit[0]["actor"] == "carol"
    assert preview.groups == plan.groups

    alice = sign_in(settings, "alice")
    api.approve_plan(settings, plan.id, alice, reason="pays back fast")
    result = api.run_plan(settings, plan.id, spark=spark, actor=alice)
    after = TableStore(settings).current_snapshot("lineitem")
    assert after.id == result["snapshot_id"]
    assert rows_of([p.path for p in after.partitions]).equals(
        rows_of([p.path for p in lineitem.partitions]))
    realized = result["realized"]
    assert "error" not in realized, realized
    assert realized["queries"] == 24
    assert realized["bytes_after"] < realized["bytes_before"]
    assert realized["saving_bytes"] > 0 and realized["saving_cpu_seconds"] > 0
    assert realized["predicted_saving_bytes"] == pytest.approx(plan.predicted_saving["bytes"])
    # the replay of the decision's own window is "re-estimated" and never taught to WAIR
    # (WAIR learns from later queries, tests/engine/policy/wair/test_wair_realized.py)
    assert realized["scope"] == "re-estimated"
    state = api.policy_state(settings, "lineitem", "wair")
    assert state["runs"] == 0
    shown = api.show_plan(settings, plan.id)
    assert shown.status == "succeeded"
    assert shown.result["realized"]["saving_bytes"] == realized["saving_bytes"]


def test_no_action_stores_nothing_and_says_why(settings, spark, lineitem):
    api.clear_workload(settings, "lineitem", actor=sign_in(settings, ROOT))
    out = api.create_plan(settings, "lineitem", "wair")
    assert out.id is None and out.status == "no-action"
    assert "no boundary partition" in out.reason
    assert Workspace(settings).control.list_plans() == []


def test_dd_plan_and_parameter_errors(settings, spark, lineitem):
    plan = api.create_plan(settings, "lineitem", "dd", {"key": "l_shipdate"})
    assert plan.policy == "dd" and plan.status == "proposed"
    assert all(g["columns"] == ["l_shipdate"] for g in plan.groups)
    with pytest.raises(InvalidParameterError, match="unknown policy 'nope'"):
        api.create_plan(settings, "lineitem", "nope")
    with pytest.raises(InvalidParameterError, match="policy dd does not take alpha"):
        api.create_plan(settings, "lineitem", "dd", {"alpha": 2.0})


def test_cli_plan_create_show_list_json(settings, spark, lineitem, capsys, tmp_path):
    home = str(settings.home)
    ensure_account(settings, "dave")  # a named proposer signs in
    assert main(["--home", home, "plan", "create", "lineitem", "--window", "24",
                 "--as", "dave", "--secret-file", secret_file(tmp_path), "--json"]) == 0
    created = json.loads(capsys.readouterr().out)
    assert created["status"] == "proposed" and created["created_by"] == "dave"
    assert main(["--home", home, "plan", "show", str(created["id"])]) == 0
    text = capsys.readouterr().out
    assert f"plan {created['id']}  [proposed]" in text and "estimated cost" in text
    assert main(["--home", home, "plan", "list", "--table", "lineitem", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [p["id"] for p in listed] == [created["id"]]
    assert main(["--home", home, "plan", "create", "lineitem", "--alpha", "-1"]) == 2
    assert "alpha must be > 0" in capsys.readouterr().err


def test_a_plan_records_whether_its_cost_was_priced_with_a_calibration(settings, lineitem):
    """``calibrate --history``'s "calibrated" column tells how the PLAN was priced: a plan
    made before the workspace was calibrated stays "no" when it runs after the calibration
    (not the workspace's state at run time); a plan whose details lack the flag
    says "?"; a plan stored before the flag
    existed says "?"."""
    import dataclasses

    from engine.cli.calibrate import _yes_no
    from engine.plans.service import cost_check, decide
    from engine.workspace import Workspace

    calibrated = dataclasses.replace(settings, rewrite_fixed_s=1e-6)  # small: WAIR still acts
    plain = api.create_plan(settings, "lineitem", "wair", {"window": 24, "alpha": 1.0})
    assert plain.id is not None, plain.status
    plan = Workspace(settings).plans.get(plain.id)
    ran = {"measured": {"wall_seconds": 2.0}}
    assert cost_check(calibrated, plan, ran)["calibrated"] is False  # calibrated since: still no
    proposal = decide(Workspace(calibrated), "lineitem", "wair", {"window": 24, "alpha": 1.0}).proposal
    assert proposal is not None and proposal.details["priced_with_calibration"] is True
    assert cost_check(settings, dataclasses.replace(plan, proposal=proposal), ran)["calibrated"] is True
    details = {k: v for k, v in plan.proposal.details.items() if k != "priced_with_calibration"}
    old = dataclasses.replace(plan, proposal=dataclasses.replace(plan.proposal, details=details))
    assert cost_check(calibrated, old, ran)["calibrated"] is None
    assert [_yes_no(f) for f in (True, False, None)] == ["yes", "no", "?"]
