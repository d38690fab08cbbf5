"""What-if simulation: a generated scenario replayed against reclustering policies.

``simulate(settings, preset="tpch", rows=..., policies=(...), seed=0, overrides=None,
progress=None)`` returns::

    {"scenario": {...period structure...},
     "policies": {name: {"label", "query_bytes", "recluster_bytes", "total_bytes",
                         "pruning_rate", "cpu_seconds", "money", ...,
                         "batches": [{"period", "batch", "query_bytes", "recluster_bytes",
                                      "total_bytes", "pruning_rate", "partitions_scanned",
                                      "partitions_pruned", ...}]}},
     "comparison": {name: {"total_bytes_reduction_vs_nr", "cpu_reduction_vs_nr",
                           "query_gap_to_oracle", "recluster_share"}},
     "dd_tuning": {...} (when DD was tuned to WAIR's budget)}

Totals cover the measured batches (from the first reclustering period). Costs are in
bytes, CPU-seconds and money by the settings' rates. Deterministic for a seed.

Every simulated policy gets a row sampler over the scenario's data
(:meth:`engine.policy.base.Policy.bind_sampler`, a no-op for all but ``paw``, which designs
its partition tree on a sample of the table at each reclustering period's start).
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from engine.core.errors import InvalidParameterError
from engine.scenarios.presets import build_scenario, list_presets, scenario_parameters
from engine.policy.registry import DEFAULT_SIM_POLICIES, LABELS, SIM_POLICIES, WAIR_FAMILY
from engine.sim.driver import HISTORY_LIMIT
from engine.sim.economics import calibrated_settings
from engine.sim.runner import compile_scenario, simulate_policies
from engine.sim.session import COLD_START_MODES, DEFAULT_COLD_START, check_cold_start
from engine.sim.tuning import tune_dd
from engine.sim.variants import scenario_policy

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.policy.base import Policy
    from engine.scenarios.generator import Scenario
    from engine.sim.records import PolicyRun

__all__ = ["simulate", "simulate_scenario", "list_presets", "scenario_parameters", "simulation_policies",
           "DEFAULT_SIMULATION_POLICIES", "COLD_START_MODES", "DEFAULT_COLD_START"]

#: the policies :func:`simulate` compares unless told otherwise
DEFAULT_SIMULATION_POLICIES = DEFAULT_SIM_POLICIES
#: data-driven baselines ignore the window except for their displayed saving estimate, so
#: they get a short one (WAIR's initial window); the WAIR family gets the long history
SHORT_HISTORY = 50


def simulation_policies() -> list[dict[str, str]]:
    """The policies the simulator can compare, with display labels."""
    return [{"name": n, "label": LABELS[n]} for n in SIM_POLICIES]


def parse_policies(policies: Sequence[str] | str, extra: Sequence[str] = ()) -> list[str]:
    """Policy names, lower case, known to the simulator (or in ``extra``: built by the caller)."""
    if isinstance(policies, str):
        policies = policies.split(",")
    names = [p.strip().lower() for p in policies if p and p.strip()]
    if not names:
        raise InvalidParameterError("give at least one policy to simulate")
    known = (*SIM_POLICIES, *extra)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InvalidParameterError(f"unknown policy {unknown[0]!r}; policies are: {', '.join(known)}")
    return list(dict.fromkeys(names))


def comparison(runs: Mapping[str, "PolicyRun"]) -> dict[str, dict[str, float | None]]:
    """Reductions against NR and the gap to the oracle, per policy."""
    totals = {n: r.totals() for n, r in runs.items()}
    nr, oracle = totals.get("nr"), totals.get("oracle")
    out: dict[str, dict[str, float | None]] = {}
    for n, t in totals.items():
        row: dict[str, float | None] = {
            "recluster_share": (t["recluster_cpu_seconds"] / t["cpu_seconds"]) if t["cpu_seconds"] else 0.0,
            "recluster_share_bytes": (t["recluster_bytes"] / t["total_bytes"]) if t["total_bytes"] else 0.0}
        if nr:
            row["total_bytes_reduction_vs_nr"] = 1 - t["total_bytes"] / nr["total_bytes"] if nr["total_bytes"] else None
            row["query_bytes_reduction_vs_nr"] = 1 - t["query_bytes"] / nr["query_bytes"] if nr["query_bytes"] else None
            row["cpu_reduction_vs_nr"] = 1 - t["cpu_seconds"] / nr["cpu_seconds"] if nr["cpu_seconds"] else None
        if oracle and oracle["query_cpu_seconds"]:
            row["gap_to_oracle"] = t["cpu_seconds"] / oracle["query_cpu_seconds"] - 1
            row["query_gap_to_oracle"] = t["query_bytes"] / oracle["query_bytes"] - 1
        out[n] = row
    return out


def simulate_scenario(settings: "Settings", scenario: "Scenario", policies: Sequence[str],
                      progress: Callable[[Mapping[str, Any]], None] | None = None,
                      tune: bool = True, act_every: str = "batch", feedback: str = "batch",
                      policy_params: Mapping[str, Mapping[str, Any]] | None = None,
                      replay: Callable[..., dict[str, "PolicyRun"]] = simulate_policies,
                      prebuilt: Mapping[str, "Policy"] | None = None,
                      cold_start: str = DEFAULT_COLD_START
                      ) -> tuple[dict[str, "PolicyRun"], dict[str, Any] | None]:
    """Run named policies on a built scenario; DD is tuned to WAIR's reclustering budget
    (grid search, as the paper does) when both are requested and ``tune`` is set.

    ``replay``: how one policy is replayed, with the signature of
    :func:`engine.sim.runner.simulate_policies` (the default); the what-if on a real table
    passes :func:`engine.sim.own_table.simulate_own`. ``prebuilt``: policies built by the
    caller, by name (the what-if's PTO design), used instead of the registry's variant.
    ``cold_start``: which rewrites pay ``settings.cold_start_s``, the Spark session's start
    (:mod:`engine.sim.session`; ``"first"`` by default, as the real replay runs: one
    session per policy's run)."""
    check_cold_start(cold_start)
    prebuilt = prebuilt or {}
    names = parse_policies(policies, tuple(prebuilt))
    compiled = compile_scenario(scenario)
    policy_params = policy_params or {}
    order = sorted(names, key=lambda n: (n == "dd", names.index(n)))  # WAIR before DD
    runs: dict[str, "PolicyRun"] = {}
    tuning = None
    done = 0

    def step(info: Mapping[str, Any]) -> None:
        if progress is not None:
            progress({**info, "policy_index": done, "policies": len(names)})

    for name in order:
        if name == "dd" and tune and "wair" in runs and "dd" not in policy_params:
            budget = runs["wair"].totals()["recluster_bytes"]

            def one(policy: Any) -> "PolicyRun":
                return replay(scenario, {"dd": policy}, settings, step, act_every,
                              history=SHORT_HISTORY, compiled=compiled, feedback=feedback,
                              cold_start=cold_start)["dd"]
            runs["dd"], tuning = tune_dd(scenario, settings, budget, one)
        else:
            policy = prebuilt.get(name) or scenario_policy(name, scenario, policy_params.get(name))
            history = HISTORY_LIMIT if name in WAIR_FAMILY else SHORT_HISTORY
            runs[name] = replay(scenario, {name: policy}, settings, step, act_every,
                                history=history, compiled=compiled, feedback=feedback,
                                cold_start=cold_start)[name]
        done += 1
    return {n: runs[n] for n in names}, tuning


def simulate(settings: "Settings", preset: str = "tpch", rows: int | None = None,
             policies: Sequence[str] | str = DEFAULT_SIM_POLICIES, seed: int = 0,
             overrides: Mapping[str, Any] | None = None,
             progress: Callable[[Mapping[str, Any]], None] | None = None,
             per_batch: bool = True, tune_dd: bool = True, act_every: str = "batch",
             feedback: str = "batch", calibrated: bool = True,
             cold_start: str = DEFAULT_COLD_START) -> dict[str, Any]:
    """Generate the preset's scenario and replay it against ``policies`` (see module doc).

    ``calibrated``: price queries and rewrites with the preset's DuckDB-measured economics
    (:func:`engine.sim.economics.calibrated_settings`); False keeps the
    workspace's configured rates. The DuckDB economics measured a rewrite's fixed cost per
    ``COPY`` statement, so they charge it per group; the workspace's rates (a Spark
    calibration) once per plan, as the executor runs it (:mod:`engine.sim.apply`).

    ``cold_start``: which rewrites pay the workspace's calibrated ``cold_start_s``
    (:mod:`engine.sim.session`: ``"first"``, ``"every"`` or ``"none"``); the DuckDB
    economics have none, so it matters with ``calibrated=False`` in a calibrated workspace."""
    check_cold_start(cold_start)
    t0 = time.perf_counter()
    scenario = build_scenario(preset, rows=rows, seed=seed, overrides=overrides)
    replay = simulate_policies
    if calibrated:
        settings = calibrated_settings(scenario, settings, preset)
        replay = functools.partial(simulate_policies, fixed_per="group")
    runs, tuning = simulate_scenario(settings, scenario, policies, progress, tune_dd, act_every, feedback,
                                     replay=replay, cold_start=cold_start)
    out: dict[str, Any] = {
        "preset": preset, "rows": scenario.dataset.rows, "seed": int(seed),
        "overrides": dict(overrides or {}), "act_every": act_every, "feedback": feedback,
        "cold_start": cold_start,
        "scenario": scenario.summary(),
        "policies": {n: {"label": LABELS.get(n, n), **r.to_json(per_batch=per_batch)} for n, r in runs.items()},
        "comparison": comparison(runs),
        "rates": {"scan_bytes_per_s": settings.scan_bytes_per_s, "sort_bytes_per_s": settings.sort_bytes_per_s,
                  "price_per_cpu_hour": settings.price_per_cpu_hour,
                  "cold_start_s": float(settings.cold_start_s)},
        "seconds": time.perf_counter() - t0,
    }
    if tuning is not None:
        out["dd_tuning"] = tuning
    return out
