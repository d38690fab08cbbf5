"""A declined decision in plain words: why nothing is proposed, and what would change it.

A DBA who reads "best cut 1 has net cost +0.000967 CPU-s >= 0" learns nothing. This turns
a policy's ``last_decision_`` (its reason and evidence: the window, the candidates, the
cost and saving at Algorithm 2's best cut, the predicted regressions net of which a plan
must still pay off, the budgets of equations 2 and 5) into two sentences. The technical reason stays beside it for those who want it.

Example:
>>> e = explain_no_action("wair", {"reason": "best cut 3 has net cost +0.5 CPU-s >= 0",
...     "window_size": 50, "window_queries": 50, "candidates": 12, "cut": 3,
...     "net_cpu_s": 0.5, "cut_saving_cpu_s": 1.5, "cut_cost_cpu_s": 2.0, "alpha": 1.0})
>>> print(e["why"])
Rewriting the 3 most useful partitions would cost 2 CPU-s and save 1.5 CPU-s over the last 50 queries (75% of its cost): a net cost of +0.5 CPU-s, the smallest of any cut over this window.
>>> print(e["what_would_change"])
It pays off after about 67 queries like these: WAIR doubles its window after a quiet window, so it will look that far back; or set alpha below 1 to act on smaller gains.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from engine.core.fmt import format_number


def explain_no_action(policy: str, decision: Mapping[str, Any]) -> dict[str, str]:
    """``{"why": ..., "what_would_change": ...}`` for a policy that proposed nothing."""
    reason = str(decision.get("reason") or f"policy {policy} proposes nothing")
    declined = _declined_after_proposal(reason)
    if declined:
        return declined
    if policy != "wair":
        return {"why": _sentence(reason),
                "what_would_change": "More partitions deeper than the policy's threshold, or a "
                                     "lower threshold."}
    queries = int(decision.get("window_queries") or 0)
    if reason.startswith("no boundary partition"):
        return _no_candidates(queries)
    if "cut_cost_cpu_s" in decision:
        return _not_worth_it(decision, queries)
    if reason.startswith("net of losses"):
        return _losses(decision, queries)
    if reason.startswith("none of the"):
        return {"why": "Every partition worth rewriting would be rewritten alone or with "
                       "partitions whose key ranges are already apart, so no file's min/max "
                       "could change (Algorithm 1's guard).",
                "what_would_change": "Queries whose boundaries fall inside overlapping "
                                     "partitions, e.g. after new data is ingested."}
    if reason.startswith("after grouping"):
        return _grouped(decision, queries)
    if reason.startswith("cost limit"):
        return {"why": "Earlier rewrites have not yet paid back their cost, and this one would "
                       "push the unpaid total over the cost limit (eq. 2).",
                "what_would_change": "Realized savings from past rewrites as queries arrive, or "
                                     "a higher cost_limit."}
    if reason.startswith("credit budget"):
        return {"why": "The rewrite costs more than the credit earned so far: realized savings "
                       "minus past costs plus c per query seen (eq. 5).",
                "what_would_change": "More queries (each adds c of credit) or realized savings "
                                     "from past rewrites; or a higher credit_allowance_c."}
    return {"why": _sentence(reason), "what_would_change": "A change in the workload."}


#: the reasons with which the plan service declines a policy's proposal: the output check
#: (:func:`engine.policy.output_check.check_output`: the shape the executor writes would not
#: read less) and the table's format (every file of the proposal left out)
OUTPUT_DECLINED = "the output cannot deliver the saving"
FORMAT_DECLINED = "every file the plan would rewrite is left out by the table's format"


def _declined_after_proposal(reason: str) -> dict[str, str] | None:
    """A proposal the policy made and the plan service declined, explained by the decline's
    own reason, whatever the policy (None for a policy's own decline).

    >>> e = _declined_after_proposal("the output cannot deliver the saving: table target: "
    ...     "the table's target rows = 100 rows writes 8 files as 1; sorting rows inside a file "
    ...     "saves nothing at file level")
    >>> e["why"][:60]
    'The output cannot deliver the saving: table target: the tabl'
    """
    if reason.startswith(OUTPUT_DECLINED):
        return {"why": _sentence(reason),
                "what_would_change": "An output the window's queries can skip more of: a "
                                     "smaller target file size in the table's write properties "
                                     "(so the rewritten partitions are not merged into fewer "
                                     "files), row groups inside the files with prune_row_groups "
                                     "on, or queries that filter the plan's sort columns."}
    if reason.startswith(FORMAT_DECLINED):
        return {"why": _sentence(reason),
                "what_would_change": "Compacting the table's merge-on-read deletes, or "
                                     "rewriting the files of its older partition spec, first."}
    return None


def _no_candidates(queries: int) -> dict[str, str]:
    if queries == 0:
        return {"why": "There are no queries in the window to learn from.",
                "what_would_change": "Import the table's query log (layout-advisor workload "
                                     "import)."}
    return {"why": f"None of the last {queries} queries reads a partition it only partly needs: "
                   "the current layout already serves them.",
            "what_would_change": "New queries on other value ranges or columns; the policy "
                                 "looks again at every decision."}


def _not_worth_it(decision: Mapping[str, Any], queries: int) -> dict[str, str]:
    """Algorithm 2's best cut costs more than it saves: its numbers, and the break-even of
    the cut that pays first as each query of the window runs more times (:mod:`engine.policy.breakeven`)."""
    cut = int(decision.get("cut") or 0)
    cost = float(decision["cut_cost_cpu_s"])
    saving = float(decision.get("cut_saving_cpu_s") or 0.0)
    alpha = float(decision.get("alpha") or 1.0)
    net = cost - saving / alpha
    bar = f" (alpha {alpha:g}: the saving must exceed {alpha:g} x the cost)" if alpha != 1 else ""
    share = f" ({saving / cost:.0%} of its cost)" if cost > 0 else ""
    why = (f"Rewriting the {_partitions(cut)} would cost {format_number(cost)} CPU-s and save "
           f"{format_number(saving)} CPU-s over the last {queries} queries{share}: a net cost of "
           f"{_signed(net)} CPU-s"
           f"{bar}, the smallest of any cut over this window.")
    be = decision.get("break_even")
    if be and int(be["cut"]) != cut:
        why += (f" The rewrite closest to paying off, the {_partitions(int(be['cut']))}, "
                f"would cost {format_number(float(be['cost_cpu_s']))} CPU-s and save "
                f"{format_number(float(be['saving_cpu_s']))} CPU-s over those queries "
                f"({float(be['saving_cpu_s']) / float(be['cost_cpu_s']):.0%} of its cost).")
    if be and be.get("queries") and queries > 0:
        k = float(be["factor"])
        lower = _round_down(alpha / k)
        change = (f"Break-even: it would pay if each of these queries ran at least {format_number(k)} "
                  f"times, {int(be['queries']):,} queries like these per window instead of "
                  f"{queries} (at least: this prices the cut as one sort; grouped by layout a "
                  f"plan can cost more). To see that plan: preview with alpha {lower:g} "
                  f"(equation 4 then weighs each saving {format_number(alpha / lower)} times, as a workload "
                  f"that much busier would), or with a window of {int(be['queries']):,} queries "
                  "if the log holds that many; WAIR doubles its window after a quiet window, so "
                  f"it looks that far back by itself. {_OTHERS}")
    elif saving > 0 and queries > 0:
        needed = math.ceil(alpha * cost / saving * queries)
        change = (f"It pays off after about {needed:,} queries like these: WAIR doubles its "
                  "window after a quiet window, so it will look that far back; or set alpha "
                  "below 1 to act on smaller gains.")
    else:
        change = "Queries that read these partitions; or set alpha below 1."
    return {"why": why, "what_would_change": change}


_OTHERS = ("DD or PAW (policy dd, paw) recluster by their own rule, without weighing cost "
           "against saving.")


def _grouped(decision: Mapping[str, Any], queries: int) -> dict[str, str]:
    """Algorithm 2's cut paid as one sort, but grouped by layout (each group its own job)
    the plan costs more than alpha times its saving (eq. 4)."""
    cost = decision.get("grouped_cost_cpu_s")
    saving = decision.get("grouped_saving_cpu_s")
    alpha = float(decision.get("alpha") or 1.0)
    if cost is None or saving is None or not float(saving) > 0:
        return {"why": "Once the partitions are grouped by layout, the rewrite costs more than "
                       f"alpha times what it would save over the last {queries} queries (eq. 4).",
                "what_would_change": "More queries that read these partitions, or a lower "
                                     f"alpha. {_OTHERS}"}
    cost, saving = float(cost), float(saving)
    k = alpha * cost / saving
    parts = int(decision.get("cut") or 0)
    why = (f"Grouped by layout, rewriting the {_partitions(parts)} would cost {format_number(cost)} CPU-s "
           f"and save {format_number(saving)} CPU-s over the last {queries} queries: a net cost of "
           f"{_signed(cost - saving / alpha)} CPU-s" + (f" at alpha {alpha:g}" if alpha != 1 else "")
           + " (eq. 4).")
    lower = _round_down(alpha / k)
    change = (f"Break-even: this plan would pay if each of these queries ran {format_number(k)} times, "
              f"{math.floor(k * queries) + 1:,} queries like these per window "
              f"instead of {queries}. Preview with alpha {lower:g} to see the plan WAIR then "
              f"picks (its cut can grow, and with it the cost). {_OTHERS}")
    return {"why": why, "what_would_change": change}


def _signed(x: float) -> str:
    """``x`` with its sign, by :func:`engine.core.fmt.format_number`.

    >>> _signed(1234.5), _signed(-0.5)
    ('+1,234', '-0.5')
    """
    return ("+" if x >= 0 else "") + format_number(x)


def _round_down(x: float) -> float:
    """``x`` rounded down to two significant figures, strictly below ``x``: an alpha at
    which the cut's net cost is negative, not zero."""
    step = 10.0 ** (math.floor(math.log10(x)) - 1)
    down = math.floor(x / step) * step
    return round(down - step if down >= x else down, 12)


def _partitions(n: int) -> str:
    return f"{n} most useful partition{'s' if n != 1 else ''}"


def _losses(decision: Mapping[str, Any], queries: int) -> dict[str, str]:
    """The plan would save less than it costs once the queries it slows down are counted."""
    saving = float(decision.get("saving_cpu_s") or 0.0)
    loss = float(decision.get("loss_cpu_s") or 0.0)
    cost = float(decision.get("cost_cpu_s") or 0.0)
    cols = [r for r in decision.get("regressions") or [] if r.get("queries")]
    named = ", ".join(f"{r['column']} ({int(r['queries'])} queries"
                      + (f", depth {format_number(float(r['depth_before']))} -> "
                         f"{format_number(float(r['depth_after']))}"
                         if "depth_before" in r else "") + ")" for r in cols[:3])
    tail = (f"net of that it does not pay its cost of {format_number(cost)} CPU-s"
            if decision.get("losses") == "cost" else "it loses more than it gains")
    why = (f"The rewrite would save {format_number(saving)} CPU-s over the last {queries} queries but "
           f"slow down others by {format_number(loss)} CPU-s, because it mixes the order that serves "
           f"their filters{': ' + named if named else ''}; {tail}.")
    return {"why": why,
            "what_would_change": "Fewer queries on the columns it would disorder, or more "
                                 "queries on the rewritten key; set losses=off to judge on "
                                 "gains alone (the paper's equation 3)."}


def _sentence(text: str) -> str:
    text = text.strip()
    return (text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")) if text else text
