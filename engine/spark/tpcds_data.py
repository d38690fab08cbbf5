"""TPC-DS ``store_sales`` and its dimensions, generated offline by ``tpcgen-cli``, and a
star-query log over them: the data of ``layout-advisor demo --tpcds``.

``store_sales`` stays in the generator's own order (ticket order): every slice of it spans
nearly all sale dates, so the table as generated is unclustered on ``ss_sold_date_sk``, as
the seed's DSB initial pool is (WAIR, section 6.2.2). The queries filter ``date_dim`` and
``item``; the workload import turns those filters into ranges of the fact table's keys
(:mod:`engine.workload.lookup`).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from engine.core.errors import EnvironmentCheckError, InvalidParameterError
from engine.scenarios.star_log import write_star_log

if TYPE_CHECKING:
    from engine.core.config import Settings

#: the tables the demo generates: the fact table and the dimensions its queries join
TPCDS_TABLES = ("store_sales", "date_dim", "item")
#: star queries in the demo log
STAR_LOG_QUERIES = 240


def tpcgen_binary() -> str:
    """The ``tpcgen-cli`` next to this Python (the venv), else on PATH."""
    local = Path(sys.executable).parent / "tpcgen-cli"
    if local.exists():
        return str(local)
    found = shutil.which("tpcgen-cli")
    if not found:
        raise EnvironmentCheckError("tpcgen-cli not found: pip install tpcgen-cli"
                                    " (a dependency: `./dev.sh setup` installs it)")
    return found


def make_tpcds_demo_data(settings: "Settings", scale: float, queries: int | None = None,
                         progress: Callable[[str], None] | None = None
                         ) -> tuple[dict[str, Path], Path]:
    """``({table: parquet file}, query log)`` under ``<home>/sample/tpcds-sf<scale>/``,
    generated unless present (``tpcgen-cli tpcds parquet``; the log by
    :func:`engine.scenarios.star_log.write_star_log`)."""
    if not scale > 0:
        raise InvalidParameterError(f"--scale must be positive, got {scale:g}")
    say = progress or (lambda _m: None)
    out = Path(settings.home) / "sample" / f"tpcds-sf{scale:g}"
    files = {t: out / f"{t}.parquet" for t in TPCDS_TABLES}
    if not all(f.is_file() for f in files.values()):
        out.mkdir(parents=True, exist_ok=True)
        say(f"generating TPC-DS scale {scale:g} ({', '.join(TPCDS_TABLES)}) with tpcgen-cli")
        cmd = [tpcgen_binary(), "tpcds", "parquet", "-s", f"{scale:g}",
               f"--tables={','.join(TPCDS_TABLES)}", f"--output-dir={out}"]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        missing = [t for t, f in files.items() if not f.is_file()]
        if done.returncode != 0 or missing:
            detail = (done.stderr or done.stdout or "").strip().splitlines()
            raise EnvironmentCheckError(
                "tpcgen-cli failed" + (f": {detail[-1]}" if detail else "")
                + (f" (no {', '.join(missing)})" if missing else ""))
    log = out / "store_sales_star_queries.sql"
    if not log.is_file():
        count = queries or STAR_LOG_QUERIES
        write_star_log(str(log), count)
        say(f"wrote {count} star queries to {log}")
    return files, log
