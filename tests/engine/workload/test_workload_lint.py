"""Workload lint: each kind of predicate that cannot prune, its reason and its rewrite,
checked by hand; and through the API, the CLI and the Workload page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.table.model import TableSchema
from engine.workload.lint import lint_sql

SCHEMA = TableSchema((("l_shipdate", "date"), ("l_quantity", "int"), ("l_discount", "float"),
                      ("l_shipmode", "string"), ("l_comment", "string")))


def lint(where: str, **kw):
    return lint_sql(f"SELECT * FROM lineitem l JOIN orders o ON l.l_orderkey = o.o_orderkey "
                    f"WHERE {where}", "lineitem", SCHEMA, "q", **kw)


@pytest.mark.parametrize("where, kind, column, rewrite", [
    ("YEAR(l_shipdate) = 1995", "function-on-column", "l_shipdate",
     "l_shipdate >= DATE '1995-01-01' AND l_shipdate < DATE '1996-01-01'"),
    ("EXTRACT(YEAR FROM l_shipdate) >= 1997", "function-on-column", "l_shipdate",
     "l_shipdate >= DATE '1997-01-01'"),
    ("YEAR(l_shipdate) < 1993", "function-on-column", "l_shipdate", "l_shipdate < DATE '1993-01-01'"),
    ("l_quantity + 1 > 5", "function-on-column", "l_quantity", "l_quantity > 4"),
    ("10 < l_quantity - 2", "function-on-column", "l_quantity", "l_quantity > 12"),
    ("CAST(l_quantity AS VARCHAR) = '7'", "function-on-column", "l_quantity",
     "compare l_quantity with a constant of its own type (l_quantity = ...)"),
    ("SUBSTRING(l_shipmode, 1, 2) = 'AI'", "function-on-column", "l_shipmode",
     "state the condition on l_shipmode itself as a range (l_shipmode = ...)"),
    ("l_shipmode LIKE 'AI%'", "like-pattern", "l_shipmode",
     "l_shipmode >= 'AI' AND l_shipmode < 'AJ' AND l_shipmode LIKE 'AI%'"),
    ("l_comment LIKE '%fast%'", "like-pattern", "l_comment", None),
    ("(l_discount > 0.05 OR o_totalprice > 10)", "or-across-tables", "l_discount",
     "split it into a UNION of two queries, each filtering one table"),
])
def test_each_unprunable_predicate(where, kind, column, rewrite):
    findings = lint(where)
    assert [(f.kind, f.column, f.rewrite) for f in findings] == [(kind, column, rewrite)]
    assert findings[0].reason and findings[0].query_id == "q"


@pytest.mark.parametrize("where", [
    "l_shipdate >= DATE '1995-01-01'", "l_quantity BETWEEN 1 AND 5",
    "CAST(l_quantity AS DOUBLE) > 3.5", "CAST(l_shipdate AS TIMESTAMP) > TIMESTAMP '1995-01-01'",
    "(l_quantity < 3 OR l_quantity > 40)", "o_totalprice > 10", "l_quantity = l_discount",
])
def test_predicates_that_prune_or_are_not_ours_give_no_finding(where):
    assert lint(where) == []


def test_a_filter_on_no_column_of_the_table():
    findings = lint_sql("SELECT * FROM lineitem l JOIN orders o ON l.l_orderkey = o.o_orderkey "
                        "WHERE o.o_totalprice > 10", "lineitem", SCHEMA, "q", has_ranges=False)
    assert [f.kind for f in findings] == ["no-prunable-predicate"]
    assert lint_sql("SELECT * FROM lineitem", "lineitem", SCHEMA, "q", has_ranges=False) == []


@pytest.mark.spark
def test_lint_through_api_cli_and_page(tmp_path, spark, capsys, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from app_workspace import build_table
    from engine import api
    from engine.cli import main
    from engine.core.config import load_settings

    home = tmp_path / "home"
    build_table(home, "lineitem", rows=2000, queries=0, spark=spark)
    settings = load_settings({"home": str(home)}, environ={})
    log = tmp_path / "q.sql"
    log.write_text("SELECT * FROM lineitem WHERE YEAR(l_shipdate) = 1995;\n"
                   "SELECT * FROM lineitem WHERE l_shipdate >= DATE '1995-01-01';\n"
                   "SELECT * FROM lineitem WHERE l_shipmode LIKE 'AI%';\n")
    api.import_workload(settings, "lineitem", str(log))
    findings = api.lint_workload(settings, "lineitem")
    assert [(f["kind"], f["column"]) for f in findings] == [
        ("function-on-column", "l_shipdate"), ("like-pattern", "l_shipmode")]
    ids = [f["query_id"] for f in findings]
    assert len(set(ids)) == 2

    assert main(["--home", str(home), "workload", "lint", "lineitem", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == findings
    assert main(["--home", str(home), "workload", "lint", "lineitem"]) == 0
    text = capsys.readouterr().out
    assert "2 predicate(s) cannot prune" in text
    assert "rewrite: l_shipdate >= DATE '1995-01-01' AND l_shipdate < DATE '1996-01-01'" in text

    monkeypatch.setenv("LAYOUT_ADVISOR_HOME", str(home))
    app = str(Path(__file__).resolve().parents[3] / "app" / "streamlit_app.py")
    at = AppTest.from_file(app, default_timeout=120)
    at.session_state["table"] = "lineitem"
    at.session_state["workload_lint_open"] = True  # the lint computes only when opened
    at.run()
    at.switch_page("app_pages/workload.py").run()
    assert not at.exception, [e.value for e in at.exception]
    shown = next(f.value for f in at.dataframe if "rewrite" in f.value.columns)
    assert shown["query_id"].tolist() == ids
