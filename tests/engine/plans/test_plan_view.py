"""A plan answered as a :class:`engine.api.PlanView` (or a list row as a
:class:`engine.api.PlanSummary`) prints exactly the plan service's JSON: the same keys, in
the same order, with the same values, for each kind of answer (preview, no-action, stored,
duplicate, list rows), so ``--json`` output is the service's dict."""

from __future__ import annotations

import json
import pickle

import pytest

from engine import api
from engine.cli.demo import build_demo
from engine.core.config import load_settings
from engine.plans import service
from engine.workspace import Workspace


def _same(view: api.PlanView, data: dict) -> None:
    assert json.dumps(view.to_json(), indent=2, default=str) == \
        json.dumps(data, indent=2, default=str)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The committed sample demo (Arrow writer: no Spark), without a calibration."""
    home = tmp_path_factory.mktemp("plan_view") / "home"
    home.mkdir()
    settings = load_settings({"home": str(home)}, environ={})
    build_demo(settings, None, "iceberg", writer="arrow")
    return settings


def test_each_kind_of_plan_answer_prints_the_service_json(demo):
    ws = Workspace(demo)
    preview = api.preview_plan(demo, "lineitem", "wair")
    assert preview.status == "preview" and preview.id is None and not preview.stored
    _same(preview, service.preview_plan(ws, "lineitem", "wair"))

    declined = api.preview_plan(demo, "lineitem", "wair", {"alpha": 1e9})
    assert declined.status == "no-action" and declined.reason and declined.groups is None
    _same(declined, service.preview_plan(ws, "lineitem", "wair", {"alpha": 1e9}))

    plan = api.create_plan(demo, "lineitem", "wair", created_by="carol")
    assert plan.status == "proposed" and plan.stored and plan.duplicate_of is None
    assert "duplicate_of" not in plan.to_json()
    _same(plan, service.show_plan(ws, plan.id))
    assert pickle.loads(pickle.dumps(plan)) == plan  # the dashboard's caches pickle answers

    again = api.create_plan(demo, "lineitem", "wair")
    assert again.duplicate_of == plan.id and list(again.to_json())[-1] == "duplicate_of"
    _same(again, service.create_plan(ws, "lineitem", "wair"))

    rows = api.list_plans(demo, "lineitem")
    assert [r.id for r in rows] == [plan.id] and rows[0].groups == len(plan.groups)
    assert json.dumps([r.to_json() for r in rows]) == json.dumps(service.list_plans(ws, "lineitem"))
