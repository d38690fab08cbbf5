"""Human-readable sizes for the CLIs' text output.

One formatter so that ``table``, ``plan`` and ``analyze`` print sizes the same way. (The
dashboard keeps its own in ``app/components.py``: it prints a dash and thousands separators.)

Example:
>>> human_bytes(512), human_bytes(1536), human_bytes(None)
('512 B', '1.5 KiB', '-')
>>> human_bytes(3 * 2**30, units=JEDEC_UNITS)
'3.0 GB'
"""

from __future__ import annotations

from typing import Sequence

IEC_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")
JEDEC_UNITS = ("B", "KB", "MB", "GB", "TB")  # the same powers of 1024, older labels


def human_bytes(n: float | None, units: Sequence[str] = IEC_UNITS) -> str:
    """``n`` bytes in the largest unit below 1024 of it (whole bytes, else one decimal); "-" for None.

    Each unit is 1024 times the previous one; the last one takes everything larger.
    """
    if n is None:
        return "-"
    value = float(n)
    for unit in units[:-1]:
        if abs(value) < 1024:
            return f"{value:.0f} {unit}" if unit == units[0] else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} {units[-1]}"
