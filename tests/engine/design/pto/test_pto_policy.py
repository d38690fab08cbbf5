"""PTO end to end on a real table of Parquet files: API, policy, stored plan, CLI."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest

from engine import api
from engine.cli import main
from engine.design.pto.candidates import MB
from engine.design.pto.optimizer import PtoConfig, run_on_files
from engine.core.errors import InvalidParameterError
from engine.policy.registry import make_policy, policy_names
from engine.table.store import TableStore
from engine.workload.model import Range, ScanFragment
from engine.workload.store import WorkloadStore
from plan_helpers import EPOCH, lineitem_arrow, make_table


def _fragments(n: int = 30, seed: int = 0) -> list[ScanFragment]:
    """Ship-date ranges (most), order-date ranges and quantity bounds."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        lo = EPOCH + dt.timedelta(days=int(rng.integers(0, 3000)))
        box = {"l_shipdate": Range(lo, lo + dt.timedelta(days=30))}
        if i % 3 == 0:
            o = EPOCH + dt.timedelta(days=int(rng.integers(0, 2300)))
            box = {"l_orderdate": Range(o, o + dt.timedelta(days=60))}
        if i % 5 == 0:
            box["l_quantity"] = Range(None, 10.0)
        out.append(ScanFragment(f"q{i}", "lineitem", (box,), tuple(box)))
    return out


@pytest.fixture
def table(settings):
    """12 files of 1,000 rows in no order: every file spans every date, so PTO's design
    reads less than the input and the output check lets its plan through."""
    data = lineitem_arrow(12_000)
    data = data.take(np.random.default_rng(11).permutation(data.num_rows))
    snap = make_table(settings, "lineitem", rows_per_file=1_000, data=data)
    WorkloadStore(settings).append("lineitem", _fragments(), snap.schema)
    return snap


def test_design_pto_ranks_candidates_and_beats_the_default(settings, table):
    d = api.design_pto(settings, "lineitem")
    assert d["fragments"] == 30
    # both date columns pass the guardrails (NDV within 10..4,000, 12,000 rows); quantity is a float
    assert d["partition_candidates"] == ["l_shipdate", "l_orderdate", None]
    assert len(d["sort_candidates"]) == 3
    n_cands = 3 * len(set(d["sort_candidates"])) * 5 * 6
    assert len(d["candidates"]) == n_cands
    labelled = [c for c in d["candidates"] if c["measured"] is not None]
    assert len(labelled) == 3 * len(set(d["sort_candidates"]))
    assert d["choice"] == d["candidates"][0]
    assert d["choice"]["partition_by"] in d["partition_candidates"]
    assert "PTO: partition by" in d["reason"]
    by_name = {b["name"]: b for b in d["baselines"]}
    assert set(by_name) == {"default", "human expert"}
    assert d["choice"]["predicted"] is not None
    # the chosen layout, measured, is better than the table as ingested (dates trail order)
    assert max(c["measured"] for c in labelled) > by_name["default"]["measured"]
    # the recommendation the dashboard shows, and the comparison under both labels
    rec = d["recommendation"]
    assert {k: rec[k] for k in ("partition_by", "sort", "target_file_bytes", "row_group_bytes")} == \
        {k: d["choice"][k] for k in ("partition_by", "sort", "target_file_bytes", "row_group_bytes")}
    assert rec["label"] == "cost" and rec["predicted"] == d["choice"]["predicted"] and rec["why"] == d["reason"]
    comp = {c["name"]: c for c in d["comparison"]}
    assert set(comp) == {"pto", "default", "human expert"}
    for name, b in by_name.items():  # the run's label, measured twice alike
        assert comp[name]["cost"] == pytest.approx(b["measured"], abs=1e-3)
    assert all(0.0 <= c["skip"] <= 100.0 for c in comp.values())
    if rec["measured"] is not None:  # a measured choice is the best label seen, above the default's
        assert comp["pto"]["cost"] == pytest.approx(rec["measured"], abs=1e-3)
        assert comp["pto"]["cost"] > comp["default"]["cost"]
    json.dumps(d)  # JSON-plain


def test_skip_label_and_lightweight_variant(settings, table):
    snap = TableStore(settings).current_snapshot("lineitem")
    zm = snap.zonemaps()
    types = dict(snap.schema.columns)
    frags = _fragments()
    full = run_on_files(list(zm.paths), types, int(zm.bytes.sum()), frags, PtoConfig(label="skip"))
    light = run_on_files(list(zm.paths), types, int(zm.bytes.sum()), frags,
                         PtoConfig(label="skip", lightweight=True))
    assert len(light.label_fragments) < len(full.label_fragments) == 30
    # one fragment per distinct filter-column set: {ship}, {order}, {ship, qty}, {order, qty}
    assert len(light.label_fragments) == 4
    measured = [c.measured for c in full.candidates if c.measured is not None]
    assert all(0.0 <= m <= 100.0 for m in measured)  # skip% is a share of the rows
    assert max(measured) > 0.0  # some labelled layout skips rows for these range queries


def test_pto_policy_proposal_and_stored_plan(settings, table):
    assert "pto" in policy_names()
    assert make_policy("pto", {"top_k": 2, "label": "skip"}).get_params() == \
        {"top_k": 2, "label": "skip", "lightweight": False, "verify_top": 0, "refine_sizes": False,
         "training_budget": 0, "max_design_rows": None, "open_cost_offset": False, "seed": 0}
    out = api.create_plan(settings, "lineitem", policy="pto")
    plan = api.show_plan(settings, out.id)
    assert plan.status == "proposed" and plan.policy == "pto"
    groups = plan.groups
    assert len(groups) == 1
    g = groups[0]
    assert len(g["partitions"]) == 12  # the whole table
    assert g["layout"] in ("sort", "zorder", "binpack")
    params = g["layout_params"]
    assert params["target_file_bytes"] > 0 and 0 < params["row_group_bytes"] <= params["target_file_bytes"]
    details = plan.details
    choice = details["choice"]
    assert params["target_file_bytes"] == choice["target_file_bytes"]
    assert params.get("partition_by") == choice["partition_by"]
    assert list(g["columns"]) == choice["sort_columns"]
    assert len(details["candidates"]) > 12


def test_pto_needs_predicates(settings):
    snap = make_table(settings, "bare", n=2_000, rows_per_file=500)
    WorkloadStore(settings).append("bare", [ScanFragment("q", "bare", (), ("l_quantity",))], snap.schema)
    with pytest.raises(InvalidParameterError, match="filters on a column"):
        api.design_pto(settings, "bare")


def test_cli_design_pto_text_json_and_errors(settings, table, capsys):
    home = ["--home", str(settings.home)]
    assert main([*home, "design", "pto", "lineitem", "--top-k", "2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert len(d["partition_candidates"]) <= 3 and d["label"] == "cost"
    assert main([*home, "design", "pto", "lineitem", "--label", "skip"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("PTO: partition by") and "baselines" in text and "human expert" in text
    assert main([*home, "design", "pto", "lineitem", "--verify-top", "2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["verify_top"] == 2 and sum(c["verified"] for c in d["candidates"]) == 2
    assert all(c["measured"] is not None for c in d["candidates"] if c["verified"])
    assert main([*home, "design", "pto", "lineitem", "--training-budget", "12", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["training_budget"] == 12 and sum(c["measured"] is not None for c in d["candidates"]) >= 12
    with pytest.raises(SystemExit) as exc:
        main([*home, "design", "pto", "lineitem", "--verify-top", "-1"])
    assert exc.value.code == 2 and "--verify-top" in capsys.readouterr().err
    assert main([*home, "design", "pto", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("layout-advisor: error:") and len(err.strip().splitlines()) == 1
    with pytest.raises(SystemExit) as exc:
        main([*home, "design", "pto", "lineitem", "--top-k", "0"])
    assert exc.value.code == 2
    capsys.readouterr()
    assert main([*home, "plan", "create", "lineitem", "--policy", "pto", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["status"] == "proposed" and plan["policy"] == "pto"
    assert plan["groups"][0]["layout_params"]["target_file_bytes"] > 0


def test_grid_is_scaled_to_the_table(settings, table):
    d = api.design_pto(settings, "lineitem")
    grid = d["tfs_grid"]
    assert len(grid) == 5 and all(b == 2 * a for a, b in zip(grid, grid[1:]))
    assert grid[-1] <= 512 * MB


def test_pto_policy_declines_without_predicates(settings):
    snap = make_table(settings, "bare2", n=2_000, rows_per_file=500)
    WorkloadStore(settings).append("bare2", [ScanFragment("q", "bare2", (), ("l_quantity",))], snap.schema)
    out = api.preview_plan(settings, "bare2", policy="pto")
    assert "no fragment of the workload filters" in out.reason
    assert api.list_plans(settings, "bare2") == []


def test_max_design_rows_through_api_policy_and_cli(settings, table, capsys):
    """``max_design_rows`` (ours; default every row, the paper's) from the API, the policy
    and both CLI commands; a bad value is one line and exit 2, before any file is read."""
    full = api.design_pto(settings, "lineitem")
    assert full["max_design_rows"] is None and full["design_rows"] == 12_000
    d = api.design_pto(settings, "lineitem", max_design_rows=4_000)
    # a Bernoulli sample of about 4,000 of the 12,000 rows (its own stream, seed 0)
    assert d["max_design_rows"] == 4_000 and 3_700 <= d["design_rows"] <= 4_300
    assert d["sample_rows"] <= d["design_rows"]
    # the table's cardinality is kept: the 10,000-row guardrail still admits both dates
    assert d["partition_candidates"] == ["l_shipdate", "l_orderdate", None]
    assert api.design_pto(settings, "lineitem", max_design_rows=0)["design_rows"] == 12_000
    for bad in (-1, 2.5, True):
        with pytest.raises(InvalidParameterError, match="max_design_rows must be a whole number >= 0"):
            api.design_pto(settings, "lineitem", max_design_rows=bad)
    with pytest.raises(InvalidParameterError, match="max_design_rows"):
        make_policy("pto", {"max_design_rows": -5})  # refused when built, not after a read
    assert make_policy("pto", {"max_design_rows": 4_000}).config().max_design_rows == 4_000

    home = ["--home", str(settings.home)]
    assert main([*home, "design", "pto", "lineitem", "--max-design-rows", "4000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["design_rows"] == d["design_rows"] and out["choice"] == d["choice"]  # same seed, same run
    assert main([*home, "design", "pto", "lineitem", "--max-design-rows", "4000"]) == 0
    assert f"design on {d['design_rows']} sampled rows (--max-design-rows 4000)" in capsys.readouterr().out
    for cmd in (["design", "pto", "lineitem"], ["plan", "create", "lineitem", "--policy", "pto"]):
        assert main([*home, *cmd, "--max-design-rows", "-1"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "max_design_rows must be a whole number >= 0" in err
        with pytest.raises(SystemExit) as exc:  # not an integer: argparse's own error, exit 2
            main([*home, *cmd, "--max-design-rows", "many"])
        assert exc.value.code == 2 and "--max-design-rows" in capsys.readouterr().err
    assert api.list_plans(settings, "lineitem") == []  # nothing stored by the refusals
    assert main([*home, "plan", "create", "lineitem", "--policy", "pto", "--max-design-rows", "4000",
                 "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["status"] == "proposed" and plan["params"]["max_design_rows"] == 4_000
    assert plan["details"]["design_rows"] == d["design_rows"]
    assert plan["details"]["choice"] == d["choice"]
    # another policy refuses the flag by name
    assert main([*home, "plan", "create", "lineitem", "--policy", "dd", "--max-design-rows", "10"]) == 2
    assert "does not take max_design_rows" in capsys.readouterr().err


def test_open_cost_offset_through_api_policy_and_cli(settings, table, capsys):
    """``open_cost_offset`` (ours, off by default: the paper's model) reaches the design from
    the API, the policy and both CLI commands, and changes the model's predictions."""
    paper = api.design_pto(settings, "lineitem")
    ours = api.design_pto(settings, "lineitem", open_cost_offset=True)
    assert paper["open_cost_offset"] is False and ours["open_cost_offset"] is True
    assert [c["predicted"] for c in ours["candidates"]] != [c["predicted"] for c in paper["candidates"]]
    assert make_policy("pto", {"open_cost_offset": True}).config().open_cost_offset is True

    home = ["--home", str(settings.home)]
    assert main([*home, "design", "pto", "lineitem", "--open-cost-offset", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["open_cost_offset"] is True and out["choice"] == ours["choice"]
    assert main([*home, "plan", "create", "lineitem", "--policy", "pto", "--open-cost-offset",
                 "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    # the design with the offset writes this table as one file of one row group, which
    # reads no less than the input: the output check declines it, naming the choice
    assert plan["status"] == "no-action" and plan["details"]["choice"] == ours["choice"]
    assert ours["choice"]["target_file_bytes"] == ours["choice"]["row_group_bytes"] == 524_288
    assert plan["reason"].startswith("the output cannot deliver the saving: plan parameter "
                                     "target_file_bytes = 524,288 bytes writes 12 files as 1")
    assert main([*home, "plan", "create", "lineitem", "--policy", "dd", "--open-cost-offset"]) == 2
    assert "does not take open_cost_offset" in capsys.readouterr().err


def test_a_design_sample_reads_sampled_files_not_every_row(settings, table, monkeypatch):
    """With ``max_design_rows`` the API and the policy read whole files drawn at random
    (``load_file_sample``), never the whole table (``load_table``) first."""
    from engine.design.pto import optimizer

    def whole_table(*args, **kwargs):
        raise AssertionError("read every row although max_design_rows was set")

    full = api.design_pto(settings, "lineitem")  # every row: the paper's procedure
    monkeypatch.setattr(optimizer, "load_table", whole_table)
    d = api.design_pto(settings, "lineitem", max_design_rows=4_000)
    assert 3_700 <= d["design_rows"] <= 4_300 < full["design_rows"]
    policy = make_policy("pto", {"max_design_rows": 4_000})
    assert policy.config().max_design_rows == 4_000
    with pytest.raises(AssertionError, match="read every row"):
        api.design_pto(settings, "lineitem")
