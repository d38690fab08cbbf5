"""Storing the same proposal twice stores one plan (the dashboard's "Store" clicked twice,
or `plan create` run twice)."""

from __future__ import annotations

import pytest

from app_workspace import build_table
from engine import api
from engine.core.config import load_settings
from security_helpers import sign_in


@pytest.mark.spark
def test_an_identical_waiting_plan_is_not_stored_again(tmp_path, spark):
    home = tmp_path / "home"
    build_table(home, "lineitem", rows=3000, queries=40, spark=spark)
    settings = load_settings({"home": str(home)}, environ={})
    # alpha 0.5: on this small table the default alpha cuts Algorithm 2's curve at one lone
    # partition, which Algorithm 1's guard refuses (it cannot change a zonemap)
    params = {"alpha": 0.5}
    first = api.create_plan(settings, "lineitem", "wair", params, created_by="carol")
    assert first.id is not None, first
    state = api.policy_state(settings, "lineitem", "wair")
    again = api.create_plan(settings, "lineitem", "wair", params, created_by="dave")
    assert again.id == first.id and again.duplicate_of == first.id
    assert again.created_by == "carol"
    assert [p.id for p in api.list_plans(settings, "lineitem")] == [first.id]
    assert api.policy_state(settings, "lineitem", "wair") == state  # no new decision booked
    # a different proposal (another policy) is stored
    other = api.create_plan(settings, "lineitem", "greedy")
    assert other.id not in (None, first.id) and other.duplicate_of is None
    # once the first plan is decided (rejected), the same proposal may be stored anew
    api.reject_plan(settings, first.id, sign_in(settings, "alice"), "not now")
    fresh = api.create_plan(settings, "lineitem", "wair", params)
    assert fresh.id not in (first.id, other.id) and fresh.duplicate_of is None
