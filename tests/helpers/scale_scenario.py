"""A seeded WAIR scenario at scale: zonemaps of mixed types and a
window with repeated queries, whose decision was recorded before the sparse rewrite
(``tests/fixtures/wair_scale_golden.json``, written by ``python -m tests.helpers.scale_scenario``).
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from engine.core.config import Settings
from engine.policy.base import PolicyContext
from engine.policy.wair import WairPolicy
from engine.scan.pruning import analyze_workload
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
from engine.workload.model import Range, ScanFragment

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "wair_scale_golden.json"
SCHEMA = TableSchema((("a", "int"), ("b", "float"), ("d", "date"), ("s", "string"), ("c", "float")))
SETTINGS = Settings(scan_bytes_per_s=1e6, sort_bytes_per_s=1e6, target_rows=1000)
DAY0 = dt.date(2020, 1, 1)


def zonemaps(n: int = 400, seed: int = 11) -> ZoneMaps:
    """``a`` in ingestion order with jitter, ``b`` narrow and random, ``d`` wide dates,
    ``s`` strings, ``c`` wide floats; some NULLs and unknown bounds."""
    rng = np.random.default_rng(seed)
    parts = []
    for i in range(n):
        a0 = int(i * 25 + rng.integers(-40, 40))
        b0 = float(rng.uniform(0, 1000))
        d0 = int(rng.integers(0, 300))
        s0 = int(rng.integers(0, 900))
        stats = {
            "a": ColumnStats(a0, a0 + int(rng.integers(10, 80)), 0, 4000),
            "b": ColumnStats(b0, b0 + float(rng.uniform(1, 20)), int(rng.integers(0, 3)), 8000),
            "d": ColumnStats(DAY0 + dt.timedelta(days=d0),
                             DAY0 + dt.timedelta(days=d0 + int(rng.integers(30, 200))), 0, 2000),
            "s": ColumnStats(f"k{s0:04d}", f"k{s0 + int(rng.integers(5, 90)):04d}", 0, 3000),
            "c": (ColumnStats(None, None, None, 1000) if i % 37 == 0
                  else ColumnStats(float(rng.uniform(0, 100)), float(rng.uniform(400, 1000)), 0, 1000)
                  if i % 4 == 0 else ColumnStats(float(i * 2.5), float(i * 2.5 + 3), 0, 1000)),
        }
        parts.append(Partition(f"p{i:05d}.parquet", 1000, 18000, stats, i))
    return ZoneMaps.from_partitions(SCHEMA, parts)


def window(q: int = 240, seed: int = 12) -> list[ScanFragment]:
    """Range queries on a, b, (a, d), s and c; every third one repeats an earlier box."""
    rng = np.random.default_rng(seed)
    frags: list[ScanFragment] = []
    for j in range(q):
        if j % 3 == 2 and frags:
            old = frags[int(rng.integers(0, len(frags)))]
            frags.append(ScanFragment(f"q{j}", "t", old.boxes, old.columns,
                                      duration_ms=float(rng.integers(50, 5000))))
            continue
        kind = int(rng.integers(0, 5))
        if kind == 0:
            lo = int(rng.integers(0, 9500))
            box = {"a": Range(lo, lo + int(rng.integers(50, 400)), True, bool(j % 2))}
        elif kind == 1:
            lo = float(rng.uniform(0, 950))
            box = {"b": Range(lo, lo + float(rng.uniform(5, 60)), bool(j % 2), True)}
        elif kind == 2:
            lo = int(rng.integers(0, 9000))
            d = int(rng.integers(0, 300))
            box = {"a": Range(lo, lo + 600),
                   "d": Range(DAY0 + dt.timedelta(days=d), DAY0 + dt.timedelta(days=d + 40))}
        elif kind == 3:
            s = int(rng.integers(0, 950))
            box = {"s": Range(f"k{s:04d}", f"k{s + 30:04d}", True, False)}
        else:
            lo = float(rng.uniform(0, 900))
            box = {"c": Range(lo, None if j % 4 == 0 else lo + 50.0)}
        cols = ("a", "b", "s") if j % 2 else ("a", "b", "c", "d", "s")
        frags.append(ScanFragment(f"q{j}", "t", (box,), cols,
                                  duration_ms=None if j % 5 == 0 else float(rng.integers(50, 5000))))
    return frags


def decision(scans_of=analyze_workload) -> dict[str, Any]:
    """WAIR's proposal on the scenario, JSON-plain: groups, partitions, predicted saving."""
    zm = zonemaps()
    frags = window()
    scans = scans_of(zm, frags)
    # k_max and losses as when the golden was recorded (not today's defaults)
    pol = WairPolicy(window=240, max_window=240, min_window=10, min_samples=3, eps=0.1, beta=0.001,
                     k_max=64, losses="off")
    prop = pol.propose(PolicyContext("t", "s1", zm, frags, scans, SETTINGS,
                                     queries_seen=len(frags)))
    assert prop is not None, pol.last_decision_
    return {
        "groups": [{"layout": g.layout, "columns": list(g.columns),
                    "partitions": list(g.partitions)} for g in prop.groups],
        "partitions": list(prop.partitions),
        "predicted_saving": {k: float(v) for k, v in prop.predicted_saving.items()},
        "estimated_cost_cpu_s": float(prop.estimated_cost.cpu_seconds),
    }


if __name__ == "__main__":
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    data = decision()
    GOLDEN.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}: {len(data['partitions'])} partitions, "
          f"{len(data['groups'])} groups", file=sys.stderr)
