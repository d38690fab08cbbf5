"""``layout-advisor`` command line.

The dispatcher only parses global flags and hands over to the sub-command modules in this
package; each module exposes ``register(subparsers)`` and sets ``func(args, ws)`` on its
parsers (``ws``: the command's one workspace, :func:`engine.api.open_workspace`). :func:`main` is the one entry point that turns every failure into one line on
stderr: an :class:`~engine.core.errors.AdvisorError` or an operating-system error on a
path the user gave is a user mistake (exit 2); anything else is a bug (exit 1, with a hint
to report it; ``--traceback`` shows it). Output piped into a reader that stops early
(``| head``) ends quietly.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Sequence

from engine import api
from engine.cli import (
    analysis, approvers, audit, calibrate, demo, design, plans, simulate, tables, ui, workload,
)
from engine.core.config import Settings, SettingWarning, load_settings
from engine.core.errors import AdvisorError

#: the sub-command modules, in help order
COMMAND_MODULES = (demo, tables, workload, analysis, design, plans, simulate, calibrate, approvers, audit, ui)
#: exit codes
EXIT_USER, EXIT_BUG, EXIT_PIPE = 2, 1, 141
#: commands that may start a workspace that does not exist yet (or need none: simulate)
CREATES_WORKSPACE = {("demo", None), ("table", "create"), ("table", "register"), ("table", "adopt"),
                     ("approvers", "add"), ("simulate", None), ("ui", None),
                     ("calibrate", None)}
#: what any workspace holds at least one of (a folder without them is not a workspace)
WORKSPACE_MARKERS = ("control.db", "tables", "workloads", "layout-advisor.toml",
                     "calibration.json")
REPORT_HINT = ("this is a bug in layout-advisor; please report it with the command you ran "
               "(rerun with --traceback for the details)")


def build_parser() -> argparse.ArgumentParser:
    """The global flags and every command module's sub-commands."""
    parser = argparse.ArgumentParser(
        prog="layout-advisor",
        description="Workload-aware reclustering advisor for Parquet micro-partitioned tables.")
    parser.add_argument("--home", help="workspace directory (default ./.layout-advisor)")
    parser.add_argument("--spark-master", dest="spark_master",
                        help="Spark master URL (default local[*])")
    parser.add_argument("--traceback", action="store_true",
                        help="show the Python traceback of an internal error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def _error(message: str) -> None:
    print(f"layout-advisor: error: {message}", file=sys.stderr, flush=True)


def _load_settings(args: argparse.Namespace) -> Settings:
    """The settings, each ignored setting (an old ``approvers = [...]``) said in one line."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SettingWarning)
        settings = load_settings({"home": args.home, "spark_master": args.spark_master})
    for w in caught:
        if issubclass(w.category, SettingWarning):
            print(f"layout-advisor: warning: {w.message}", file=sys.stderr, flush=True)
        else:  # not ours to silence
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return settings


def _os_error_text(exc: OSError) -> str:
    """'PATH: reason' for an OSError on a file the user named (or the workspace)."""
    where = exc.filename if exc.filename is not None else ""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return f"{where}: {reason}" if where else reason


def require_workspace(args: argparse.Namespace, settings: Settings) -> None:
    """A ``--home`` that does not exist, or is a folder that is no workspace (``--home /tmp``,
    ``--home ~``), is a mistake (a typo would otherwise show an empty workspace, or start one
    in the wrong place), except for the commands that create one."""
    sub = getattr(args, f"{args.command}_command", None)
    if (args.command, sub) in CREATES_WORKSPACE or (args.command, None) in CREATES_WORKSPACE:
        return
    if not settings.home.exists():
        raise AdvisorError(f"no workspace at {settings.home}; check --home, or create one with "
                           "`layout-advisor demo` or `layout-advisor table create`")
    if not any((settings.home / marker).exists() for marker in WORKSPACE_MARKERS):
        raise AdvisorError(f"{settings.home} is not a Layout Advisor workspace (it has none of "
                           f"{', '.join(WORKSPACE_MARKERS)}); check --home, or create one with "
                           "`layout-advisor demo` or `layout-advisor table create`")


def _quiet_broken_pipe() -> int:
    """The reader went away: point stdout at /dev/null so the interpreter's final flush
    does not print a second error, and exit like a program killed by SIGPIPE."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout closed or not a real file
        pass
    return EXIT_PIPE


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the process exit code (2 for a user mistake, 1 for a bug)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except BrokenPipeError:  # --help piped into head
        return _quiet_broken_pipe()
    try:
        ws = api.Workspace(_load_settings(args))  # the command's one workspace
        require_workspace(args, ws.settings)
        result = args.func(args, ws)
        sys.stdout.flush()
        return int(result or 0)
    except AdvisorError as exc:
        _error(str(exc))
        return EXIT_USER
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except OSError as exc:
        _error(_os_error_text(exc))
        return EXIT_USER
    except Exception as exc:  # noqa: BLE001 - the one place that turns a bug into a line
        if args.traceback:
            raise
        _error(f"internal error: {type(exc).__name__}: {exc}; {REPORT_HINT}")
        return EXIT_BUG
