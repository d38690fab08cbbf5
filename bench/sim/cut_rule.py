"""WAIR's cut with alpha != 1: the paper's order against the scaled argmin, in the simulator.

``cut_rule="paper"`` (the default) takes Algorithm 2's cut (the argmin of cost - savings)
and then applies equation 4 (savings > alpha x cost); ``cut_rule="scaled"`` takes the argmin
of cost - savings / alpha as the cut (``engine/policy/wair/cut.py``). With alpha = 1 they
are the same. Runs each preset with its DuckDB-calibrated economics for NR and WAIR at
alpha 0.5 (the aggressive variant, credit c = 10) and alpha 2, under both rules, and prints
the CPU and bytes reductions against NR and the reclustering share. Written up in
bench/sim/README.md.

Usage: ``.venv/bin/python bench/sim/cut_rule.py [--rows 200000] [--presets dsb]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine.whatif.simulate import simulate_scenario  # noqa: E402
from engine.core.config import Settings  # noqa: E402
from engine.scenarios.presets import build_scenario  # noqa: E402
from engine.sim.economics import calibrated_settings  # noqa: E402

#: (policy name, its parameters) per variant; the rule is added to each
VARIANTS = (("aggressive", {}), ("wair", {"alpha": 2.0}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--presets", default="dsb")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    for preset in [p.strip() for p in args.presets.split(",") if p.strip()]:
        sc = build_scenario(preset, rows=args.rows, seed=args.seed)
        settings = calibrated_settings(sc, Settings(), preset)
        nr = simulate_scenario(settings, sc, ["nr"], tune=False)[0]["nr"].totals()
        for name, params in VARIANTS:
            for rule in ("paper", "scaled"):
                runs, _ = simulate_scenario(settings, sc, [name], tune=False,
                                            policy_params={name: {**params, "cut_rule": rule}})
                t = runs[name].totals()
                alpha = params.get("alpha", 0.5)
                print(f"{preset:8} alpha {alpha:<4g} cut_rule {rule:6}  CPU reduction "
                      f"{1 - t['cpu_seconds'] / nr['cpu_seconds']:6.1%}  bytes reduction "
                      f"{1 - t['total_bytes'] / nr['total_bytes']:6.1%}  reclustering share "
                      f"{t['recluster_cpu_seconds'] / max(t['cpu_seconds'], 1e-12):6.1%}  "
                      f"partitions rewritten {t['partitions_rewritten']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
