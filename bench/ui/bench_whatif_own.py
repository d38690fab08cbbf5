"""What-if on the user's own table: seconds per stage and per policy.

Builds (once) the demo workspace at ``--scale`` in ``--home`` (TPC-H lineitem, 2,000-row
micro-partitions, the demo query log; Arrow writer, no Spark), then runs
:func:`engine.api.whatif_table` with the six default policies and prints the answer's
``timings`` (sample read, PTO design, each policy's replay incl. DD's tuning) and the
totals each policy reached, so that a change of speed can be checked not to change a
decision. ``--profile FILE`` writes a cProfile dump of the what-if.

    PYTHONPATH=$PWD python bench/ui/bench_whatif_own.py --home /tmp/wi2/home --scale 1
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import time

from engine import api
from engine.cli.demo import build_demo
from engine.core.config import load_settings


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", required=True)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--policies", default="nr,wair,dd,dd-ep,paw,pto")
    ap.add_argument("--shift", default=None)
    ap.add_argument("--profile", default=None)
    ap.add_argument("--param", action="append", default=[],
                    help="extra whatif_table keyword as NAME=JSON (e.g. sample_read='\"file\"')")
    ap.add_argument("--json", default=None, help="write the timings and totals here")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run the what-if this many times in one process (the later runs reuse "
                         "PTO's design and DD's tuning); the timings of each run are printed")
    args = ap.parse_args()
    settings = load_settings({"home": args.home})
    build_demo(settings, args.scale)
    extra = {k: json.loads(v) for k, v in (p.split("=", 1) for p in args.param)}
    knobs = set(api.WhatIfOptions.__dataclass_fields__)
    options = api.WhatIfOptions(**{k: v for k, v in extra.items() if k in knobs})
    call = {k: v for k, v in extra.items() if k not in knobs}
    ws = api.Workspace(settings)  # one workspace: a repeat reuses its memos
    prof = cProfile.Profile() if args.profile else None
    t0 = time.perf_counter()
    if prof:
        prof.enable()
    repeats = []
    for _ in range(max(1, args.repeat)):
        out = api.whatif_table(ws, "lineitem", policies=args.policies.split(","), shift=args.shift,
                               **call, options=options)
        repeats.append({"seconds": round(out.seconds, 2), "timings": out.timings})
    if prof:
        prof.disable()
        prof.dump_stats(args.profile)
    wall = time.perf_counter() - t0
    totals = {n: {k: p[k] for k in ("query_bytes", "recluster_bytes", "total_bytes", "cpu_seconds")}
              for n, p in out.policies.items()}
    report = {"load": os.getloadavg(), "wall_s": round(wall, 2), "timings": repeats[0]["timings"],
              "repeats": repeats[1:],
              "files": out.sample["files"], "sample_rows": out.sample["rows"],
              "dd_chosen": (out.dd_tuning or {}).get("chosen"), "totals": totals}
    print(json.dumps(report, indent=1, default=str))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1, default=str)


if __name__ == "__main__":
    main()
