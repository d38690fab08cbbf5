"""argparse ``type`` converters that refuse what a number argument must not be.

``float("inf")`` and ``float("nan")`` parse; a rate, a scale or a weight must not be
either. Each converter raises ``argparse.ArgumentTypeError``, which argparse prints as one
line naming the argument, with exit code 2.
"""

from __future__ import annotations

import argparse
import math
from typing import Callable


def number(low: float | None = None, low_inclusive: bool = True,
           high: float | None = None, integer: bool = False,
           inf_ok: bool = False) -> Callable[[str], float | int]:
    """A converter for a finite number within ``[low, high]`` (``(low, ...`` when not
    ``low_inclusive``); ``inf_ok`` also accepts ``inf`` where it means "no limit".

    Example:
    >>> number(low=0, low_inclusive=False)("2.5")
    2.5
    >>> number(low=0, low_inclusive=False)("inf")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 'inf' is not a finite number
    >>> number(low=1, integer=True)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 0 must be at least 1
    """
    def convert(text: str) -> float | int:
        try:
            value: float | int = int(text) if integer else float(text)
        except ValueError:
            kind = "an integer" if integer else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
        if not math.isfinite(value) and not (inf_ok and value == math.inf):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if low is not None and (value < low or (value == low and not low_inclusive)):
            word = "at least" if low_inclusive else "greater than"
            raise argparse.ArgumentTypeError(f"{value:g} must be {word} {low:g}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"{value:g} must be at most {high:g}")
        return value
    return convert


finite = number()
positive = number(low=0, low_inclusive=False)
non_negative = number(low=0)
positive_int = number(low=1, integer=True)
non_negative_int = number(low=0, integer=True)
