"""Write a copy of a calibration with one table's price set to one of its stored fits.

``calibrate --rewrite-on`` / the real replay's ``--calibrate-rewrite`` store both fits of
the probe's points (``tables.<name>.fits``: "cell", "line"; engine.spark.calibrate_rewrite)
and use the chosen one. To compare both fits side by side on the same probe without probing
twice (the replay's simulation cache is keyed by the calibration's bytes, so each copy
simulates afresh), write one copy per fit. An entry stored before the fits were (round 10's
first wave: its points only) is refitted first, with the calibration's own held terms
(``engine.spark.calibrate_rewrite.choose_fit``). Usage:
``PYTHONPATH=$PWD python bench/table_fit_select.py IN.json OUT.json TABLE cell|line``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def select(calibration: dict, table: str, fit: str) -> dict:
    """``calibration`` with ``table``'s chosen fit set to ``fit`` (its stored price)."""
    entry = dict(calibration["tables"][table])
    if "line" not in (entry.get("fits") or {}):
        entry.update(refit(calibration, entry))
    chosen = entry["fits"][fit]
    entry.update(fit=fit, rewrite_cell_bytes=chosen["rewrite_cell_bytes"])
    if fit == "line":
        entry["rewrite_fixed_s"] = chosen["rewrite_fixed_s"]
    else:
        entry.pop("rewrite_fixed_s", None)
    return {**calibration, "tables": {**calibration["tables"], table: entry}}


def refit(calibration: dict, entry: dict) -> dict:
    """Both fits of ``entry``'s stored points under ``calibration``'s held terms."""
    import dataclasses

    from engine.core.config import Settings
    from engine.spark.calibrate_rewrite import choose_fit

    names = {f.name for f in dataclasses.fields(Settings)}
    held = {**(calibration.get("rates") or {}), **(calibration.get("terms") or {})}
    settings = Settings(**{k: v for k, v in held.items() if k in names})
    got = choose_fit(entry["points"], int(entry["columns"]), settings, "line")
    return {k: got[k] for k in ("fits", "fit_fallback")}


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
