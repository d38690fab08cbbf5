"""Numbers, Markdown-safe text and badges as the dashboard prints them.

The formatters print a dash for a missing value and thousands separators, unlike the
CLI's :mod:`engine.core.fmt`.
"""

from __future__ import annotations

import re
from typing import Any


def fmt_bytes(n: float | None) -> str:
    """Bytes in the largest unit below 1024 of it, a dash when unknown.

    Example:
    >>> fmt_bytes(1536), fmt_bytes(None)
    ('1.5 KB', '–')
    """
    if n is None:
        return "–"
    n = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} TB"


def fmt_seconds(s: float | None) -> str:
    if s is None:
        return "–"
    s = float(s)
    if abs(s) < 1:
        return f"{s * 1000:,.0f} ms"
    if abs(s) < 120:
        return f"{s:,.1f} s"
    if abs(s) < 7200:
        return f"{s / 60:,.1f} min"
    return f"{s / 3600:,.1f} h"


def fmt_money(m: float | None) -> str:
    """Money with sensible rounding: cents, and "< $0.01" rather than ``$1.2e-06``.

    Example:
    >>> fmt_money(1.2e-06), fmt_money(0), fmt_money(0.456), fmt_money(1234.5), fmt_money(-0.004)
    ('< $0.01', '$0', '$0.46', '$1,234.50', '> -$0.01')
    """
    if m is None:
        return "–"
    m = float(m)
    if m == 0:
        return "$0"
    if abs(m) < 0.01:
        return "< $0.01" if m > 0 else "> -$0.01"
    return f"${m:,.2f}" if m > 0 else f"-${-m:,.2f}"


def fmt_num(x: Any, digits: int = 2) -> str:
    if x is None:
        return "–"
    try:
        return f"{float(x):,.{digits}f}"
    except (TypeError, ValueError):
        return str(x)


def sentence(text: str) -> str:
    """``text`` as a sentence: a capital first letter and a full stop.

    >>> sentence("unit: files")
    'Unit: files.'
    """
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


#: characters that start Markdown or Streamlit syntax anywhere in a line: emphasis, code,
#: links and images (``[``), HTML and autolinks, math, strikethrough, and backslash itself
_MARKDOWN_ACTIVE = re.compile(r"([\\`*\[\]<>$~])")
#: ``_`` only emphasises at a word boundary; ``:`` starts a Streamlit directive or emoji
#: (``:red[``, ``:material/x:``) or a URL scheme (``http://``) when a non-space follows
_MARKDOWN_CONTEXT = re.compile(r"((?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|:(?=\S))")
#: a line start that makes a heading, quote, list or numbered list
_MARKDOWN_LINE_START = re.compile(r"^([#>+\-]|\d+[.)])")


def md_text(value: Any) -> str:
    r"""A user-supplied string (a name, reason, path, SQL, error message) made inert for
    Streamlit's Markdown: what Markdown, GitHub autolinks or Streamlit's directives
    (``:color[...]``, ``:material/...:``, ``$math$``) would interpret is escaped, line breaks
    become spaces, and the rest is left as typed, so it always shows as the text it is.

    Example:
    >>> print(md_text("![x](http://e/x.png) **bob** no_such_table"))
    !\[x\](http\://e/x.png) \*\*bob\*\* no_such_table
    """
    text = " ".join(str(value).split()).replace("www.", "www\\.")
    text = _MARKDOWN_CONTEXT.sub(r"\\\1", _MARKDOWN_ACTIVE.sub(r"\\\1", text))
    return _MARKDOWN_LINE_START.sub(r"\\\1", text)


LIGHT_WORDS = {"green": "Well clustered", "amber": "Partly clustered", "red": "Poorly clustered",
               "grey": "Unknown"}
_LIGHT_STYLE = {"green": ("green", ":material/check_circle:"), "amber": ("orange", ":material/warning:"),
                "red": ("red", ":material/error:"), "grey": ("gray", ":material/help:")}
STATUS_BADGE = {"proposed": ":blue-badge[proposed]", "approved": ":violet-badge[approved]",
                "running": ":orange-badge[running]", "succeeded": ":green-badge[succeeded]",
                "failed": ":red-badge[failed]", "rejected": ":gray-badge[rejected]",
                "stale": ":gray-badge[stale]", "cancelled": ":gray-badge[cancelled]"}


def light_badge(light: str) -> str:
    """Markdown for a traffic-light badge (colored, with an icon; no emoji font needed)."""
    color, icon = _LIGHT_STYLE.get(light, _LIGHT_STYLE["grey"])
    return f":{color}-badge[{icon} {LIGHT_WORDS.get(light, light)}]"


def verdict_reason(light: str, reason: str) -> str:
    """The engine's reason without its leading verdict words (the badge already says them)."""
    word = LIGHT_WORDS.get(light, "").lower()
    if word and reason.lower().startswith(word + ": "):
        return reason[len(word) + 2:]
    return reason
