"""A query log of TPC-DS-style star queries over ``store_sales``: the predicates are on the
dimensions (``date_dim``, ``item``), the fact table is pruned only through the joins.

The shape follows the seed's DSB workload (WAIR, section 6.2.2): dates centred on a
reference month that advances by one month per batch, each query's date filter two months
wide, the month drawn around the reference with a small Gaussian spread (sigma 2 months,
as DSB's default), plus item-category filters and a few direct fact-table filters. Three
templates, the way TPC-DS writes them:

* ``d_date between DATE 'a' and DATE 'b'`` (a two-month window) and a sum of sales;
* ``d_year = Y and d_moy between M and M + 1`` with an ``i_category`` and a GROUP BY brand;
* ``d_year = Y and d_moy = M`` with a direct ``ss_quantity`` range.

Example:
>>> log = star_log(6, batches=3, seed=1)
>>> len(log), log[0][0]
(6, '1998-01-01T00:00:00')
>>> "date_dim" in log[0][1] and "ss_sold_date_sk = d_date_sk" in log[0][1]
True
"""

from __future__ import annotations

import datetime as dt
import random

from engine.workload.sql.render import sql_literal

#: TPC-DS's item categories (``i_category``)
CATEGORIES = ("Books", "Children", "Electronics", "Home", "Jewelry", "Men", "Music", "Shoes",
              "Sports", "Women")
#: the sale dates ``store_sales`` holds: 1998-01-02 to 2003-01-02
FIRST_MONTH, LAST_MONTH = (1998, 1), (2002, 11)
#: the spread of a query's month around the reference month (DSB's default sigma)
SIGMA_MONTHS = 2.0


def _month(index: int) -> tuple[int, int]:
    """(year, month) ``index`` months after FIRST_MONTH, clamped to the data's months."""
    first = FIRST_MONTH[0] * 12 + FIRST_MONTH[1] - 1
    last = LAST_MONTH[0] * 12 + LAST_MONTH[1] - 1
    n = min(max(first + index, first), last)
    return n // 12, n % 12 + 1


def star_log(count: int, batches: int = 12, seed: int = 7) -> list[tuple[str, str]]:
    """``count`` (ISO timestamp, SQL) pairs in ``batches`` batches; batch ``b``'s reference
    month is the ``b * span``-th month of the data (``span`` spreads the batches over it),
    one day of log time per batch."""
    rng = random.Random(seed)
    months = (LAST_MONTH[0] - FIRST_MONTH[0]) * 12 + LAST_MONTH[1] - FIRST_MONTH[1] + 1
    span = max(1, months // max(1, batches))
    per_batch = max(1, -(-count // max(1, batches)))
    out: list[tuple[str, str]] = []
    for i in range(count):
        batch = i // per_batch
        ref = batch * span
        year, month = _month(ref + round(rng.gauss(0.0, SIGMA_MONTHS)))
        ts = dt.datetime(1998, 1, 1) + dt.timedelta(days=batch, minutes=i % per_batch)
        out.append((ts.isoformat(), _query(i % 3, year, month, rng)))
    return out


def _query(template: int, year: int, month: int, rng: random.Random) -> str:
    if template == 0:
        start = dt.date(year, month, 1)
        end_year, end_month = (year, month + 2) if month <= 10 else (year + 1, month - 10)
        end = dt.date(end_year, end_month, 1) - dt.timedelta(days=1)
        return ("select sum(ss_net_paid) as paid, count(*) as sales from store_sales, date_dim "
                "where ss_sold_date_sk = d_date_sk "
                f"and d_date between {sql_literal(start)} and {sql_literal(end)}")
    if template == 1:
        category = rng.choice(CATEGORIES)
        moy = min(month, 11)
        return ("select i_brand, sum(ss_ext_sales_price) as revenue "
                "from store_sales join date_dim on ss_sold_date_sk = d_date_sk "
                "join item on ss_item_sk = i_item_sk "
                f"where d_year = {year} and d_moy between {moy} and {moy + 1} "
                f"and i_category = {sql_literal(category)} group by i_brand")
    low = rng.randint(1, 80)
    return ("select avg(ss_sales_price) as price from store_sales ss, date_dim d "
            f"where ss.ss_sold_date_sk = d.d_date_sk and d.d_year = {year} and d.d_moy = {month} "
            f"and ss.ss_quantity between {low} and {low + 20}")


def write_star_log(path: str, count: int, batches: int = 12, seed: int = 7) -> None:
    """:func:`star_log` as a ``.sql`` log, each statement after its ``-- ts:`` line."""
    with open(path, "w", encoding="utf-8") as handle:
        for ts, sql in star_log(count, batches, seed):
            handle.write(f"-- ts: {ts}\n{sql};\n")
