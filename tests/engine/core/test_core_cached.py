"""engine.core.cached.read_or_none: the one "missing -> None, unreadable -> one warning ->
recompute" reader the stored summaries and the zonemap cache share."""

from __future__ import annotations

import json
import logging

import pytest

from engine.core.cached import read_or_none

LOG = logging.getLogger("test.cached")


def _read_json(path):
    return lambda: json.loads(path.read_text(encoding="utf-8"))


def test_a_readable_file_is_returned_and_a_missing_one_is_none_without_a_word(tmp_path, caplog):
    good = tmp_path / "good.json"
    good.write_text('{"n": 3}')
    with caplog.at_level("WARNING"):
        assert read_or_none(_read_json(good), good, "entry", LOG) == {"n": 3}
        assert read_or_none(_read_json(tmp_path / "missing.json"), tmp_path / "missing.json",
                            "entry", LOG) is None
        assert read_or_none(lambda: None, good, "entry", LOG) is None  # another version's file
    assert caplog.records == []


def test_an_unreadable_file_is_none_after_one_warning_naming_it(tmp_path, caplog):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    folder = tmp_path / "a-folder"
    folder.mkdir()
    with caplog.at_level("WARNING"):
        assert read_or_none(_read_json(bad), bad, "zonemap cache", LOG, then="rebuilding it") is None
        assert read_or_none(_read_json(folder), folder, "stored arrays", LOG) is None  # OSError
    assert [(r.name, r.levelname) for r in caplog.records] == [("test.cached", "WARNING")] * 2
    first, second = (r.getMessage() for r in caplog.records)
    assert first.startswith(f"zonemap cache {bad} unreadable (JSONDecodeError: ")
    assert first.endswith("; rebuilding it")
    assert second.startswith(f"stored arrays {folder} unreadable (IsADirectoryError: ")
    assert second.endswith("; recomputing")


def test_an_error_outside_the_given_kinds_is_a_bug_and_propagates(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(json.JSONDecodeError):
        read_or_none(_read_json(bad), bad, "entry", LOG, errors=(OSError,))
    with pytest.raises(ZeroDivisionError):
        read_or_none(lambda: 1 / 0, bad, "entry", LOG)
