"""A run as the dashboard shows it: progress and ETA, predicted against measured cost
and saving (the re-estimate on the decision window and the saving realized by later
queries), the query log's own measurements and the history of prediction errors.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

from app.views.formatting import fmt_bytes, fmt_money, fmt_seconds, plural


def run_progress(progress: Mapping[str, Any]) -> tuple[float, str, str]:
    """(fraction done, message, status) of a plan's ``plan_progress``."""
    total = progress.get("groups_total") or 0
    frac = (progress.get("groups_done") or 0) / total if total else 0.0
    return min(1.0, float(frac)), str(progress.get("message") or ""), str(progress.get("status"))


def eta_text(info: Mapping[str, Any]) -> str:
    """One line: groups and rows done, elapsed, ETA and what it rests on.

    >>> eta_text({"groups_done": 1, "groups_total": 4, "rows_written": 2500, "rows_total": 10000,
    ...           "elapsed_s": 12.0, "eta_s": 30.5, "fraction": 0.2, "calibrated": True})
    'group 1 of 4 verified · 2,500 of 10,000 rows written · 12.0 s elapsed · about 30.5 s left (calibrated model and progress so far)'
    """
    basis = ("calibrated model" if info.get("calibrated") else "default-rate model (run "
             "`layout-advisor calibrate`)") + (" and progress so far" if info.get("fraction", 0) >= 0.05 else "")
    return (f"group {int(info.get('groups_done') or 0)} of {int(info.get('groups_total') or 0)} verified · "
            f"{int(info.get('rows_written') or 0):,} of {int(info.get('rows_total') or 0):,} rows written · "
            f"{fmt_seconds(info.get('elapsed_s'))} elapsed · about "
            f"{fmt_seconds(info.get('eta_s'))} left ({basis})")


def cancel_text(out: Mapping[str, Any]) -> str:
    """What became of a cancel request, in one sentence."""
    if out.get("cancelled"):
        return (f"Plan {out['id']} cancelled by {out.get('by')} at {out.get('at')}: nothing was "
                "committed, the files it wrote were removed, the table is unchanged.")
    if out.get("status") == "running":
        return (f"Cancel of plan {out['id']} requested; the run stops before its commit.")
    return f"Plan {out['id']} is {out.get('status')}: the cancel came too late."


def cost_check_frame(check: Mapping[str, Any]) -> pd.DataFrame:
    """A run's ``cost_check`` as rows of predicted against measured.

    Example:
    >>> cost_check_frame({"predicted_seconds": 6.46, "measured_wall_seconds": 4.73,
    ...     "measured_cpu_seconds": 7.0, "predicted_money": 1e-06, "measured_money": 0.02,
    ...     "predicted_bytes_read": 3.5e6, "measured_bytes_read": 3670016, "error": 0.366}
    ...     )["measured"].tolist()
    ['4.7 s (7.0 s CPU)', '$0.02', '3.5 MB']
    """
    return pd.DataFrame([
        {"": "rewrite time" + (" (fresh session)" if check.get("compared_with") == "cold" else ""),
         "predicted": fmt_seconds(check.get("predicted_seconds")),
         "measured": f"{fmt_seconds(check.get('measured_wall_seconds'))} "
                     f"({fmt_seconds(check.get('measured_cpu_seconds'))} CPU)",
         "error": "–" if check.get("error") is None else f"{check['error'] * 100:+.0f} %"},
        {"": "money", "predicted": fmt_money(check.get("predicted_money")),
         "measured": fmt_money(check.get("measured_money")), "error": ""},
        {"": "bytes read", "predicted": fmt_bytes(check.get("predicted_bytes_read")),
         "measured": fmt_bytes(check.get("measured_bytes_read")), "error": ""},
    ])


#: the two scopes of a run's saving, as every page names them
RE_ESTIMATED_LABEL = "re-estimated on the decision window"
REALIZED_LABEL = "realized (later queries)"


def later_saving_label(later: Mapping[str, Any] | None) -> str:
    """One cell for :func:`engine.api.realized_savings`: the saving over the queries
    imported after the run, or why there is none yet.

    Example:
    >>> later_saving_label({"status": "waiting for later queries", "queries": 0})
    'waiting for later queries'
    >>> later_saving_label({"status": "measured", "queries": 1, "saving_cpu_seconds": 2.5})
    '2.5 s CPU over 1 query'
    """
    if not later or later.get("status") in (None, "not run"):
        return "–"
    if later.get("status") != "measured":
        return str(later["status"])
    n = int(later.get("queries") or 0)
    return (f"{fmt_seconds(later.get('saving_cpu_seconds'))} CPU over {n:,} "
            + ("query" if n == 1 else "queries"))


def history_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The reclustering history as shown: predicted beside measured, readable units.

    Example:
    >>> history_frame([{"plan": 1, "policy": "wair", "status": "succeeded", "finished_at":
    ...     "2026-01-01T10:00:00+00:00", "partitions_rewritten": 43, "bytes_written": 3357300,
    ...     "predicted_cost_cpu_seconds": 0.087, "predicted_cost_money": 1.2e-06,
    ...     "measured_seconds": 14.9, "predicted_saving_cpu_seconds": 0.158,
    ...     "realized_saving_cpu_seconds": 0.15, "new_snapshot": "2",
    ...     "later": {"status": "measured", "queries": 60, "saving_cpu_seconds": 0.2}}]
    ...     ).iloc[0].to_dict()
    ... # doctest: +NORMALIZE_WHITESPACE
    {'plan': 1, 'policy': 'wair', 'status': 'succeeded', 'finished': '2026-01-01 10:00:00',
     'new snapshot': '2', 'partitions': 43, 'written': '3.2 MB', 'predicted cost': '87 ms CPU',
     'measured time': '14.9 s', 'predicted cost ($)': '< $0.01',
     'predicted saving / window': '158 ms CPU',
     're-estimated on the decision window': '150 ms CPU',
     'realized (later queries)': '200 ms CPU over 60 queries'}

    ``realized_saving_cpu_seconds`` is the run's own replay of the window the plan was
    decided on (scope "re-estimated"); ``later`` is :func:`engine.api.realized_savings`,
    the queries imported after the run (WAIR section 4.3).
    """
    out = []
    for r in rows:
        out.append({
            "plan": r["plan"], "policy": r["policy"], "status": r["status"],
            "finished": str(r.get("finished_at") or "")[:19].replace("T", " "),
            "new snapshot": r.get("new_snapshot") or "–",
            "partitions": r.get("partitions_rewritten"),
            "written": fmt_bytes(r.get("bytes_written")),
            "predicted cost": fmt_seconds(r.get("predicted_cost_cpu_seconds")) + " CPU",
            "measured time": fmt_seconds(r.get("measured_seconds")),
            "predicted cost ($)": fmt_money(r.get("predicted_cost_money")),
            "predicted saving / window": fmt_seconds(r.get("predicted_saving_cpu_seconds")) + " CPU",
            RE_ESTIMATED_LABEL: (fmt_seconds(r["realized_saving_cpu_seconds"]) + " CPU"
                                 if r.get("realized_saving_cpu_seconds") is not None else "–"),
            REALIZED_LABEL: later_saving_label(r.get("later")),
        })
    return pd.DataFrame(out)


def realized_frame(realized: Mapping[str, Any], label: str = "realized",
                   predicted_label: str = "predicted") -> pd.DataFrame:
    """Predicted against measured saving of a run (one of its two scopes, ``label``), in
    bytes and CPU time.

    Example:
    >>> realized_frame({"predicted_saving_bytes": 2048, "saving_bytes": 1024,
    ...     "predicted_saving_cpu_seconds": 2.0, "saving_cpu_seconds": 1.5},
    ...     REALIZED_LABEL).values.tolist()
    [['predicted', '2.0 KB', '2.0 s'], ['realized (later queries)', '1.0 KB', '1.5 s']]
    """
    return pd.DataFrame([
        {"": predicted_label, "bytes saved": fmt_bytes(realized.get("predicted_saving_bytes")),
         "CPU time saved": fmt_seconds(realized.get("predicted_saving_cpu_seconds"))},
        {"": label, "bytes saved": fmt_bytes(realized.get("saving_bytes")),
         "CPU time saved": fmt_seconds(realized.get("saving_cpu_seconds"))},
    ])


def log_check_frame(log: Mapping[str, Any]) -> pd.DataFrame:
    """The query log's measured bytes of later queries beside the zonemap estimate
    (``realized_savings(...)["log"]``); empty when no later query carries them.

    Example:
    >>> log_check_frame({"queries_with_bytes": 60, "measured_bytes": 3072.0,
    ...     "estimated_bytes": 2048.0, "measured_over_estimated": 1.5,
    ...     "queries_with_duration": 60, "measured_seconds": 2.4}).values.tolist()
    [['bytes scanned', 60, '3.0 KB', '2.0 KB', '150 %'], ['duration', 60, '2.4 s', '–', '']]
    """
    rows = []
    if log.get("queries_with_bytes"):
        ratio = log.get("measured_over_estimated")
        rows.append({"": "bytes scanned", "queries": int(log["queries_with_bytes"]),
                     "measured (log)": fmt_bytes(log.get("measured_bytes")),
                     "estimated (zonemaps)": fmt_bytes(log.get("estimated_bytes")),
                     "measured / estimated": f"{ratio * 100:.0f} %" if ratio is not None else "–"})
    if log.get("queries_with_duration"):
        rows.append({"": "duration", "queries": int(log["queries_with_duration"]),
                     "measured (log)": fmt_seconds(log.get("measured_seconds")),
                     "estimated (zonemaps)": "–", "measured / estimated": ""})
    return pd.DataFrame(rows)


def prediction_frame(runs: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """``prediction_history(...)["runs"]`` as shown: predicted and measured rewrite time
    with the relative error, newest first.

    Example:
    >>> list(prediction_frame([{"plan_id": 3, "policy": "wair", "ran_at": "2026-01-01T10:00:00",
    ...     "groups": 2, "partitions": 43, "bytes": 3.5e6, "predicted_seconds": 6.46,
    ...     "measured_seconds": 4.73, "measured_cpu_seconds": 7.0, "spark_jobs": 2,
    ...     "calibrated": True, "error": 0.366}]).to_dict("records")[0].values())
    [3, 'wair', '2026-01-01 10:00:00', 43, '3.3 MB', '6.5 s', '4.7 s', '+37 %', 'yes']
    """
    rows = [{"plan": r["plan_id"], "policy": r["policy"],
             "ran": str(r.get("ran_at") or "")[:19].replace("T", " "),
             "partitions": r.get("partitions"), "bytes read": fmt_bytes(r.get("bytes")),
             "predicted time": fmt_seconds(r.get("predicted_seconds")),
             "measured time": fmt_seconds(r.get("measured_seconds")),
             "error": "–" if r.get("error") is None else f"{float(r['error']) * 100:+.0f} %",
             "calibrated": ("?" if r.get("calibrated") is None  # not recorded by the plan
                            else "yes" if r["calibrated"] else "no")}
            for r in reversed(list(runs))]
    return pd.DataFrame(rows, columns=["plan", "policy", "ran", "partitions", "bytes read",
                                       "predicted time", "measured time", "error",
                                       "calibrated"])


def prediction_summary(summary: Mapping[str, Any]) -> str:
    """One sentence over ``prediction_history(...)["summary"]``.

    Example:
    >>> prediction_summary({"runs": 3, "with_error": 3, "median_abs_error": 0.2,
    ...     "mean_abs_error": 0.25, "within_tolerance": 2, "tolerance": 0.3})
    '3 runs: median error ±20 %, mean ±25 %; 2 of 3 within ±30 %.'
    """
    runs, n = int(summary.get("runs") or 0), int(summary.get("with_error") or 0)
    if n == 0:
        return f"{plural(runs, 'run')}, none with a measured time to compare."
    return _errors(summary) + "."


def _errors(summary: Mapping[str, Any]) -> str:
    """"N runs: median error ±M %, mean ±A %; W of E within ±T %": the part a rewrite-time
    and a savings history summary share (``summary`` with at least one error)."""
    runs, n = int(summary.get("runs") or 0), int(summary.get("with_error") or 0)
    tol = float(summary.get("tolerance") or 0.0) * 100
    return (f"{plural(runs, 'run')}: median error ±{float(summary['median_abs_error']) * 100:.0f} %, "
            f"mean ±{float(summary['mean_abs_error']) * 100:.0f} %; "
            f"{int(summary.get('within_tolerance') or 0)} of {n} within ±{tol:.0f} %")


#: the verdict cell of a run whose realized saving fell short (shown in red)
UNDERDELIVERED = "underdelivered"

SAVINGS_COLUMNS = ["plan", "policy", "ran", "window", "predicted saving", "verified saving",
                   "realized saving", "error", "verdict"]


def savings_frame(runs: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """``savings_history(...).to_json()["runs"]`` as shown: the bytes the decision window's
    queries no longer read, predicted, verified on a sample (``plan verify``) and realized
    right after the commit, side by side, with the error of the prediction; newest first.

    Example:
    >>> savings_frame([{"plan_id": 4, "policy": "wair", "ran_at": "2026-01-01T10:00:00",
    ...     "window_queries": 50, "predicted_bytes": 2048.0, "verified_bytes": None,
    ...     "realized_bytes": -1024.0, "error": -1.5, "underdelivered": True,
    ...     "rolled_back": True}]).to_dict("records")[0].values()
    dict_values([4, 'wair', '2026-01-01 10:00:00', '50 queries', '2.0 KB', '–', '-1.0 KB', '-150 %', 'underdelivered · rolled back'])
    """
    rows = []
    for r in reversed(list(runs)):
        flag = r.get("underdelivered")
        verdict = "?" if flag is None else UNDERDELIVERED if flag else "kept"
        rows.append({"plan": r["plan_id"], "policy": r["policy"],
                     "ran": str(r.get("ran_at") or "")[:19].replace("T", " "),
                     "window": f"{int(r.get('window_queries') or 0):,} "
                               + ("query" if int(r.get("window_queries") or 0) == 1 else "queries"),
                     "predicted saving": fmt_bytes(r.get("predicted_bytes")),
                     "verified saving": fmt_bytes(r.get("verified_bytes")),
                     "realized saving": fmt_bytes(r.get("realized_bytes")),
                     "error": "–" if r.get("error") is None else f"{float(r['error']) * 100:+.0f} %",
                     "verdict": verdict + (" · rolled back" if r.get("rolled_back") else "")})
    return pd.DataFrame(rows, columns=SAVINGS_COLUMNS)


def underdelivered_red(frame: pd.DataFrame) -> Any:
    """``frame`` (:func:`savings_frame`) styled for ``st.dataframe``: the rows of runs that
    underdelivered in red."""
    def red(row: pd.Series) -> list[str]:
        bad = str(row["verdict"]).startswith(UNDERDELIVERED)
        return ["color: #d62728; font-weight: 600" if bad else ""] * len(row)

    return frame.style.apply(red, axis=1)


def savings_summary(summary: Mapping[str, Any]) -> str:
    """One sentence over ``savings_history(...).to_json()["summary"]``.

    Example:
    >>> savings_summary({"runs": 4, "with_error": 3, "median_abs_error": 0.3,
    ...     "mean_abs_error": 0.5167, "within_tolerance": 2, "tolerance": 0.3,
    ...     "underdelivered": 1, "verified": 1})
    '4 runs: median error ±30 %, mean ±52 %; 2 of 3 within ±30 %; 1 underdelivered; 1 verified before its run.'
    """
    runs, n = int(summary.get("runs") or 0), int(summary.get("with_error") or 0)
    tail = (f"{int(summary.get('underdelivered') or 0)} underdelivered; "
            f"{int(summary.get('verified') or 0)} verified before its run.")
    if n == 0:
        return f"{plural(runs, 'run')}, none with a realized saving to compare; {tail}"
    return f"{_errors(summary)}; {tail}"


def depth_before_after(columns: Sequence[str], before: Sequence[Mapping[str, Any]],
                       after: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Average and max depth of ``columns`` in two ``analyze`` results (base, result)."""
    old = {m["column"]: m for m in before}
    new = {m["column"]: m for m in after}
    rows = []
    for c in columns:
        if c in old and c in new:
            rows.append({"column": c,
                         "average depth before": old[c]["average_depth"],
                         "average depth after": new[c]["average_depth"],
                         "max depth before": old[c].get("max_depth"),
                         "max depth after": new[c].get("max_depth"),
                         "verdict after": new[c].get("verdict")})
    return pd.DataFrame(rows)


def promise_text(predicted: float | None, verified: float | None, realized: float | None) -> str:
    """A run's saving per decision window in one line: predicted by the plan, verified on a
    rewritten sample before approval (``plan verify``) and realized right after the commit,
    the last two as a share of the prediction.

    Example:
    >>> promise_text(2048.0, 1946.0, 2150.0)
    'Saving per window: predicted 2.0 KB · verified 1.9 KB (95 % of predicted) · realized 2.1 KB (105 % of predicted)'
    >>> promise_text(2048.0, None, 2048.0)
    'Saving per window: predicted 2.0 KB · verified – (not verified) · realized 2.0 KB (100 % of predicted)'
    """
    def part(value: float | None, missing: str) -> str:
        if value is None:
            return f"– ({missing})"
        share = f" ({value / predicted * 100:.0f} % of predicted)" if predicted else ""
        return fmt_bytes(value) + share

    return (f"Saving per window: predicted {fmt_bytes(predicted)} · verified "
            f"{part(verified, 'not verified')} · realized {part(realized, 'not measured')}")
