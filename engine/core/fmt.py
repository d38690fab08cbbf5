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

import math
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


def format_money(amount: float | None, currency: str = "$") -> str:
    """Money for people: cents, thousands separators, "< $0.01" below a cent (never
    ``$1.2e-06``), "-" when unknown.

    Example:
    >>> format_money(1.2e-06), format_money(0), format_money(3.456), format_money(12345.6)
    ('< $0.01', '$0.00', '$3.46', '$12,346')
    >>> format_money(-0.004, "EUR ")
    '> -EUR 0.01'
    """
    if amount is None or not math.isfinite(amount):
        return "-"
    if amount == 0:
        return f"{currency}0.00"
    if abs(amount) < 0.01:
        return f"< {currency}0.01" if amount > 0 else f"> -{currency}0.01"
    sign = "-" if amount < 0 else ""
    value = abs(amount)
    return f"{sign}{currency}{value:,.0f}" if value >= 1000 else f"{sign}{currency}{value:,.2f}"


def format_number(x: float | None, digits: int = 3) -> str:
    """A number for people: ``digits`` significant digits, never in exponent form (Python's
    ``:.3g`` prints 1000 as ``1e+03``), thousands separators from 1,000 up, "-" when unknown.

    Example:
    >>> format_number(1000.0), format_number(1234.5), format_number(12.345), format_number(0.5)
    ('1,000', '1,234', '12.3', '0.5')
    >>> format_number(0.00012345), format_number(0), format_number(-2e6), format_number(999.7)
    ('0.000123', '0', '-2,000,000', '1,000')
    >>> format_number(None), format_number(float("nan"))
    ('-', '-')
    """
    if x is None or not math.isfinite(x):
        return "-"
    if x == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    if decimals == 0:
        return f"{x:,.0f}"
    text = f"{x:.{decimals}f}".rstrip("0").rstrip(".")
    return text if abs(float(text)) < 10 ** digits else f"{x:,.0f}"


def format_seconds(seconds: float | None) -> str:
    """Seconds for people: "-" when unknown, ms below one second, else three digits
    (:func:`format_number`: 1,234 s, never ``1.23e+03 s``).

    Example:
    >>> format_seconds(0.0871), format_seconds(42.83), format_seconds(None), format_seconds(1234.0)
    ('87 ms', '42.8 s', '-', '1,234 s')
    """
    if seconds is None or not math.isfinite(seconds):
        return "-"
    return f"{seconds * 1000:.0f} ms" if abs(seconds) < 1 else f"{format_number(seconds)} s"
