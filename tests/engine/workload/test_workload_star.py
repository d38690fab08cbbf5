"""Star schemas: ranges through equi-joins and dimension lookups (golden fixtures), the
lookup's cache, cap and safety, and what `workload show` and the lint say about them."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from engine import api
from engine.cli import main
from engine.core.config import load_settings
from engine.table.model import TableSchema
from engine.table.store import TableStore
from engine.workload import boxes as bx
from engine.workload.lookup import (DimensionInfo, DimensionLookups, DimensionPredicate,
                                    KeyRuns, dimension_predicate)
from engine.workload.sql.extract import extract_fragments
from star_helpers import customer_demographics, date_dim, item, register
from star_helpers import star_workspace as build_star_workspace

STAR = Path(__file__).resolve().parents[2] / "fixtures" / "workloads" / "star"

STORE_SALES = TableSchema((
    ("ss_sold_date_sk", "int"), ("ss_item_sk", "int"), ("ss_customer_sk", "int"),
    ("ss_cdemo_sk", "int"), ("ss_store_sk", "int"), ("ss_quantity", "int"),
    ("ss_net_paid", "decimal")))
CATALOG_SALES = TableSchema((
    ("cs_sold_date_sk", "int"), ("cs_item_sk", "int"), ("cs_bill_cdemo_sk", "int"),
    ("cs_net_paid", "decimal")))
WEB_SALES = TableSchema((
    ("ws_sold_date_sk", "int"), ("ws_item_sk", "int"), ("ws_bill_cdemo_sk", "int"),
    ("ws_net_paid", "decimal")))
FACTS = {"store_sales": STORE_SALES, "catalog_sales": CATALOG_SALES, "web_sales": WEB_SALES}



# --- the fixture files --------------------------------------------------------------------

def _cases(path: Path) -> list[tuple[str, str, dict[str, list[dict]]]]:
    """(name, sql, {fact table: expected scans}) of every case of a fixture file."""
    cases, name, sql, expect = [], None, [], {}

    def close() -> None:
        if name is not None:
            assert expect, f"{path.name}: case {name} has no expect line"
            cases.append((name, "\n".join(sql), dict(expect)))

    for line in path.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("-- case:"):
            close()
            name, sql, expect = stripped.split(":", 1)[1].strip(), [], {}
        elif stripped.startswith("-- expect "):
            table, data = stripped[len("-- expect "):].split(":", 1)
            expect[table.strip()] = json.loads(data)
        elif stripped.startswith("--") or not stripped:
            continue
        else:
            sql.append(line)
    close()
    return cases


def _canonical(frag, schema: TableSchema, with_sources: bool) -> dict:
    types = dict(schema.columns)
    out = {"boxes": sorted(json.dumps({c: bx.format_range(r, types[c])
                                       for c, r in sorted(box.items())}) for box in frag.boxes)}
    if with_sources:
        kinds: dict[str, set] = {}
        for s in frag.sources:
            kinds.setdefault(s.column, set()).add(s.kind)
        out["sources"] = {c: sorted(k) for c, k in sorted(kinds.items())}
    return out


def _expected(scan: dict) -> dict:
    out = {"boxes": sorted(json.dumps(dict(sorted(b.items()))) for b in scan["boxes"])}
    if "sources" in scan:
        out["sources"] = {c: sorted(k) for c, k in sorted(scan["sources"].items())}
    return out


def _check(sql: str, expect: dict[str, list[dict]], lookups: DimensionLookups | None) -> None:
    for table, scans in expect.items():
        schema = FACTS[table]
        frags = extract_fragments(sql, table, schema, "q1", lookups=lookups)
        got = [_canonical(f, schema, "sources" in e) for f, e in zip(frags, scans)]
        assert len(frags) == len(scans), f"{table}: {len(frags)} scans"
        assert got == [_expected(e) for e in scans], table


@pytest.mark.parametrize("name,sql,expect", _cases(STAR / "propagation.sql"),
                         ids=lambda v: v if isinstance(v, str) and " " not in v else "")
def test_golden_propagation(name: str, sql: str, expect: dict) -> None:
    _check(sql, expect, None)


# --- registered dimension tables --------------------------------------------------------

@pytest.fixture(scope="module")
def star_settings(tmp_path_factory: pytest.TempPathFactory):
    """A workspace with date_dim, item and customer_demographics registered."""
    root = tmp_path_factory.mktemp("star")
    settings = load_settings({"home": str(root / "home")})
    for name, data in (("date_dim", date_dim()), ("item", item()),
                       ("customer_demographics", customer_demographics())):
        register(settings, root / "data", name, data)
    return settings


@pytest.fixture(scope="module")
def star_lookups(star_settings) -> DimensionLookups:
    return api.dimension_lookups(api.Workspace(star_settings))


@pytest.mark.parametrize("name,sql,expect", _cases(STAR / "lookups.sql"),
                         ids=lambda v: v if isinstance(v, str) and " " not in v else "")
def test_golden_lookups(name: str, sql: str, expect: dict, star_lookups) -> None:
    _check(sql, expect, star_lookups)


def test_fixture_files_cover_the_star_shapes() -> None:
    names = {n for f in ("propagation.sql", "lookups.sql") for n, _, _ in _cases(STAR / f)}
    for required in ("date_year", "item_category", "customer_demographics",
                     "multi_fact_union_all_branches", "multi_fact_union_all_joined_outside",
                     "outer_join_does_not_look_up", "left_join_preserved_fact_does_not_propagate",
                     "cte_chain", "subquery_chain", "nested_subqueries"):
        assert required in names


def test_lookup_source_names_dimension_snapshot_and_filter(star_settings, star_lookups) -> None:
    sql = ("select count(*) from store_sales, date_dim where ss_sold_date_sk = d_date_sk "
           "and d_year = 2000 and d_moy = 11")
    [frag] = extract_fragments(sql, "store_sales", STORE_SALES, "q", lookups=star_lookups)
    [src] = frag.sources
    snapshot = TableStore(star_settings).current_id("date_dim")
    assert (src.column, src.kind, src.table, src.via, src.snapshot, src.predicate) == \
        ("ss_sold_date_sk", "lookup", "date_dim", "d_date_sk", snapshot,
         "d_year = 2000 AND d_moy = 11")
    assert src.describe() == (f"ss_sold_date_sk: looked up in date_dim.d_date_sk at snapshot "
                              f"{snapshot} (d_year = 2000 AND d_moy = 11)")


def test_merged_lookup_says_so(star_lookups) -> None:
    sql = "select 1 from store_sales, date_dim where ss_sold_date_sk = d_date_sk and d_dom = 1"
    [frag] = extract_fragments(sql, "store_sales", STORE_SALES, "q", lookups=star_lookups)
    [src] = frag.sources
    assert len(frag.boxes) == 16
    assert src.note == ("36 key runs merged to 16 ranges across the smallest gaps "
                        "(setting lookup_max_ranges: 16)")


def test_lookup_merges_across_the_smallest_key_gaps(star_settings) -> None:
    # item's keys 1..60, Books on 1-10 and 31-40: Books or item 25, 27 or 55 gives the runs
    # [1, 10], [25], [27], [31, 40], [55] with gaps of 14, 1, 3 and 14 keys between them;
    # at most three ranges: the gaps of 1 and 3 keys are merged, the two of 14 kept.
    ws = api.Workspace(load_settings({"home": str(star_settings.home), "lookup_max_ranges": 3}))
    sql = ("select 1 from store_sales, item where ss_item_sk = i_item_sk and "
           "(i_category = 'Books' or i_item_sk in (25, 27, 55))")
    [frag] = extract_fragments(sql, "store_sales", STORE_SALES, "q",
                               lookups=api.dimension_lookups(ws))
    assert bx.format_predicate(frag.boxes) == ("ss_item_sk in [1, 10] OR ss_item_sk in [25, 40] "
                                               "OR ss_item_sk = 55")
    assert frag.sources[0].note == ("5 key runs merged to 3 ranges across the smallest gaps "
                                    "(setting lookup_max_ranges: 3)")


def test_lint_text_does_not_call_merged_lookups_unprunable() -> None:
    from engine.cli.workload import lint_text

    merged = {"query_id": "q1", "kind": "widened-lookup", "predicate": "i_category = 'Books'",
              "reason": "scattered", "rewrite": None}
    plain = {"query_id": "q2", "kind": "no-prunable-predicate", "predicate": "f(x) = 1",
             "reason": "a function", "rewrite": None}
    assert lint_text([merged, plain]).splitlines()[0] == (
        "1 predicate(s) cannot prune; 1 prune only through ranges merged from scattered "
        "dimension keys:")
    assert lint_text([merged]).splitlines()[0] == (
        "1 prune only through ranges merged from scattered dimension keys:")
    assert lint_text([plain]).splitlines()[0] == "1 predicate(s) cannot prune:"


def test_lookup_cap_follows_the_setting(star_settings) -> None:
    ws = api.Workspace(load_settings({"home": str(star_settings.home), "lookup_max_ranges": 40}))
    sql = "select 1 from store_sales, date_dim where ss_sold_date_sk = d_date_sk and d_dom = 1"
    [frag] = extract_fragments(sql, "store_sales", STORE_SALES, "q",
                               lookups=api.dimension_lookups(ws))
    assert len(frag.boxes) == 36 and frag.sources[0].note is None


# --- the lookup's cache and its predicate -------------------------------------------------

class _CountingSource:
    """A DimensionSource whose data the test changes: it answers with the keys of
    ``self.rows`` (key -> year) and counts how often it is asked."""

    def __init__(self) -> None:
        self.rows = {k: 2000 for k in range(10, 20)}
        self.snapshot = "1"
        self.calls = 0

    def describe(self, table: str) -> DimensionInfo | None:
        schema = TableSchema((("d_date_sk", "int"), ("d_year", "int")))
        return DimensionInfo(table, schema, self.snapshot, self.snapshot) \
            if table == "date_dim" else None

    def key_runs(self, info, key, predicate, limit) -> KeyRuns:
        self.calls += 1
        keys = sorted(k for k, year in self.rows.items() if year == predicate.params["p1"])
        return KeyRuns(((keys[0], keys[-1]),), 1, keys[0], keys[-1])


def test_lookups_are_cached_per_dimension_snapshot() -> None:
    source, cache = _CountingSource(), {}
    sql = "select 1 from store_sales, date_dim where ss_sold_date_sk = d_date_sk and d_year = 2000"

    def ranges() -> tuple:
        lookups = DimensionLookups(source, cache=cache)  # one per import, one shared cache
        [frag] = extract_fragments(sql, "store_sales", STORE_SALES, "q", lookups=lookups)
        return bx.format_predicate(frag.boxes), frag.sources[0].snapshot

    assert ranges() == ("ss_sold_date_sk in [10, 19]", "1")
    assert ranges() == ("ss_sold_date_sk in [10, 19]", "1") and source.calls == 1
    source.rows = {k: 2000 for k in range(30, 45)}  # the dimension changed: a new snapshot
    source.snapshot = "2"
    assert ranges() == ("ss_sold_date_sk in [30, 44]", "2") and source.calls == 2


def test_a_changed_dimension_is_looked_up_again(settings, tmp_path: Path) -> None:
    import pyarrow.compute as pc

    ws = api.Workspace(settings)  # one workspace: one lookup cache, one DuckDB source
    sql = "select 1 from store_sales, date_dim where ss_sold_date_sk = d_date_sk and d_year = 2000"

    def ranges() -> str:
        [frag] = extract_fragments(sql, "store_sales", STORE_SALES, "q",
                                   lookups=api.dimension_lookups(ws))
        return bx.format_predicate(frag.boxes)

    register(ws, tmp_path / "a", "date_dim", date_dim())
    assert ranges() == "ss_sold_date_sk in [2451545, 2451910]"
    ws.tables.drop("date_dim")  # registered again with every year one later
    days = date_dim()
    later = days.set_column(days.schema.get_field_index("d_year"), "d_year",
                            pc.add(days["d_year"], 1))
    register(ws, tmp_path / "b", "date_dim", later)
    assert ranges() == "ss_sold_date_sk in [2451180, 2451544]"


def test_dimension_predicate_quotes_names_and_binds_values() -> None:
    schema = TableSchema((('we"ird', "string"), ("d_year", "int")))
    pred, left = dimension_predicate(
        [__import__("sqlglot").parse_one("\"we\"\"ird\" = 'x'' or 1=1 --' and d_year > 1")],
        schema)
    assert pred.sql == '"we""ird" = $p1 AND "d_year" > $p2'
    assert dict(pred.params) == {"p1": "x' or 1=1 --", "p2": 1} and left == []


def test_duckdb_source_reads_the_live_files(star_settings) -> None:
    from engine.spark.dimensions import DuckDimensionSource

    source = DuckDimensionSource(TableStore(star_settings))
    info = source.describe("item")
    pred = DimensionPredicate('"i_category" = $p1', {"p1": "Books"}, "i_category = 'Books'")
    assert source.key_runs(info, "i_item_sk", pred, 16) == KeyRuns(((1, 10), (31, 40)), 2, 1, 40)
    assert source.key_runs(info, "i_item_sk", pred, 1) == KeyRuns(((1, 40),), 2, 1, 40)
    assert source.describe("no_such_table") is None


# --- what the user sees ------------------------------------------------------------------

@pytest.fixture
def star_workspace(settings, tmp_path: Path):
    """``settings`` with store_sales and date_dim registered and STAR_LOG imported."""
    build_star_workspace(settings, tmp_path)
    return settings


def test_workload_show_json_lists_the_sources(star_workspace) -> None:
    rows = api.show_workload(star_workspace, "store_sales")
    snapshot = TableStore(star_workspace).current_id("date_dim")
    assert rows[0]["boxes"] == [{"ss_sold_date_sk": {"min": 2451545, "max": 2451910,
                                                     "min_inclusive": True,
                                                     "max_inclusive": True}}]
    assert rows[0]["sources"] == [{"column": "ss_sold_date_sk", "kind": "lookup",
                                   "via": "d_date_sk", "table": "date_dim",
                                   "snapshot": snapshot, "predicate": "d_year = 2000"}]
    assert rows[1]["boxes"] == [] and [s["kind"] for s in rows[1]["sources"]] == ["unmapped"]
    assert rows[2]["sources"] == [{"column": "ss_quantity", "kind": "direct"}]


def test_cli_show_has_a_source_column(star_workspace, capsys) -> None:
    assert main(["--home", str(star_workspace.home), "workload", "show", "store_sales"]) == 0
    out = capsys.readouterr().out
    snapshot = TableStore(star_workspace).current_id("date_dim")
    header, first = out.splitlines()[1:3]
    assert header.split() == ["query_id", "ts", "cols", "predicate", "source"]
    assert first.endswith(f"ss_sold_date_sk: lookup date_dim@{snapshot}")


def test_lint_says_which_table_toregister(star_workspace) -> None:
    findings = api.lint_workload(star_workspace, "store_sales")
    [finding] = [f for f in findings if f["kind"] == "unmapped-join"]
    assert finding["column"] == "ss_store_sk"
    assert finding["predicate"] == "s_state = 'TN'"
    assert finding["rewrite"] == ("register store (`layout-advisor table register store PATH`) "
                                  "to turn its filter into ranges")
    assert not any(f["kind"] == "no-prunable-predicate" and f["query_id"] == finding["query_id"]
                   for f in findings)


def test_import_without_the_dimension_keeps_no_range(settings, tmp_path: Path) -> None:
    register(settings, tmp_path / "data", "store_sales", pa.table({
        "ss_sold_date_sk": pa.array([1, 2, 3], pa.int64()),
        "ss_net_paid": pa.array([1.0, 2.0, 3.0])}), files=1)
    log = tmp_path / "q.sql"
    log.write_text("select sum(ss_net_paid) from store_sales, date_dim "
                   "where ss_sold_date_sk = d_date_sk and d_year = 2000;")
    api.import_workload(settings, "store_sales", str(log))
    [row] = api.show_workload(settings, "store_sales")
    assert row["boxes"] == []
    [finding] = api.lint_workload(settings, "store_sales")
    assert (finding["kind"], finding["column"], finding["predicate"]) == \
        ("unmapped-join", "ss_sold_date_sk", "d_year = 2000")
    assert "register date_dim" in finding["rewrite"]
