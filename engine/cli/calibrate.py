"""``layout-advisor calibrate [--show | --history [--savings] [--table T] | --queries-on T | --rewrite-on T [--fit line|cell] [--warmup N]] [--rows N,N,N | --max-rows N]``:
measure the cost model's rates, show them, or list every run's predicted rewrite time
beside the measured one (with ``--savings``: its predicted saving beside the verified and
the realized one)."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Mapping

from engine import api
from engine.cli.args import non_negative_int, positive_int
from engine.cli.output import add_json_flag, emit
from engine.core.errors import InvalidParameterError
from engine.core.fmt import format_seconds, human_bytes

_LABELS = {"rewrite_fixed_s": "rewrite job, fixed", "rewrite_read_bytes_per_s": "rewrite read",
           "sort_bytes_per_s": "sort and write", "query_fixed_s": "query, fixed",
           "query_scan_bytes_per_s": "query scan", "fitted_job_s": "fitted layout, job",
           "fitted_key_bytes_per_s": "fitted layout, key", "file_s": "per output file",
           "multi_group_s": "many-group plan", "group_s": "per extra group",
           "multi_group_bytes_per_s": "many-group write",
           "rewrite_cell_bytes": "size unit, per cell", "query_file_s": "query, per file",
           "cold_start_s": "fresh session, +"}


def _value(key: str, value: float, source: str = "") -> str:
    """A term's value; a term the calibration fitted to 0 (e.g. no cost per extra group
    beyond the plan's once-only term) says so, not "not calibrated" (the source says that)."""
    if key == "rewrite_cell_bytes":
        return f"{value:.2f} B" if value else "- (compressed bytes)"
    if not value:
        return "0 (fitted)" if source == "calibrated" else "-"
    if key in ("query_fixed_s", "query_file_s") and value < 0.01:  # fractions of a ms matter
        return f"{value * 1000:.3f} ms"
    if not key.endswith("bytes_per_s"):
        return format_seconds(value)
    return f"{human_bytes(value)}/s"


def _text(data: Mapping[str, Any]) -> str:
    cal = data.get("calibration")
    lines = [f"calibrated {cal['measured_at']} on Spark {cal['spark_master']}" if cal
             else "not calibrated yet: run `layout-advisor calibrate`"]
    items = list((data.get("effective") or {}).items()) + list((data.get("terms") or {}).items())
    for key, item in items:
        lines.append(f"  {_LABELS.get(key, key):<20} {_value(key, item['value'], item['source']):>16}  "
                     f"({item['source']})")
    for p in (cal or {}).get("points", []):
        lines.append(f"  measured: {p['rows']:>9,} rows, {human_bytes(p['bytes']):>10}: rewrite "
                     f"{p['rewrite_s']:.2f} s, read {p['read_s']:.2f} s, "
                     f"query {p['query_s'] * 1000:.1f} ms"
                     + (f", Hilbert {p['fitted_s']:.2f} s" if "fitted_s" in p else "")
                     + (f", {p['files_n']} files {p['files_s']:.2f} s" if "files_s" in p else "")
                     + "".join(f", {p[k + '_n']} groups {p[k + '_s']:.2f} s"
                               for k in ("groups", "groups2") if k + "_s" in p))
    q = (cal or {}).get("queries") or {}
    if q.get("points"):
        pts = q["points"]
        lines.append(f"  query terms measured on {q.get('source', 'the probe')}: {len(pts)} shapes, "
                     f"{min(p['files'] for p in pts)}-{max(p['files'] for p in pts)} files, "
                     f"{min(p['seconds'] for p in pts) * 1000:.1f}-"
                     f"{max(p['seconds'] for p in pts) * 1000:.0f} ms"
                     + (f" ({q['measured_at']})" if q.get("measured_at") else ""))
    demo = (cal or {}).get("demo_probe")
    if demo:
        lines.append(f"  measured, demo-shaped: {demo['rows']:>9,} rows in {demo['files_in']} "
                     f"files: one group {demo['sort_s']:.2f} s, {demo['groups_n']} groups "
                     f"{demo['groups_s']:.2f} s ({demo['groups_files']} files)")
    cold = (cal or {}).get("cold_probe")
    if cold:
        lines.append(f"  measured, cold start: {cold['rows']:>9,} rows in {cold['files_in']} files:"
                     f" first rewrite of the session {cold['first_s']:.2f} s, warm "
                     f"{cold['warm_s']:.2f} s (median of {cold['repeat']})"
                     + ("" if cold.get("fresh") else "; the session was not fresh (a rewrite "
                        "had run in it): no cold start measured"))
    if cal and cal.get("points"):
        top = max(p["rows"] for p in cal["points"])
        lines.append(f"  plans above {top:,} rows are priced by extrapolating these lines "
                     f"(`calibrate --max-rows N` measures up to N)")
    for t in data.get("tables") or []:
        lines.append(f"  table {t['table']}: {t['cell_bytes']:.3f} B per cell (the calibration "
                     f"table's {t['calibration_cell_bytes']:.3f}), measured {t['measured_at']} on "
                     f"snapshot {t['snapshot_id'] or '-'}, {t['points']} sizes"
                     + (f", load {t['load'][0]} -> {t['load'][1]}" if t.get("load") else "")
                     + f" ({t['source']})")
        lines.extend(_table_fit_lines(t))
    missing = data.get("missing") or []
    if missing:
        groups = [k for k in missing if k != "rewrite_cell_bytes"]
        effect = (["plans price compressed bytes"] if "rewrite_cell_bytes" in missing else []) \
            + (["group terms missing from plans"] if groups else [])
        lines.append(f"  this calibration predates {', '.join(missing)}: they count 0 "
                     f"({', '.join(effect)}); run `layout-advisor calibrate` again")
    return "\n".join(lines)


def _table_fit_lines(t: Mapping[str, Any]) -> list[str]:
    """A per-table price's fit (which, and both stored), its points' spread over the runs,
    and the busy-machine warning (``calibrate --rewrite-on``)."""
    out = []
    if t.get("fixed_s") is not None:
        out.append(f"    fit: line, the table's own fixed part {t['fixed_s']:.2f} s per job "
                   f"+ {t['cell_bytes']:.3f} B per cell")
    else:
        out.append("    fit: cell (the calibration's fixed cost held)"
                   + (f"; line asked, not used: {t['fit_fallback']}" if t.get("fit_fallback")
                      else ""))
    for name, f in sorted((t.get("fits") or {}).items()):
        errs = ", ".join(_error(e) for e in f.get("errors") or [])
        out.append(f"    {name} fit: fixed {f.get('rewrite_fixed_s', 0):.2f} s, "
                   f"{f.get('rewrite_cell_bytes', 0):.3f} B per cell; errors at the sizes {errs}")
    for p in t.get("spread") or []:
        runs = p["runs_s"]
        lo, hi = min(runs), max(runs)
        out.append(f"    {p['rows']:>11,} rows: {p['seconds']:.2f} s median of {len(runs)}, runs "
                   f"{lo:.2f}-{hi:.2f} s (spread {(hi - lo) / p['seconds']:.0%} of the median)"
                   f", error at the fit {_error(p.get('error_at_fit'))}")
    if t.get("busy"):
        out.append(f"    {t['busy']}")
    return out


def _error(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.0f}%"


def _yes_no(flag: bool | None) -> str:
    """A run's "calibrated" column: "?" for a plan priced before it was recorded."""
    return "?" if flag is None else "yes" if flag else "no"


def _session(run: Mapping[str, Any]) -> str:
    """A run's session and the prediction it was compared with: "fresh" (the cold figure),
    "fresh*" (fresh, but the plan had no cold figure: compared warm), "warm", "?" (a run
    that did not record its session).

    >>> [_session(r) for r in ({"fresh_session": True, "compared_with": "cold"},
    ...  {"fresh_session": True, "compared_with": "warm"}, {"fresh_session": False}, {})]
    ['fresh', 'fresh*', 'warm', '?']
    """
    fresh = run.get("fresh_session")
    if fresh is None:
        return "?"
    return ("fresh" if run.get("compared_with") == "cold" else "fresh*") if fresh else "warm"


def _error_summary(count: int, sm: Mapping[str, Any]) -> str:
    """A history summary's error figures (:func:`engine.plans.runs.prediction_history`,
    :func:`engine.plans.savings_history.summarize`) in one line.

    >>> _error_summary(3, {"median_abs_error": 0.2, "mean_abs_error": 0.25,
    ...                    "within_tolerance": 2, "tolerance": 0.3})
    '3 runs: median |error| 20%, mean 25%, 2 within ±30%'
    """
    return (f"{count} runs: median |error| {sm['median_abs_error'] * 100:.0f}%, mean "
            f"{sm['mean_abs_error'] * 100:.0f}%, {sm['within_tolerance']} within "
            f"±{sm['tolerance'] * 100:.0f}%")


def _runs_text(data: Mapping[str, Any], empty: str, header: str,
               row: Callable[[Mapping[str, Any]], list[str]],
               summary: Callable[[Mapping[str, Any], int], str]) -> str:
    """A run history as text: ``empty`` without runs, else ``header``, each run's
    ``row(run)`` lines, then ``summary(data["summary"], number of runs)`` unless it is ""."""
    runs = data.get("runs") or []
    if not runs:
        return empty
    lines = [header]
    for r in runs:
        lines.extend(row(r))
    tail = summary(data.get("summary") or {}, len(runs))
    return "\n".join(lines + ([tail] if tail else []))


def _history_text(data: Mapping[str, Any]) -> str:
    """Predicted vs measured rewrite wall time per run, side by side, then a summary."""
    def row(r: Mapping[str, Any]) -> list[str]:
        return [f"{r['plan_id']:>5}  {r['table']:<14} {r['groups']:>6} "
                f"{human_bytes(r['bytes']):>10} {format_seconds(r['predicted_seconds']):>10} "
                f"{format_seconds(r['measured_seconds']):>10} {_error(r['error']):>7}  "
                f"{r['spark_jobs']:>4}  {_session(r):<7}  {_yes_no(r['calibrated']):<10}  "
                f"{r['ran_at']}"]

    def summary(sm: Mapping[str, Any], _runs: int) -> str:
        return _error_summary(sm["with_error"], sm) if sm.get("with_error") else ""

    return _runs_text(data, "no runs with a recorded cost check yet",
                      f"{'plan':>5}  {'table':<14} {'groups':>6} {'size':>10} {'predicted':>10} "
                      f"{'measured':>10} {'error':>7}  {'jobs':>4}  session  calibrated  ran at",
                      row, summary)


def _savings_text(data: Mapping[str, Any]) -> str:
    """Predicted, verified and realized saving per run (bytes over the decision window),
    the error, the run's verdict (UNDERDELIVERED with the reason), then a summary.

    >>> print(_savings_text({"runs": [{"plan_id": 2, "table": "t", "policy": "wair",
    ...     "window_queries": 50, "predicted_bytes": 100 * 2**20, "verified_bytes": None,
    ...     "realized_bytes": 80 * 2**20, "error": -0.2, "underdelivered": False,
    ...     "reason": "saved 80.0 MiB", "rolled_back": False, "ran_at": "2026-01-01T00:00:00"}],
    ...     "summary": {"runs": 1, "with_error": 1, "median_abs_error": 0.2, "mean_abs_error": 0.2,
    ...     "within_tolerance": 1, "tolerance": 0.3, "underdelivered": 0, "verified": 0}}))
    ... # doctest: +NORMALIZE_WHITESPACE
     plan  table          policy  window  predicted   verified   realized   error  verdict  ran at
        2  t              wair        50  100.0 MiB          -   80.0 MiB    -20%  kept     2026-01-01T00:00:00
    1 runs: median |error| 20%, mean 20%, 1 within ±30%; 0 underdelivered; 0 verified before the run
    """
    def row(r: Mapping[str, Any]) -> list[str]:
        def size(key: str) -> str:
            return "-" if r.get(key) is None else human_bytes(r[key])

        verdict = ("?" if r.get("underdelivered") is None
                   else "UNDERDELIVERED" if r["underdelivered"] else "kept")
        lines = [f"{r['plan_id']:>5}  {r['table']:<14} {r['policy']:<7} "
                 f"{r['window_queries']:>6} {size('predicted_bytes'):>10} "
                 f"{size('verified_bytes'):>10} {size('realized_bytes'):>10} "
                 f"{_error(r.get('error')):>7}  {verdict:<7}  {r['ran_at']}"]
        if r.get("underdelivered") or r.get("realized_bytes") is None:
            lines.append(f"{'':>7}{r.get('reason') or ''}"
                         + (" (rolled back)" if r.get("rolled_back") else ""))
        return lines

    def summary(sm: Mapping[str, Any], runs: int) -> str:
        count = sm.get("runs", runs)
        head = _error_summary(count, sm) if sm.get("with_error") else f"{count} runs"
        return (f"{head}; {sm.get('underdelivered', 0)} underdelivered; "
                f"{sm.get('verified', 0)} verified before the run")

    return _runs_text(data, "no run has recorded its realized saving yet",
                      f"{'plan':>5}  {'table':<14} {'policy':<7} {'window':>6} {'predicted':>10} "
                      f"{'verified':>10} {'realized':>10} {'error':>7}  verdict  ran at",
                      row, summary)


def _rows(text: str | None) -> list[int] | None:
    if not text:
        return None
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InvalidParameterError(f"--rows: expected sizes like 50000,200000,800000, "
                                    f"got {text!r}") from None


def _say(message: str) -> None:
    """A progress line of the long run, on stderr (stdout stays the answer, ``--json`` too)."""
    print(f"calibrate: {message}", file=sys.stderr, flush=True)


def _run(args: argparse.Namespace, ws: "api.Workspace") -> int:
    if args.savings and not args.history:
        raise InvalidParameterError("--savings: only with --history")
    if args.history and args.savings:
        emit(args, api.savings_history(ws, args.table).to_json(), _savings_text)
        return 0
    if args.history:
        emit(args, api.prediction_history(ws, args.table), _history_text)
        return 0
    if args.table:
        raise InvalidParameterError("--table: only with --history")
    if args.rewrite_on and args.rows:
        raise InvalidParameterError("--rows: not with --rewrite-on (it samples the table's "
                                    "own files up to --max-rows)")
    for flag, value in (("--fit", args.fit), ("--warmup", args.warmup)):
        if value is not None and not args.rewrite_on:
            raise InvalidParameterError(f"{flag}: only with --rewrite-on TABLE")
    if args.queries_on:
        api.calibrate_queries(ws, table=args.queries_on, repeat=args.repeat)
    elif args.rewrite_on:
        got = api.calibrate_rewrite(ws, table=args.rewrite_on, repeat=args.repeat,
                                    max_rows=args.max_rows, fit=args.fit, warmup=args.warmup,
                                    progress=_say)
        _say(f"table {got['table']}: {got['rewrite_cell_bytes']:.3f} B per cell"
             + (f" + its own fixed part {got['rewrite_fixed_s']:.2f} s (line fit)"
                if got.get("rewrite_fixed_s") is not None else " (cell fit)")
             + f" (the calibration table's {got['calibration_cell_bytes']:.3f}), stored in "
             f"{got['path']}")
        if got.get("fit_fallback"):
            _say(f"line fit not used: {got['fit_fallback']}")
        if got.get("busy"):
            print(f"layout-advisor: {got['busy']}", file=sys.stderr, flush=True)
    elif not args.show:
        api.calibrate(ws, rows=_rows(args.rows), repeat=args.repeat,
                      max_rows=args.max_rows)
    emit(args, api.show_calibration(ws), _text)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "calibrate", help="measure rewrite and query costs on the configured Spark",
        description="Measure a rewrite job's fixed cost, the read and sort-and-write rates "
                    "(Spark) and a query's fixed cost, cost per file and scan rate per "
                    "projected byte (DuckDB, on query shapes like the workload's) at a few sizes; "
                    "store them in the workspace. Configured values override them.")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--show", action="store_true", help="print the stored rates, measure nothing")
    mode.add_argument("--history", action="store_true",
                      help="every run's predicted rewrite time beside the measured one")
    p.add_argument("--table", help="with --history: only this table's runs")
    p.add_argument("--savings", action="store_true",
                   help="with --history: every run's predicted saving (bytes over the "
                        "decision window) beside the verified and the realized one, instead "
                        "of the rewrite time")
    mode.add_argument("--queries-on", metavar="TABLE",
                      help="measure only the query terms, on TABLE's files and its imported "
                           "workload's queries (the rest of the calibration is kept)")
    mode.add_argument("--rewrite-on", metavar="TABLE",
                      help="measure TABLE's own rewrite price per cell on samples of its files "
                           "(up to --max-rows; nothing committed); its plans use it from then on")
    p.add_argument("--fit", choices=api.PRICE_FITS, default=None,
                   help="with --rewrite-on: line (default: the table's own fixed part and "
                        "price per cell; falls back to cell when it cannot be trusted) or cell "
                        "(only the price per cell, the calibration's fixed cost held)")
    p.add_argument("--warmup", type=non_negative_int, default=None, metavar="N",
                   help="with --rewrite-on: untimed runs of the smallest sample first "
                        "(default 3)")
    p.add_argument("--repeat", type=positive_int, default=None,
                   help="runs per size, the median kept (default 3)")
    sizes = p.add_mutually_exclusive_group()
    sizes.add_argument("--rows", help="comma-separated sizes in rows (default: from --max-rows)")
    sizes.add_argument("--max-rows", type=positive_int, default=None,
                       help="calibrate at 1/16, 1/4 and all of this many rows (default "
                            "1600000, about two minutes on 2 cores; near the plans' size "
                            "extrapolates best); with --rewrite-on, the largest sample: "
                            "1/4, 1/2 and all of the table's files within this many rows")
    add_json_flag(p)
    p.set_defaults(func=_run)
