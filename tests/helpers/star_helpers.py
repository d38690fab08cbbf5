"""Small TPC-DS-shaped tables (date_dim, item, customer_demographics, store_sales) written
with pyarrow and registered in a workspace, and a star-query log over them: the inputs of
the join-derived predicate tests (engine and dashboard)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from engine import api

JULIAN_2000 = 2451545  # d_date_sk of 2000-01-01 (the Julian day number)
CATEGORIES = ("Books", "Music", "Shoes")


def date_dim() -> pa.Table:
    """1999-01-01 to 2001-12-31, ``d_date_sk`` the Julian day number (as TPC-DS's)."""
    days = [dt.date(1999, 1, 1) + dt.timedelta(days=i)
            for i in range((dt.date(2002, 1, 1) - dt.date(1999, 1, 1)).days)]
    return pa.table({
        "d_date_sk": pa.array([JULIAN_2000 + (d - dt.date(2000, 1, 1)).days for d in days],
                              pa.int64()),
        "d_date": pa.array(days, pa.date32()),
        "d_year": pa.array([d.year for d in days], pa.int32()),
        "d_moy": pa.array([d.month for d in days], pa.int32()),
        "d_dom": pa.array([d.day for d in days], pa.int32()),
        "d_qoy": pa.array([(d.month - 1) // 3 + 1 for d in days], pa.int32()),
    })


def item() -> pa.Table:
    """60 items, ``i_category`` Books, Music, Shoes in blocks of 10 keys."""
    keys = list(range(1, 61))
    return pa.table({
        "i_item_sk": pa.array(keys, pa.int64()),
        "i_category": pa.array([CATEGORIES[(k - 1) // 10 % 3] for k in keys]),
        "i_brand": pa.array([f"brand#{k % 7}" for k in keys]),
    })


def customer_demographics() -> pa.Table:
    """40 rows: ``cd_gender`` M on odd keys, ``cd_marital_status`` S/M/D/W from key 1."""
    keys = list(range(1, 41))
    return pa.table({
        "cd_demo_sk": pa.array(keys, pa.int64()),
        "cd_gender": pa.array(["M" if k % 2 else "F" for k in keys]),
        "cd_marital_status": pa.array(["SMDW"[(k - 1) % 4] for k in keys]),
    })


def register(settings, root: Path, name: str, data: pa.Table, files: int = 3) -> None:
    """Write ``data`` as ``files`` Parquet files under root/name and register them as ``name``."""
    folder = root / name
    folder.mkdir(parents=True)
    step = -(-data.num_rows // files)
    for i in range(files):  # a few files, as a registered table has
        pq.write_table(data.slice(i * step, step), folder / f"part-{i}.parquet")
    api.register_table(settings, name, str(folder))


STAR_LOG = """-- ts: 2024-03-01T10:00:00Z
select sum(ss_net_paid) from store_sales, date_dim where ss_sold_date_sk = d_date_sk and d_year = 2000;
-- ts: 2024-03-01T11:00:00Z
select count(*) from store_sales, store where ss_store_sk = s_store_sk and s_state = 'TN';
-- ts: 2024-03-01T12:00:00Z
select count(*) from store_sales where ss_quantity > 90;
"""



def star_workspace(settings, root: Path) -> None:
    """Register store_sales (200 rows, 4 files) and date_dim under ``root`` and import
    STAR_LOG into store_sales."""
    rows = 200
    register(settings, root / "data", "date_dim", date_dim())
    register(settings, root / "data", "store_sales", pa.table({
        "ss_sold_date_sk": pa.array([JULIAN_2000 - 300 + 5 * i for i in range(rows)], pa.int64()),
        "ss_store_sk": pa.array([i % 4 for i in range(rows)], pa.int64()),
        "ss_quantity": pa.array([i % 100 for i in range(rows)], pa.int64()),
        "ss_net_paid": pa.array([float(i) for i in range(rows)]),
    }), files=4)
    log = root / "star.sql"
    log.write_text(STAR_LOG)
    api.import_workload(settings, "store_sales", str(log))
