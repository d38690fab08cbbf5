"""What-if on the user's own table and workload.

``whatif_table(ws, table, policies=..., batches=8, shift=None, sample_rows=200_000)``
replays the table's imported workload (and, with ``shift``, a copy whose predicate moved to
another column) against reclustering policies on a simulated copy of the table built from
its current snapshot's zonemaps and a stratified row sample of its files
(:mod:`engine.sim.own_table`). Queries and rewrites are priced with the workspace's rates
(the ones ``layout-advisor calibrate`` measured, else the configured defaults), because the
simulated partitions weigh what the real files weigh.

The answer has the shape of :func:`engine.api.simulate` (``scenario``, ``policies`` with
per-batch records, ``comparison``, ``rates``), plus ``table``, ``snapshot``, ``sample``
(rows, fraction, files), ``shift`` and ``estimated``: what is exact and what comes from the
sample, in plain words. ``check`` compares NR's simulated query bytes with the bytes the
real snapshot's own zonemaps give for the same queries (equal up to per-file byte widths).
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from engine.core import logical_types
from engine.policy import pricing
from engine.core.errors import InvalidParameterError
from engine.design.pto.optimizer import PtoConfig, run_on_files
from engine.layout.output import output_shape
from engine.policy.registry import LABELS, SIM_POLICIES
from engine.sim.own_sample import read_partition_sample, sample_fraction
from engine.sim.own_table import (DesignOnce, PawTreeOnly, own_scenario, shift_fragments, simulate_own,
                                  stat_columns)
from engine.sim.scan import compile_fragment, query_cost
from engine.sim.session import DEFAULT_COLD_START, check_cold_start
from engine.whatif.simulate import comparison, parse_policies, simulate_scenario

if TYPE_CHECKING:
    from engine.table.model import Snapshot, ZoneMaps
    from engine.workspace import Workspace
    from engine.workload.model import ScanFragment

__all__ = ["whatif_table", "whatif_shift_choices", "whatif_policies", "DEFAULT_WHATIF_POLICIES",
           "WhatIfOptions", "WhatIfCaches"]

#: PTO's design on the real files, replayed as one full rewrite (:class:`DesignOnce`)
PTO = "pto"
#: NR, WAIR, DD and DD-EP (incremental), PAW and PTO (whole-table designs)
DEFAULT_WHATIF_POLICIES = ("nr", "wair", "dd", "dd-ep", "paw", PTO)
SAMPLE_ROWS = 200_000
#: row samples, designs and DD tunings kept per workspace (the dashboard re-runs the
#: what-if in its session's workspace)
_CACHE_ENTRIES = 8
#: PTO's design in the what-if runs on at most this many of the table's rows
#: (:attr:`engine.design.pto.optimizer.PtoConfig.max_design_rows`; 0 or None: every row,
#: the paper's): the same choice in a fraction of the time (bench/ui/README.md).
PTO_DESIGN_ROWS = 200_000


@dataclass(frozen=True)
class WhatIfOptions:
    """How :func:`whatif_table` computes its answer; the defaults are the dashboard's.

    ``tune_dd``: tune DD's parameters to WAIR's reclustering budget before the replay.
    ``price_paw``: False replays PAW's tree without pricing it against the baselines
    (:class:`engine.sim.own_table.PawTreeOnly`: the same tree, so the same decision;
    ``bench/ui/README.md`` has the times); True runs the registry's PAW as the generated
    presets do. ``reuse``: keep the row sample (per snapshot, size and seed), PTO's design
    (per snapshot and workload) and DD's tuned parameters (per settings, snapshot,
    workload, shift, batches, sample and seed) in the workspace (:class:`WhatIfCaches`), so
    a repeated what-if skips them; all are deterministic, so the answer is the same (False:
    read, design and tune afresh). ``sample_read``: each file's sample rows come from one of
    its row groups ("row_group") or the whole file ("file"),
    :func:`engine.sim.own_sample.read_partition_sample`. ``pto_design_rows``: PTO designs
    on a sample of at most this many rows (0 or None: every row, the paper's;
    :data:`PTO_DESIGN_ROWS`). ``pto_design_read``: that sample's rows come from whole files
    drawn at random ("sample": :func:`engine.design.pto.data.load_file_sample`) or from
    every row read first ("all"). ``cold_start``: which replayed rewrites pay the calibrated
    ``cold_start_s`` of a fresh Spark session (:mod:`engine.sim.session`: ``"first"``, as
    the dashboard's one session runs plans; ``"every"``, a CLI ``plan run`` per plan;
    ``"none"``, every rewrite warm)."""

    tune_dd: bool = True
    price_paw: bool = False
    reuse: bool = True
    sample_read: str = "row_group"
    pto_design_rows: int | None = PTO_DESIGN_ROWS
    pto_design_read: str = "sample"
    cold_start: str = DEFAULT_COLD_START


class WhatIfCaches:
    """The what-if's memos, owned by a workspace (``ws.cache("whatif", WhatIfCaches)``):
    row samples, PTO's designs and DD's tunings, each the :data:`_CACHE_ENTRIES` most
    recent."""

    def __init__(self) -> None:
        self.pto: "OrderedDict[tuple, tuple[DesignOnce, dict[str, Any]]]" = OrderedDict()
        self.dd: "OrderedDict[tuple, dict[str, Any]]" = OrderedDict()
        self.sample: "OrderedDict[tuple, Any]" = OrderedDict()


def _remember(cache: "OrderedDict[tuple, Any]", key: tuple, value: Any) -> Any:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > _CACHE_ENTRIES:
        cache.popitem(last=False)
    return value


def _workload_digest(fragments: Sequence["ScanFragment"]) -> str:
    """A digest of the workload's queries and predicates (what a design or tuning reads)."""
    h = hashlib.sha1()
    for f in fragments:
        h.update(repr((f.query_id, f.ts, f.boxes, f.columns)).encode())
    return h.hexdigest()


def whatif_policies() -> list[dict[str, str]]:
    """The policies the what-if on a table compares, with display labels (the simulator's
    and PTO)."""
    return [{"name": n, "label": LABELS[n]} for n in SIM_POLICIES] + [{"name": PTO, "label": "PTO"}]


def _label(name: str) -> str:
    return "PTO" if name == PTO else LABELS.get(name, name)


def _sample(caches: WhatIfCaches, key: tuple, zm: "ZoneMaps", types: Mapping[str, str],
            reuse: bool) -> tuple[Any, bool]:
    """The stratified row sample for ``key`` = (home, table, snapshot, columns, fraction,
    seed, read), read or (``reuse``) kept from an earlier what-if; (sample, reused)."""
    if reuse and key in caches.sample:
        return caches.sample[key], True
    *_, cols, fraction, seed, read = key
    sample = read_partition_sample(list(zm.paths), zm.rows, types, list(cols), fraction, seed, read)
    if reuse:
        _remember(caches.sample, key, sample)
    return sample, False


def _pto_design(caches: WhatIfCaches, zm: "ZoneMaps", types: Mapping[str, str], fragments: Sequence["ScanFragment"],
                key: tuple | None = None, design_rows: int | None = PTO_DESIGN_ROWS,
                read_files: str = "sample") -> tuple[DesignOnce, dict[str, Any]]:
    """PTO's choice for the table (its own sample of the real files, the whole imported
    workload: what ``plan create --policy pto`` would propose) as a :class:`DesignOnce`.

    A pure function of the snapshot, the workload and :class:`PtoConfig`, so it is kept
    per ``key`` (snapshot, workload digest) and a repeated what-if reuses it (a fresh
    :class:`DesignOnce` each time: the policy carries replay state). ``design_rows``:
    :attr:`PtoConfig.max_design_rows`. ``read_files``: with a design sample, read only
    whole files drawn at random ("sample", :func:`engine.design.pto.data.load_file_sample`)
    or every row before sampling ("all")."""
    if key is not None and key in caches.pto:
        done, info = caches.pto[key]
        return DesignOnce(done.layout, done.columns, done.partition_by, done.target_file_bytes,
                          done.reason), {**info, "reused": True}
    run = run_on_files(list(zm.paths), dict(types), int(zm.bytes.sum()), list(fragments),
                       PtoConfig(max_design_rows=design_rows or None),
                       file_rows=zm.rows if read_files == "sample" else None)
    lay = run.choice.layout
    policy = DesignOnce(lay.sort.kind, tuple(lay.sort.columns), lay.partition, int(lay.tfs_bytes),
                        run.reason())
    layout, cols = policy.key()
    info = {**lay.describe(), "why": run.reason(), "design_rows": design_rows or None,
            "simulated_layout": layout, "simulated_columns": list(cols)}
    if key is not None:
        _remember(caches.pto, key, (policy, info))
    return policy, info


def _real_target_rows(ws: "Workspace", settings: Any, table: str, zm: "ZoneMaps") -> float:
    """Rows of one output file on the real table, as the executor writes them
    (:func:`engine.layout.output.output_shape`): the table's own target, else the input's
    granularity (the median rows per file of the table, the group a whole-table rewrite
    reads)."""
    return float(output_shape(zm.rows, int(zm.bytes.sum()), ws.tables.write_target(table)).rows_per_file)


def whatif_shift_choices(ws: "Workspace", table: str) -> dict[str, Any]:
    """Columns a shifted workload can move between: ``columns`` {name: logical type} of
    the simulated (non-string) columns, ``counts`` of queries filtering each, and the
    ``default`` (source, target): the most filtered column to the least filtered other
    column of its type (None when there is no such pair)."""
    snap = ws.tables.current_snapshot(table)
    return _shift_choices(snap, ws.workloads.fragments(table))


def _shift_choices(snap: "Snapshot", fragments: Sequence["ScanFragment"]) -> dict[str, Any]:
    cols = stat_columns(snap.schema, snap.zonemaps())
    types = dict(snap.schema.columns)
    counts = Counter(c for f in fragments for c in f.predicated_columns)
    default = None
    for src, _ in counts.most_common():
        if src not in cols:
            continue
        same = [c for c in cols if c != src and types[c] == types[src]]
        if same:
            default = (src, min(same, key=lambda c: (counts.get(c, 0), cols.index(c))))
            break
    return {"columns": {c: types[c] for c in cols}, "counts": {c: int(counts.get(c, 0)) for c in cols},
            "default": default}


def _parse_shift(shift: "str | Sequence[str] | None", choices: Mapping[str, Any]) -> tuple[str, str] | None:
    if shift is None or shift == "" or shift is False:
        return None
    if shift == "auto":
        if choices["default"] is None:
            raise InvalidParameterError("shift: no filtered column has another column of the same "
                                        "type to move to; name both as SOURCE:TARGET")
        return tuple(choices["default"])  # type: ignore[return-value]
    src, _, dst = shift.partition(":") if isinstance(shift, str) else (shift[0], ":", shift[1])
    for c in (src, dst):
        if c not in choices["columns"]:
            raise InvalidParameterError(f"shift: {c!r} is not a numeric, date or timestamp column of "
                                        f"the table; choose from {', '.join(choices['columns'])}")
    if src == dst:
        raise InvalidParameterError("shift: SOURCE and TARGET must differ")
    return src, dst


def _nr_check(zm: "ZoneMaps", fragments: Sequence["ScanFragment"], types: Mapping[str, str],
              simulated: float) -> dict[str, float]:
    """NR's replayed query bytes on the real zonemaps beside the simulated figure."""
    real = sum(query_cost(zm, compile_fragment(f, types)).bytes for f in fragments)
    return {"real_zonemap_bytes": float(real), "simulated_bytes": float(simulated),
            "ratio": float(simulated / real) if real else 1.0}


def _estimated_notes(snap: "Snapshot", sample: Any, strings: list[str]) -> list[str]:
    notes = [f"Exact: the starting table is the current snapshot's {snap.partition_count:,} files "
             "with their own zonemaps, and every query is pruned on them as on the real table.",
             f"Estimated from a sample: the rows a rewrite orders ({sample.rows:,} rows, "
             f"{sample.fraction:.2%} of each file, stratified by file), so the zonemaps of "
             "rewritten partitions and every later cost are estimates.",
             "Bytes per row are the table's average per column, so a file's simulated bytes "
             "differ slightly from its real size.",
             "Costs use the workspace's rates (measured by `layout-advisor calibrate`, else "
             "the configured defaults)."]
    notes.append("PTO's design is chosen on the real files (its own sample) and applied once, "
                 "at the start of the replay with its file size; its row-group size is not "
                 "simulated (pruning is per file).")
    if strings:
        notes.append("Text columns carry no statistics in the simulator, so predicates on "
                     f"{', '.join(strings)} never prune there.")
    return notes


class _Stopwatch:
    """Seconds per stage (sample read, PTO's design, the replay) and per policy replayed,
    read off the simulator's progress reports; forwards every report to ``progress`` and
    reports each stage as ``{"stage": name, "message": ...}`` (the page shows both)."""

    def __init__(self, progress: Callable[[Mapping[str, Any]], None] | None) -> None:
        self.progress = progress
        self.stages: dict[str, float] = {}
        self.policies: dict[str, float] = {}
        self._stage: tuple[str, float] | None = None
        self._policy: tuple[str, float] | None = None
        self._last: float | None = None

    def stage(self, name: str, message: str) -> None:
        now = time.perf_counter()
        if self._stage is not None:
            self.stages[self._stage[0]] = now - self._stage[1]
        self._close_policy(now)
        self._stage, self._last = (name, now), now
        if self.progress is not None and name != "done":
            self.progress({"stage": name, "message": message})

    def _close_policy(self, now: float) -> None:
        if self._policy is not None:
            name, start = self._policy
            self.policies[name] = self.policies.get(name, 0.0) + now - start
            self._policy = None

    def policy_step(self, info: Mapping[str, Any]) -> None:
        """A policy's time runs from the previous policy's last report (or the replay's
        start) to its own last report: reports come after each batch."""
        now = time.perf_counter()
        name = str(info.get("policy"))
        if self._policy is None or self._policy[0] != name:
            start = self._last if self._last is not None else now
            self._close_policy(start)
            self._policy = (name, start)
        self._last = now
        if self.progress is not None:
            self.progress(info)

    def timings(self) -> dict[str, Any]:
        """``{"sample_s", "pto_design_s", "replay_s", "policies": {name: s}}``; a policy's
        seconds run from its first progress report to the next policy's (DD's include its
        tuning runs; the first policy's omit the scenario's compilation)."""
        out: dict[str, Any] = {f"{k}_s": round(v, 3) for k, v in self.stages.items()}
        out["policies"] = {k: round(v, 3) for k, v in self.policies.items()}
        return out


def whatif_table(ws: "Workspace", table: str,
                 policies: Sequence[str] | str = DEFAULT_WHATIF_POLICIES, batches: int = 8,
                 shift: "str | Sequence[str] | None" = None, sample_rows: int = SAMPLE_ROWS,
                 seed: int = 0, progress: Callable[[Mapping[str, Any]], None] | None = None,
                 options: WhatIfOptions = WhatIfOptions()) -> dict[str, Any]:
    """Replay ``table``'s imported workload (and a shifted copy) on a simulated copy of the
    table under ``policies`` (see the module docstring for the answer); ``options`` says
    how (:class:`WhatIfOptions`)."""
    o = options
    tune_dd, price_paw, reuse, sample_read = o.tune_dd, o.price_paw, o.reuse, o.sample_read
    pto_design_rows, pto_design_read, cold_start = o.pto_design_rows, o.pto_design_read, o.cold_start
    caches: WhatIfCaches = ws.cache("whatif", WhatIfCaches)
    check_cold_start(cold_start)
    if pto_design_read not in ("sample", "all"):
        raise InvalidParameterError(f"pto_design_read must be 'sample' or 'all', got {pto_design_read!r}")
    t0 = time.perf_counter()
    clock = _Stopwatch(progress)
    names = parse_policies(policies, (PTO,))
    # the simulated copy holds the table's own rows: its rewrites at the table's own price
    # per cell when ``calibrate --rewrite-on`` measured one (engine.policy.pricing)
    settings = pricing.apply(ws.settings, table)[0]
    snap = ws.tables.current_snapshot(table)
    zm, types = snap.zonemaps(), dict(snap.schema.columns)
    fragments = ws.workloads.fragments(table)
    moved = _parse_shift(shift, _shift_choices(snap, fragments))
    cols = stat_columns(snap.schema, zm)
    fraction = sample_fraction(int(zm.rows.sum()), int(sample_rows))
    clock.stage("sample", f"reading a {fraction:.2%} sample of {snap.partition_count:,} files")
    sample, sample_reused = _sample(caches, (settings.home, table, snap.id, tuple(cols), fraction, int(seed),
                                     sample_read), zm, types, reuse)
    shifted = shift_fragments(fragments, moved[0], moved[1], sample.data, types) if moved else ()
    target = max(1, int(round(_real_target_rows(ws, settings, table, zm) * fraction)))
    scenario = own_scenario(table, snap.schema, zm, sample, fragments, target, int(batches), shifted)
    digest = _workload_digest(fragments)
    prebuilt: dict[str, Any] = {}
    pto = None
    if PTO in names:
        on = f"a {pto_design_rows:,}-row sample of" if pto_design_rows else "every row of"
        clock.stage("pto_design", f"PTO: designing on {on} the real files")
        prebuilt[PTO], pto = _pto_design(caches, zm, types, fragments,
                                         (settings.home, table, snap.id, digest, pto_design_rows or None,
                                          pto_design_read) if reuse else None, pto_design_rows,
                                         pto_design_read)
    if "paw" in names and not price_paw:
        prebuilt["paw"] = PawTreeOnly()
    dd_key = (repr(settings), table, snap.id, digest, moved, int(batches), int(sample_rows), int(seed),
              sample_read)
    known = caches.dd.get(dd_key) if reuse and tune_dd and {"dd", "wair"} <= set(names) else None
    clock.stage("replay", "replaying the workload")
    runs, tuning = simulate_scenario(settings, scenario, names, clock.policy_step, tune_dd,
                                     replay=simulate_own, prebuilt=prebuilt,
                                     policy_params={"dd": known["chosen"]} if known else None,
                                     cold_start=cold_start)
    if known:
        tuning = {**known, "reused": True}
    elif tuning is not None and reuse:
        _remember(caches.dd, dd_key, tuning)
    clock.stage("done", "done")
    replayed = [f for b in scenario.batches if b.period == 2 for f in b.fragments]
    nr_bytes = runs["nr"].totals()["query_bytes"] if "nr" in runs else None
    strings = sorted({c for f in fragments for c in f.predicated_columns
                      if logical_types.is_string(types.get(c, "string"))})
    out: dict[str, Any] = {
        "table": table, "snapshot": snap.id, "rows": int(zm.rows.sum()), "seed": int(seed),
        "sample": {"rows": sample.rows, "fraction": sample.fraction, "files": snap.partition_count,
                   "columns": cols, "target_rows": target, "reused": sample_reused},
        "shift": {"from": moved[0], "to": moved[1]} if moved else None,
        "scenario": scenario.summary(),
        "policies": {n: {"label": _label(n), **r.to_json(per_batch=True)} for n, r in runs.items()},
        "comparison": comparison(runs),
        "rates": {"scan_bytes_per_s": settings.scan_bytes_per_s, "sort_bytes_per_s": settings.sort_bytes_per_s,
                  "price_per_cpu_hour": settings.price_per_cpu_hour,
                  "cold_start_s": float(settings.cold_start_s)},
        "cold_start": cold_start,
        "estimated": _estimated_notes(snap, sample, strings),
        "seconds": time.perf_counter() - t0,
        "timings": clock.timings(),
    }
    if nr_bytes is not None:
        replay_nr = sum(b.query_bytes for b in runs["nr"].batches if b.period == 2)
        out["check"] = _nr_check(zm, replayed, types, replay_nr)
    if tuning is not None:
        out["dd_tuning"] = tuning
    if pto is not None:
        out["pto"] = pto
    return out
