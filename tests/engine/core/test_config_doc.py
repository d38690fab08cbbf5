"""docs/configuration.md's settings table lists every setting (the fields of ``Settings``)
with its default, its unit and what it sets, and nothing that is not a setting: a field
added to ``Settings`` must be documented there."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from engine.core.config import Settings

CONFIG_DOC = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"


def _table() -> dict[str, tuple[str, str, str]]:
    """setting -> (default, unit, what it sets), from the table under ## Settings."""
    text = CONFIG_DOC.read_text()
    section = text[text.index("## Settings"):]
    section = section[:section.index("\n## ", 1)]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\| `(\w+)` \| `([^`]*)` \| ([^|]+) \| (.+) \|$", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3).strip(), m.group(4).strip())
    return rows


def _same(written: str, default: object) -> bool:
    if isinstance(default, bool):
        return written == str(default).lower()
    if isinstance(default, (int, float)):
        return float(written) == float(default)
    return written == str(default)


def test_every_setting_is_documented_with_its_default_and_unit():
    rows = _table()
    fields = {f.name: f.default for f in dataclasses.fields(Settings)}
    assert sorted(set(fields) - set(rows)) == []  # every setting is listed
    assert sorted(set(rows) - set(fields)) == []  # and nothing that is not one
    wrong = {n: (rows[n][0], d) for n, d in fields.items() if not _same(rows[n][0], d)}
    assert wrong == {}
    assert all(unit and what for _, unit, what in rows.values())
    assert rows["cold_start_s"][1] == "seconds"
