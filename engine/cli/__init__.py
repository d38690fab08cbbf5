"""``layout-advisor`` command line.

The dispatcher only parses global flags and hands over to the sub-command modules in this
package; each module exposes ``register(subparsers)`` and sets ``func(args, settings)`` on
its parsers. An :class:`~engine.core.errors.AdvisorError` becomes one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any, Callable, Sequence

from engine.core.config import Settings, load_settings
from engine.core.errors import AdvisorError

# Sub-command modules, in help order. Each has register(subparsers).
COMMAND_MODULES = ("demo", "tables", "workload", "analysis", "plans", "simulate", "ui")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="layout-advisor",
        description="Workload-aware reclustering advisor for Parquet micro-partitioned tables.")
    parser.add_argument("--home", help="workspace directory (default ./.layout-advisor)")
    parser.add_argument("--spark-master", dest="spark_master",
                        help="Spark master URL (default local[*])")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"engine.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"engine.cli.{name}":
                continue  # command group not built yet
            raise
        module.register(sub)
    return parser


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """Every read command takes --json."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def emit(args: argparse.Namespace, data: Any, text: Callable[[Any], str] | str | None = None) -> None:
    """Print ``data`` as JSON when --json was given, else as text."""
    if getattr(args, "json", False) or text is None:
        print(json.dumps(data, indent=2, default=str))
    else:
        print(text(data) if callable(text) else text)


def main(argv: Sequence[str] | None = None) -> int:
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
