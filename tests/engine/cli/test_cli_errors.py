"""The one entry point: user mistakes exit 2 with one line, bugs exit 1 with a
hint to report them, and output piped into a reader that stops early ends quietly."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from engine import api
from engine.cli import EXIT_PIPE, main
from security_helpers import ensure_account


def test_an_internal_error_is_one_line_exit_1_with_a_hint(settings, capsys, monkeypatch):
    (settings.home / "tables").mkdir(parents=True)  # a workspace (no tables yet)

    def broken(*_a, **_k):
        raise RuntimeError("a bug")

    monkeypatch.setattr(api, "list_plans", broken)
    assert main(["--home", str(settings.home), "plan", "list"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("layout-advisor: error: internal error: RuntimeError: a bug; this is a "
                          "bug in layout-advisor; please report it")
    with pytest.raises(RuntimeError, match="a bug"):
        main(["--home", str(settings.home), "--traceback", "plan", "list"])


def test_an_os_error_on_a_user_path_is_exit_2(settings, capsys, monkeypatch):
    (settings.home / "tables").mkdir(parents=True)  # a workspace (no tables yet)

    def unreadable(*_a, **_k):
        raise PermissionError(13, "Permission denied", "/data/log.sql")

    monkeypatch.setattr(api, "list_plans", unreadable)
    assert main(["--home", str(settings.home), "plan", "list"]) == 2
    assert capsys.readouterr().err == "layout-advisor: error: /data/log.sql: Permission denied\n"


def _closed_reader(argv: list[str]) -> subprocess.CompletedProcess:
    """Run the CLI with a stdout pipe whose reader has already gone (as `| head` does)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAYOUT_ADVISOR_")}
    try:
        return subprocess.run([sys.executable, "-m", "engine", *argv], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120, env=env)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("command,codes", [
    (["--help"], (0, EXIT_PIPE)),  # argparse exits 0 itself; the interpreter stays quiet
    (["approvers", "list"], (EXIT_PIPE,)),
    (["audit", "list", "--json"], (EXIT_PIPE,)),
], ids=["help", "list", "audit"])
def test_a_broken_pipe_exits_quietly(settings, command, codes):
    ensure_account(settings, "alice")
    proc = _closed_reader(["--home", str(settings.home), *command])
    assert proc.returncode in codes
    assert proc.stderr == ""
