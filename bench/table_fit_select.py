"""Write a copy of a calibration with one table's price set to one of its stored fits.

``calibrate --rewrite-on`` / the real replay's ``--calibrate-rewrite`` store both fits of
the probe's points (``tables.<name>.fits``: "cell", "line"; engine.spark.calibrate_rewrite)
and use the chosen one. To compare both fits side by side on the same probe without probing
twice (the replay's simulation cache is keyed by the calibration's bytes, so each copy
simulates afresh), write one copy per fit. Usage:
``PYTHONPATH=$PWD python bench/table_fit_select.py IN.json OUT.json TABLE cell|line``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def select(calibration: dict, table: str, fit: str) -> dict:
    """``calibration`` with ``table``'s chosen fit set to ``fit`` (its stored price)."""
    entry = dict(calibration["tables"][table])
    chosen = (entry.get("fits") or {})[fit]
    entry.update(fit=fit, rewrite_cell_bytes=chosen["rewrite_cell_bytes"])
    if fit == "line":
        entry["rewrite_fixed_s"] = chosen["rewrite_fixed_s"]
    else:
        entry.pop("rewrite_fixed_s", None)
    return {**calibration, "tables": {**calibration["tables"], table: entry}}


def main(argv: list[str]) -> int:
    if len(argv) != 4 or argv[3] not in ("cell", "line"):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    src, out, table, fit = argv
    data = select(json.loads(Path(src).read_text()), table, fit)
    Path(out).write_text(json.dumps(data, indent=2, sort_keys=True))
    e = data["tables"][table]
    print(f"{out}: table {table} at its {fit} fit, {e['rewrite_cell_bytes']:.3f} B per cell"
          + (f" + fixed {e['rewrite_fixed_s']:.2f} s" if fit == "line" else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
