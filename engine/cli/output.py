"""What every command shares: the ``--json`` flag and printing a result as JSON or text.

Kept apart from the dispatcher (:mod:`engine.cli`) so the command modules can import it
while the dispatcher imports them.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Callable, Iterable, Sequence


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """Every read command takes --json."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def emit(args: argparse.Namespace, data: Any, text: Callable[[Any], str] | str | None = None) -> None:
    """Print ``data`` as JSON when --json was given (or no text form exists), else as text.

    Example:
    >>> emit(argparse.Namespace(json=False), {"id": 1}, lambda d: f"plan {d['id']}")
    plan 1
    >>> emit(argparse.Namespace(json=True), {"id": 1}, "ignored")
    {
      "id": 1
    }
    """
    if args.json or text is None:
        print(json.dumps(data, indent=2, default=str))
    else:
        print(text(data) if callable(text) else text)


def emit_stream(args: argparse.Namespace, items: Iterable[Any],
                text: Callable[[list[Any]], str]) -> None:
    """:func:`emit` for a long list: with --json each item is printed as soon as it comes,
    byte for byte what ``json.dumps(list(items), indent=2)`` would print, so a report of
    100,000 queries never sits in memory whole; text needs the whole list.

    Example:
    >>> emit_stream(argparse.Namespace(json=True), iter([{"q": 1}, {"q": 2}]), str)
    [
      {
        "q": 1
      },
      {
        "q": 2
      }
    ]
    >>> emit_stream(argparse.Namespace(json=True), iter([]), str)
    []
    """
    if not args.json:
        print(text(list(items)))
        return
    first = True
    for item in items:
        body = json.dumps(item, indent=2, default=str).replace("\n", "\n  ")
        print(("[\n  " if first else ",\n  ") + body, end="", flush=False)
        first = False
    print("[]" if first else "\n]")


def aligned(headers: Sequence[str], rows: Sequence[Sequence[Any]], right: Sequence[int] = ()) -> str:
    """A plain text table with columns padded to their widest cell (None shows as ``-``).

    Example:
    >>> print(aligned(["name", "rows"], [["a", 10], ["bb", None]], right=(1,)))
    name  rows
    a       10
    bb       -
    """
    cells = [[str(h) for h in headers]] + [["-" if v is None else str(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for r in cells:
        parts = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(r)]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)
