"""DD-EP: the Snowflake patent's selection of micro-partitions through EP files
(US 12386863, FIG. 6-10, paragraphs 84-125).

One round, over EP data regions (``engine.metrics.ep``) with their average local depth and
partition count:

1. sub-ranges between adjacent region mins/maxes (op. 610); the *deepest sub-range* has
   the largest sum of the average depths of the regions covering it (op. 810);
2. the *deep regions* cover the deepest sub-range; the *seed* is the deep region whose
   overlapping regions (itself included) represent the most partitions (ops. 812-816);
3. if the deep regions represent more partitions than the threshold, drop them in order of
   increasing average depth until they represent *less than* the threshold (FIG. 9:
   ops. 952-960, paragraph 107: "until the number [...] is less than the threshold");
4. otherwise add the *target regions* (overlap the seed, not the deepest sub-range); when
   they and the deep regions represent no more partitions than the threshold, return them
   all (FIG. 10 op. 1052:N, paragraph 113: "not greater than the threshold"); otherwise
   drop either the lower target L (lowest max) or the upper target U (highest min) until
   the total is *less than* the threshold (paragraph 119): the one overlapping fewer deep
   partitions (L_D vs U_D), on a tie the one overlapping fewer partitions of the regions
   that also overlap the seed (L_C vs U_C) (FIG. 10: ops. 1050-1080).

Rounds repeat on the regions not yet selected (paragraph 121). Every step is a sweep or a
prefix sum over sorted bounds, O(n log n) per round, so it runs at a million partitions.

Choices the patent leaves open, made here: the seed's count includes the candidate itself
(FIG. 8B counts 1600 for 720A, i.e. all eight regions); ties in trimming remove the region
with more partitions first; a tie on both L/U comparisons removes U; a round never drops
its last deep region (an EP file larger than the threshold is still clustered); a round
stops the policy when the deepest sub-range's total depth is at most ``min_depth`` (a
sorted table: nothing overlaps).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.core.errors import InvalidParameterError
from engine.metrics import profile as _profile
from engine.metrics.ep import ep_files, subranges
from engine.policy.base import Policy, PolicyContext, Proposal
from engine.policy.dd import choose_key, data_driven_proposal


def _weight_overlapping(q_lo: np.ndarray, q_hi: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                        w: np.ndarray) -> np.ndarray:
    """For each query interval, the sum of ``w`` over the intervals ``[lo, hi]`` that
    intersect it (closed): total - (those starting after it) - (those ending before it)."""
    if len(lo) == 0:
        return np.zeros(len(q_lo))
    w = np.asarray(w, dtype=np.float64)
    o_lo, o_hi = np.argsort(lo, kind="stable"), np.argsort(hi, kind="stable")
    cum_lo = np.concatenate([[0.0], np.cumsum(w[o_lo])])
    cum_hi = np.concatenate([[0.0], np.cumsum(w[o_hi])])
    total = cum_lo[-1]
    starts_after = total - cum_lo[np.searchsorted(lo[o_lo], q_hi, side="right")]
    ends_before = cum_hi[np.searchsorted(hi[o_hi], q_lo, side="left")]
    return total - starts_after - ends_before


@dataclass(frozen=True)
class RegionSelection:
    """One round's outcome; region numbers index the arrays given to :func:`select_regions`."""

    selected: tuple[int, ...]
    seed: int
    deepest_start: Any
    deepest_end: Any
    deepest_total_depth: float
    deep: tuple[int, ...]
    targets: tuple[int, ...]
    method: str  # "trim-deep" (FIG. 9) or "deep+targets" (FIG. 10)
    partitions: int
    steps: tuple[str, ...] = field(default=())


def select_regions(lo: np.ndarray, hi: np.ndarray, avg_depth: np.ndarray, counts: np.ndarray,
                   threshold: int, min_depth: float = 0.0) -> RegionSelection | None:
    """The patent's choice of clustering EP regions (see the module docstring); None when
    there is no region or the deepest sub-range is not deeper than ``min_depth``."""
    lo, hi = np.asarray(lo), np.asarray(hi)
    avg = np.asarray(avg_depth, dtype=np.float64)
    cnt = np.asarray(counts, dtype=np.int64)
    n = len(lo)
    if n == 0:
        return None
    sr = subranges(lo, hi, avg)
    if sr.deepest < 0 or sr.total_depth[sr.deepest] <= min_depth:
        return None
    s, e = sr.starts[sr.deepest], sr.ends[sr.deepest]
    steps = [f"deepest sub-range {s!r}..{e!r}: total average depth {sr.total_depth[sr.deepest]:g}"]
    covers = (lo <= s) & (hi >= e)
    deep = np.flatnonzero(covers)
    # seed: the deep region overlapped by the most partitions (itself included)
    reach = _weight_overlapping(lo[deep], hi[deep], lo, hi, cnt)
    seed = int(deep[np.lexsort((deep, -avg[deep], -reach))[0]])
    steps.append(f"seed region {seed}: overlapping regions represent {int(reach[deep == seed][0])} partitions")
    deep_total = int(cnt[deep].sum())
    common = dict(seed=seed, deepest_start=s, deepest_end=e,
                  deepest_total_depth=float(sr.total_depth[sr.deepest]), deep=tuple(map(int, deep)))
    if deep_total > threshold:
        # FIG. 9: drop the shallowest deep regions until the rest fit
        order = deep[np.lexsort((deep, -cnt[deep], avg[deep]))]
        keep = np.ones(len(order), dtype=bool)
        total = deep_total
        for i, r in enumerate(order[:-1]):  # never drop the last one
            if total < threshold:  # paragraph 107: "less than the threshold"
                break
            keep[i] = False
            total -= int(cnt[r])
            steps.append(f"drop deep region {int(r)} (average depth {avg[r]:g}): {total} partitions")
        chosen = np.sort(order[keep])
        return RegionSelection(selected=tuple(map(int, chosen)), targets=(), method="trim-deep",
                               partitions=int(cnt[chosen].sum()), steps=tuple(steps), **common)
    # FIG. 10: deep regions plus the targets around the seed, trimmed from both ends
    overlaps_seed = (lo <= hi[seed]) & (hi >= lo[seed])
    targets = np.flatnonzero(overlaps_seed & ~covers)
    total = deep_total + int(cnt[targets].sum())
    steps.append(f"{len(deep)} deep + {len(targets)} target regions: {total} partitions")
    if len(targets) and total > threshold:  # paragraph 113: "not greater than" -> returned as is
        t_lo, t_hi = lo[targets], hi[targets]
        d_w = _weight_overlapping(t_lo, t_hi, lo[deep], hi[deep], cnt[deep])
        near = np.flatnonzero(overlaps_seed)
        c_w = (_weight_overlapping(t_lo, t_hi, lo[near], hi[near], cnt[near])
               - cnt[targets] - cnt[seed])
        by_low_max = np.lexsort((np.arange(len(targets)), t_lo, t_hi))
        by_high_min = np.lexsort((np.arange(len(targets)), -_rank(t_hi), -_rank(t_lo)))
        removed = np.zeros(len(targets), dtype=bool)
        pl = pu = 0
        while total >= threshold and not removed.all():  # paragraph 119: until less than
            while removed[by_low_max[pl]]:
                pl += 1
            while removed[by_high_min[pu]]:
                pu += 1
            low, up = int(by_low_max[pl]), int(by_high_min[pu])
            if low == up:
                drop = low
            elif d_w[low] != d_w[up]:
                drop = low if d_w[low] < d_w[up] else up
            elif c_w[low] != c_w[up]:
                drop = low if c_w[low] < c_w[up] else up
            else:
                drop = up
            removed[drop] = True
            total -= int(cnt[targets[drop]])
            steps.append(f"drop target region {int(targets[drop])} (L={int(targets[low])} "
                         f"L_D={d_w[low]:g} L_C={c_w[low]:g}, U={int(targets[up])} "
                         f"U_D={d_w[up]:g} U_C={c_w[up]:g}): {total} partitions")
        targets = targets[~removed]
    chosen = np.sort(np.concatenate([deep, targets]))
    return RegionSelection(selected=tuple(map(int, chosen)), targets=tuple(map(int, targets)),
                           method="deep+targets", partitions=int(cnt[chosen].sum()),
                           steps=tuple(steps), **common)


MAX_STEPS_SHOWN = 40


def _abridged(steps: tuple[str, ...]) -> list[str]:
    """The trace for a plan: every step of a small selection, head and tail of a big one."""
    if len(steps) <= MAX_STEPS_SHOWN:
        return list(steps)
    head, tail = steps[: MAX_STEPS_SHOWN // 2], steps[-MAX_STEPS_SHOWN // 4:]
    return [*head, f"... {len(steps) - len(head) - len(tail)} more steps ...", *tail]


def _rank(a: np.ndarray) -> np.ndarray:
    """Dense ranks, so string bounds can be negated for a descending sort."""
    return np.unique(a, return_inverse=True)[1].reshape(-1)


class DDEPPolicy(Policy):
    """The patent's data-driven selection as a policy (one ``sort`` group on ``key``); it
    learns nothing from feedback."""

    name = "dd-ep"

    def __init__(self, key: str | None = None, partition_threshold: int = 1000,
                 ep_file_partitions: int | None = None, rounds: int = 1,
                 min_depth: float = 2.0) -> None:
        if partition_threshold < 1:
            raise InvalidParameterError(
                f"partition_threshold must be >= 1, got {partition_threshold}")
        if ep_file_partitions is not None and ep_file_partitions < 1:
            raise InvalidParameterError(
                f"ep_file_partitions must be >= 1, got {ep_file_partitions}")
        if rounds < 1:
            raise InvalidParameterError(f"rounds must be >= 1, got {rounds}")
        self.key = key
        self.partition_threshold = int(partition_threshold)
        self.ep_file_partitions = ep_file_partitions
        self.rounds = int(rounds)
        self.min_depth = float(min_depth)

    def propose(self, ctx: PolicyContext) -> Proposal | None:
        key = choose_key(ctx, self.key)
        n_ep = self.ep_file_partitions or ctx.settings.ep_file_partitions
        ep = ep_files(ctx.zonemaps, key, n_ep)
        pool = np.flatnonzero(ep.valid)
        picked: list[int] = []
        rounds: list[dict[str, Any]] = []
        dec = lambda v: _profile.decode_value(ep.ltype, v)  # noqa: E731
        for _ in range(self.rounds):
            if len(pool) == 0:
                break
            sel = select_regions(ep.lo[pool], ep.hi[pool], ep.average_depth[pool],
                                 ep.partition_count[pool], self.partition_threshold,
                                 self.min_depth)
            if sel is None:
                break
            chosen_eps = pool[list(sel.selected)]
            picked.extend(int(i) for i in chosen_eps)
            rounds.append({
                "deepest_subrange": [dec(sel.deepest_start), dec(sel.deepest_end),
                                     sel.deepest_total_depth],
                "seed_ep_file": int(pool[sel.seed]),
                "deep_ep_files": [int(pool[i]) for i in sel.deep],
                "target_ep_files": [int(pool[i]) for i in sel.targets],
                "selected_ep_files": [int(i) for i in chosen_eps],
                "method": sel.method, "partitions": sel.partitions,
                "steps": _abridged(sel.steps)})
            pool = np.setdiff1d(pool, chosen_eps)
        if not picked:
            self.last_decision_ = {"reason": (
                f"DD-EP: no sub-range of {key} is covered deeper than {self.min_depth:g} "
                f"(sum of the average depths of the EP files of {n_ep} partitions over it)")}
            return None
        chosen = np.isin(ep.group, np.array(picked))
        first = rounds[0]
        reason = (f"DD-EP: deepest sub-range {first['deepest_subrange'][0]} .. "
                  f"{first['deepest_subrange'][1]} of {key} (total average depth "
                  f"{first['deepest_subrange'][2]:g}); seed EP file {first['seed_ep_file']}; "
                  f"{len(picked)} EP files of {n_ep} partitions in {len(rounds)} round(s), "
                  f"{int(chosen.sum())} partitions (threshold {self.partition_threshold} per round)")
        self.last_decision_ = {"reason": reason}
        params = {"key": key, "partition_threshold": self.partition_threshold,
                  "ep_file_partitions": n_ep, "rounds": self.rounds, "min_depth": self.min_depth}
        return data_driven_proposal(ctx, self.name, params, chosen, key, reason,
                                    {"key": key, "ep_file_partitions": n_ep, "rounds": rounds})
