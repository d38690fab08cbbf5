"""``layout-advisor`` command line.

The dispatcher only parses global flags and hands over to the sub-command modules in this
package; each module exposes ``register(subparsers)`` and sets ``func(args, settings)`` on
its parsers. An :class:`~engine.core.errors.AdvisorError` becomes one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from engine.cli import analysis, calibrate, demo, plans, simulate, tables, ui, workload
from engine.core.config import Settings, load_settings
from engine.core.errors import AdvisorError

#: the sub-command modules, in help order
COMMAND_MODULES = (demo, tables, workload, analysis, plans, simulate, calibrate, ui)


def build_parser() -> argparse.ArgumentParser:
    """The global flags and every command module's sub-commands."""
    parser = argparse.ArgumentParser(
        prog="layout-advisor",
        description="Workload-aware reclustering advisor for Parquet micro-partitioned tables.")
    parser.add_argument("--home", help="workspace directory (default ./.layout-advisor)")
    parser.add_argument("--spark-master", dest="spark_master",
                        help="Spark master URL (default local[*])")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the process exit code (2 for an :class:`AdvisorError`)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings: Settings = load_settings({"home": args.home, "spark_master": args.spark_master})
        result = args.func(args, settings)
        return int(result or 0)
    except AdvisorError as exc:
        print(f"layout-advisor: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("layout-advisor: interrupted", file=sys.stderr)
        return 130
