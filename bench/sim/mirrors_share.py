"""Mirrors' reclustering share against the price of a rewrite.

Runs the ``mirrors`` preset with its DuckDB-calibrated economics
(:func:`engine.sim.economics.calibrated_settings`), then with both rewrite rates
multiplied by ``--factor`` (cheaper rewrites), and prints, for NN, WAIR and the oracle,
the CPU reduction against NR, queries and reclustering as shares of NR's CPU, and the
reclustering share of each policy's own total. Written up in bench/sim/README.md
Usage: ``.venv/bin/python bench/sim/mirrors_share.py [--rows 200000] [--factor 5]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine.whatif.simulate import simulate_scenario  # noqa: E402
from engine.core.config import Settings  # noqa: E402
from engine.scenarios.presets import build_scenario  # noqa: E402
from engine.sim.economics import calibrated_settings  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--factor", type=float, default=5.0, help="rewrite rates x this in run 2")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    sc = build_scenario("mirrors", rows=args.rows, seed=args.seed)
    base = calibrated_settings(sc, Settings(), "mirrors")
    for factor in (1.0, args.factor):
        read = base.rewrite_read_bytes_per_s or base.scan_bytes_per_s
        s = dataclasses.replace(base, sort_bytes_per_s=base.sort_bytes_per_s * factor,
                                rewrite_read_bytes_per_s=read * factor)
        runs, _ = simulate_scenario(s, sc, ["nr", "nn", "wair", "oracle"], tune=False)
        t = {n: r.totals() for n, r in runs.items()}
        nr = t["nr"]["cpu_seconds"]
        for n in ("nn", "wair", "oracle"):
            x = t[n]
            print(f"rewrite rates x{factor:g} {n:6} CPU reduction {1 - x['cpu_seconds'] / nr:6.1%}  "
                  f"queries {x['query_cpu_seconds'] / nr:6.1%} of NR  reclustering "
                  f"{x['recluster_cpu_seconds'] / nr:6.1%} of NR  share "
                  f"{x['recluster_cpu_seconds'] / max(x['cpu_seconds'], 1e-12):6.1%}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
