"""Refresh the README screenshots from a real workspace (the demo table).

    layout-advisor demo --no-ui          # or any workspace holding the demo table
    .venv/bin/python docs/screenshots/capture.py --home .layout-advisor --table lineitem

Starts ``layout-advisor ui`` on a free port, drives Debian's /usr/bin/chromium with
playwright (the same code as tests/e2e/test_browser.py), and writes one PNG per page here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

# the repository and tests/ must be on sys.path first (the script runs from anywhere)
from test_browser import PAGES, capture_pages, free_port  # noqa: E402

from engine.cli.ui import start_ui, stop_ui, wait_until_ready  # noqa: E402
from engine.core.config import load_settings  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", default=".layout-advisor")
    parser.add_argument("--table", default="lineitem")
    parser.add_argument("--out", default=str(HERE))
    parser.add_argument("--pages", default=None,
                        help="comma-separated page names (overview,partitions,...); default all")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds to wait for each page's content (a first visit at scale is slow)")
    args = parser.parse_args(argv)
    settings = load_settings({"home": args.home})
    port = free_port()
    proc = start_ui(settings, port=port, table=args.table, address="127.0.0.1",
                    quiet=True)
    try:
        if not wait_until_ready(port, timeout_s=90, process=proc):
            print("the dashboard did not start", file=sys.stderr)
            return 1
        wanted = set(args.pages.split(",")) if args.pages else None
        pages = [p for p in PAGES if wanted is None or p[1] in wanted]
        facts = capture_pages(f"http://127.0.0.1:{port}", Path(args.out), pages,
                              timeout_ms=int(args.timeout * 1000))
        for name, f in facts.items():
            print(f"{name:15s} charts={f['charts']} exceptions={f['exceptions']} "
                  f"errors={f['errors']} -> {f['screenshot']}")
        return 0
    finally:
        stop_ui(proc, timeout_s=15)


if __name__ == "__main__":
    sys.exit(main())
