"""From a selection of partitions to plan groups: hybrid layouts (section 4.4) and the
memory limit k_max (section 3.3).

1. Layout assignment. With hybrid layouts, the selected partitions' savings signatures
   (per-column split of their saving, unit-normalized) are clustered by
   :class:`engine.layout.signatures.SavingsClusterer` (DBSCAN, cosine distance, anchors
   e_i and v_S): a cluster near e_i is sorted by column i, one near a blend v_S gets a
   Hilbert order over S (columns by descending contribution), a diffuse one a Qd-tree;
   noise points fall back to their best single column. Clusters that end up with the
   same layout and key are merged, since sorting them together keeps the key ranges
   disjoint. Without hybrid layouts (the FK ablation) every partition gets one key: the
   fixed key, or the column with the largest total saving.
2. Chunking. Each group is split into chunks of at most k_max partitions so each chunk
   sorts in memory; the group's partitions are first ordered by their min on the group's
   first key column, so neighbouring key ranges land in the same chunk and chunks cover
   (nearly) disjoint ranges. Unless set, k_max follows the memory budget: the number of
   median-sized partitions that fit in ``memory_budget_bytes`` (:func:`derived_k_max`;
   section 3.3's "k_max is the memory capacity for reclustering micro-partitions"; 64 at
   the paper's 32 MB partitions and our 2 GiB default).
3. The guard of Algorithm 1: a chunk whose rewrite cannot change any zonemap is dropped
   (:func:`can_change_zonemaps`): a lone partition (one file in, one file out, the same
   min/max), partitions with a degenerate range ``[x, x]`` on every key column ("skip
   micro-partitions with a degenerate range"), and a sort over partitions whose key ranges
   are already disjoint (the sort writes the same files back).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from engine.core import logical_types
from engine.layout.signatures import LayoutChoice, SavingsClusterer, savings_signatures

if TYPE_CHECKING:
    from engine.table.model import ZoneMaps
    from engine.workload.model import ScanFragment


@dataclass(frozen=True)
class LayoutGroup:
    """Selected partitions (positions into the selection) sharing one layout."""

    layout: str
    columns: tuple[str, ...]
    members: np.ndarray  # positions into the selection arrays
    anchor: str
    similarity: float | None = None
    clusters: tuple[int, ...] = ()


@dataclass(frozen=True)
class Assignment:
    groups: list[LayoutGroup]
    signatures: np.ndarray  # [m, d] unit rows (zeros for all-zero rows)
    labels: np.ndarray  # DBSCAN label per selected partition (-1 noise; all 0 without hybrid)
    anchors: list[str]  # anchor name per selected partition
    extra: dict[str, Any] = field(default_factory=dict)


def anchor_name(kind: str, columns: Sequence[str]) -> str:
    """Human name of an anchor: ``col``, ``col1+col2`` or ``diffuse``."""
    return "diffuse" if kind == "qdtree" else "+".join(columns)


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix, dtype=np.float64), where=norms > 0)


def assign_fixed(per_column: np.ndarray, columns: Sequence[str], fixed_key: str | None) -> Assignment:
    """FK ablation: one sort key for the whole selection."""
    if fixed_key is None:
        fixed_key = columns[int(np.argmax(per_column.sum(axis=0)))]
    m = per_column.shape[0]
    group = LayoutGroup("sort", (fixed_key,), np.arange(m), fixed_key)
    return Assignment([group], unit_rows(per_column), np.zeros(m, dtype=np.int64),
                      [fixed_key] * m)


def assign_hybrid(per_column: np.ndarray, columns: Sequence[str], eps: float,
                  min_samples: int, max_blend: int) -> Assignment:
    """Hybrid layout via the savings-signature clusterer; groups merged by (layout, key)."""
    sig = np.asarray(savings_signatures(per_column), dtype=np.float64)
    contributions = per_column.sum(axis=0)
    clusterer = SavingsClusterer(eps=eps, min_samples=min_samples, max_blend=max_blend)
    clusterer.fit(sig, list(columns), contributions)
    labels = np.asarray(clusterer.labels_, dtype=np.int64)
    keyed: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}
    anchors: list[str] = [""] * len(labels)

    def add(choice: LayoutChoice, pos: np.ndarray, label: int | None) -> None:
        kind, cols = str(choice.kind), tuple(str(c) for c in choice.columns)
        entry = keyed.setdefault((kind, cols), {"members": [], "sim": [], "clusters": []})
        entry["members"].append(pos)
        entry["sim"].append((float(choice.similarity), pos.size))
        if label is not None:
            entry["clusters"].append(label)
        name = anchor_name(kind, cols)
        for p in pos.tolist():
            anchors[p] = name

    for label, choice in sorted(clusterer.cluster_layouts_.items()):
        pos = np.flatnonzero(labels == label)
        if pos.size:
            add(choice, pos, int(label))
    for p in np.flatnonzero(labels < 0).tolist():
        add(clusterer.layout_for_noise(sig[p]), np.array([p]), None)
    groups = []
    for (kind, cols), entry in keyed.items():
        members = np.sort(np.concatenate(entry["members"]))
        weight = sum(n for _, n in entry["sim"])
        sim = sum(s * n for s, n in entry["sim"]) / weight if weight else None
        groups.append(LayoutGroup(kind, cols, members, anchor_name(kind, cols), sim,
                                  tuple(entry["clusters"])))
    groups.sort(key=lambda g: -g.members.size)
    return Assignment(groups, sig, labels, anchors)


def chunk_members(zonemaps: "ZoneMaps", selected: np.ndarray, members: np.ndarray,
                  first_column: str | None, k_max: int) -> list[np.ndarray]:
    """Split a group into chunks of <= k_max partitions covering neighbouring key ranges.

    ``selected[members]`` are zonemap indices; returns zonemap-index arrays.
    """
    idx = selected[members]
    if first_column is not None and first_column in zonemaps.columns and idx.size > k_max:
        col = zonemaps.columns[first_column]
        lo = col.lo[idx]
        valid = col.valid[idx]
        # unknown bounds sort last; ties keep selection (saving rank) order
        order = np.lexsort((np.arange(idx.size), lo, ~valid))
        idx = idx[order]
    return [idx[i:i + k_max] for i in range(0, idx.size, k_max)]


def derived_k_max(k_max: int | None, zonemaps: "ZoneMaps", memory_budget_bytes: float) -> int:
    """``k_max`` if set, else how many median-sized partitions fit in the memory budget
    (at least 2: a chunk of one partition cannot change its zonemap).

    >>> import numpy as np
    >>> from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
    >>> parts = [Partition(f"p{i}", 10, 32 * 2**20, {"a": ColumnStats(0, 1)}) for i in range(3)]
    >>> zm = ZoneMaps.from_partitions(TableSchema((("a", "int"),)), parts)
    >>> derived_k_max(None, zm, 2 * 1024**3), derived_k_max(8, zm, 2 * 1024**3)
    (64, 8)
    """
    if k_max is not None:
        return int(k_max)
    sizes = zonemaps.bytes
    median = float(np.median(sizes)) if len(sizes) else 0.0
    if median <= 0:
        return 2
    return max(2, int(float(memory_budget_bytes) // median))


def can_change_zonemaps(zonemaps: "ZoneMaps", idx: np.ndarray, layout: str,
                        columns: Sequence[str]) -> bool:
    """Whether rewriting the partitions ``idx`` together with ``layout`` over ``columns``
    can change a zonemap (module docstring, step 3): not a lone partition, not only
    degenerate ranges on the key, not a sort over key ranges that are already disjoint.
    Columns without zonemaps count as changeable (nothing is known)."""
    if idx.size < 2:
        return False
    keys = [c for c in columns if c in zonemaps.columns]
    if not keys or layout == "binpack":
        return True
    spread = np.zeros(idx.size, dtype=bool)
    for c in keys:
        cz = zonemaps.columns[c]
        if not cz.valid[idx].all():
            return True
        spread |= cz.lo[idx] != cz.hi[idx]
    if not spread.any():
        return False
    if layout == "sort" and len(keys) == 1:
        cz = zonemaps.columns[keys[0]]
        lo, hi = cz.lo[idx], cz.hi[idx]
        order = np.argsort(lo, kind="stable")
        # already sorted: every partition ends before the next one starts
        return not bool(np.all(hi[order][:-1] < lo[order][1:]))
    return True


def qdtree_params(window: Sequence["ScanFragment"], columns: Sequence[str],
                  types: dict[str, str], min_leaf_rows: int, max_queries: int = 512) -> dict[str, Any]:
    """What :class:`engine.layout.qdtree.QdTree` needs for a diffuse group: the window's
    query boxes restricted to the group's columns (its cut candidates and the workload
    its greedy gain is measured on), deduplicated with their counts as weights.

    Returns ``{"queries": [{col: [lo, hi, lo_inc, hi_inc]}], "weights": [...],
    "min_leaf_rows": n}`` with ENCODED values (:mod:`engine.core.logical_types`; None = open end),
    JSON-safe; at most ``max_queries`` most frequent boxes.
    """
    wanted = set(columns)
    counts: dict[tuple, int] = {}
    for frag in window:
        for box in frag.boxes:
            key = []
            for col in sorted(c for c in box if c in wanted):
                rng, ltype = box[col], types.get(col, "string")
                lo = None if rng.min is None else logical_types.encode_scalar(ltype, rng.min)
                hi = None if rng.max is None else logical_types.encode_scalar(ltype, rng.max)
                key.append((col, lo, hi, bool(rng.min_inclusive), bool(rng.max_inclusive)))
            if key:
                counts[tuple(key)] = counts.get(tuple(key), 0) + 1
    top = sorted(counts.items(), key=lambda kv: -kv[1])[:max_queries]
    queries = [{col: [lo, hi, li, hi_inc] for col, lo, hi, li, hi_inc in key} for key, _ in top]
    return {"queries": queries, "weights": [float(c) for _, c in top],
            "min_leaf_rows": int(min_leaf_rows)}


def reason_text(n_parts: int, layout: str, columns: Sequence[str], per_column_sum: np.ndarray,
                all_columns: Sequence[str]) -> str:
    """E.g. ``42 boundary partitions of l_shipdate queries; 93% of their saving from l_shipdate``."""
    total = float(per_column_sum.sum())
    share = {c: (float(per_column_sum[i]) / total if total > 0 else 0.0)
             for i, c in enumerate(all_columns)}
    ranked = [c for c in sorted(all_columns, key=lambda c: -share[c]) if share[c] >= 0.05]
    queried = " / ".join(ranked[:4]) or "the window's"
    if len(ranked) > 4:
        queried += f" (+{len(ranked) - 4} more)"
    noun = "partition" if n_parts == 1 else "partitions"
    if layout == "qdtree":
        tail = f"savings spread over {len(ranked)} columns; Qd-tree over {', '.join(columns)}"
    elif layout == "sort":
        tail = f"{share.get(columns[0], 0.0):.0%} of their saving from {columns[0]}"
    else:
        parts = " / ".join(f"{share.get(c, 0.0):.0%}" for c in columns)
        tail = f"{parts} of their saving from {' / '.join(columns)}; {layout} over them"
    return f"{n_parts} boundary {noun} of {queried} queries; {tail}"
