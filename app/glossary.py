"""The dashboard's glossary: every term a page shows, in plain words, with where it comes from.

Pure data (no Streamlit), so a test can check that each term the pages use is explained.
References name the source document and its section, equation or paragraph:
WAIR (Workload-Aware Incremental Reclustering, SIGMOD 2026), the Snowflake patent
US 12386863 on expression-property (EP) metadata, PAW and PTO.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    name: str
    meaning: str
    source: str


TERMS: tuple[Term, ...] = (
    Term("Micro-partition", "One Parquet data file of the table, with a min/max zonemap per "
         "column. Queries skip the files whose zonemaps cannot match.", "WAIR §2.1"),
    Term("Zonemap", "The min and max value (and null count) of a column in one micro-partition, "
         "read from the file's metadata; all pruning decisions use only these.", "WAIR §2.1"),
    Term("Overlap width", "For one partition: how many other partitions' [min, max] ranges "
         "intersect its range on the column. Lower is better clustered.", "WAIR §2.2, Fig. 3"),
    Term("Overlap depth", "At one value: how many partitions' ranges cover it. Average depth 1 "
         "means every value lives in one file; a perfectly sorted column reports about 2 where "
         "neighbouring files share a boundary value.", "WAIR §2.2, Fig. 3; Snowflake "
         "SYSTEM$CLUSTERING_DEPTH"),
    Term("Depth histogram", "Partitions counted by the depth around them, in buckets 1, 2, ..., "
         "16, 32, 64, ...; mass on the right means poor clustering.", "Snowflake "
         "SYSTEM$CLUSTERING_INFORMATION"),
    Term("Constant partition", "A partition whose min equals its max on the column: it can never "
         "be improved by reclustering on that column.", "Snowflake SYSTEM$CLUSTERING_INFORMATION"),
    Term("Scan fragment", "What one query asks of the table: a union of boxes of per-column "
         "ranges (open ends allowed) and the columns it reads.", "PTO §3.1"),
    Term("Pruned / scanned / fully covered", "A partition a query skips by its zonemap / must "
         "read / reads entirely because every row matches.", "WAIR §3"),
    Term("Boundary partition", "A scanned partition only partly inside a query's range: it is "
         "read in full although only some rows match. Reclustering targets these.",
         "WAIR §3, Fig. 5"),
    Term("Utilization", "The share of a scanned partition's rows that a query really uses "
         "(estimated from zonemaps, or counted exactly on Spark).", "WAIR §4.1, Fig. 6"),
    Term("Saving (equation 3)", "The query time a rewrite of a partition would save: its unused "
         "share (1 - utilization) of the bytes read, priced at the query's measured or estimated "
         "read time.", "WAIR §4.2, eq. 3"),
    Term("Reclustering cost", "The time to read, sort and write the chosen partitions "
         "(in-memory sort, or external merge sort above the memory budget).", "WAIR §4.2, t_r"),
    Term("Algorithm 2 and the cut", "Partitions ranked by saving; every prefix (cut) is priced "
         "as cost minus saving, and the cheapest negative one is chosen.", "WAIR §4.2, Alg. 2, "
         "eq. 1"),
    Term("Window", "How many recent queries a decision looks at. WAIR doubles it when savings "
         "came true and halves it when they fell short.", "WAIR §4.2"),
    Term("alpha (aggressiveness)", "Recluster only when the saving exceeds alpha times the "
         "cost; below 1 acts earlier, above 1 waits for surer gains.", "WAIR §4.3, eq. 4"),
    Term("beta (performance bonus)", "Extra value, in CPU-seconds, credited for each partition "
         "a query no longer has to read.", "WAIR §4.3, eq. 6"),
    Term("Cost limit", "A cap on reclustering cost not yet paid back by realized savings.",
         "WAIR §4.2, eq. 2"),
    Term("Credit c", "A per-query allowance: a rewrite may cost at most the net realized "
         "savings so far plus c times the queries seen.", "WAIR §4.3, eq. 5"),
    Term("k_max", "The most partitions sorted together in one chunk (the memory limit); unless "
         "set, the memory budget over the table's median partition.", "WAIR §3.3"),
    Term("Savings signature", "For one partition, how its saving splits over the predicated "
         "columns, as a unit vector.", "WAIR §4.4"),
    Term("DBSCAN, eps, min_samples", "Clustering of the signatures by cosine distance: eps is "
         "the neighbourhood radius, min_samples the smallest cluster; outliers are noise.",
         "WAIR §4.4"),
    Term("Anchor", "A reference direction a cluster is matched to: one column (sort by it) or an "
         "equal blend of columns (Hilbert curve over them).", "WAIR §4.4"),
    Term("Hybrid layout", "Each group of partitions gets its own ordering: a sort key, a Hilbert "
         "curve over several columns, or a Qd-tree for scattered signatures.", "WAIR §4.4"),
    Term("Sort / Z-order / Hilbert", "Orderings written into the files: one column; several "
         "columns interleaved bit by bit; several columns along a space-filling curve that keeps "
         "neighbours closer than Z-order.", "WAIR §4.4"),
    Term("Qd-tree", "A tree of cuts chosen from the queries' own predicates, whose leaves become "
         "files.", "WAIR §6.3; PAW §II"),
    Term("EP file", "A group of micro-partitions' metadata (in creation order) with its own data "
         "region, overlap and depth.", "Patent US 12386863, paragraphs 36-42, 76-82"),
    Term("Sub-range, deepest sub-range", "The value ranges between adjacent EP-region bounds; "
         "the deepest is the one covered by the largest sum of average depths.",
         "Patent US 12386863, paragraphs 87-96"),
    Term("DD", "Data-driven reclustering: rewrite up to K partitions deeper than a threshold, "
         "ignoring the workload.", "WAIR §6.3 (Dremio style)"),
    Term("DD-EP", "The patent's selection: seed EP region, trimming to a partition threshold, "
         "repeated rounds.", "Patent US 12386863, paragraphs 97-125"),
    Term("NR, NN, QD, Oracle", "Baselines: never recluster; sort each new batch; rebuild a "
         "Qd-tree each period; a table fully sorted before each batch (uncharged).",
         "WAIR §6.3, §6.9"),
    Term("Snapshot", "One version of the table; a commit publishes a new one atomically and old "
         "ones stay readable until garbage collection.", "WAIR §5.1"),
    Term("Stale plan", "A plan whose base snapshot is no longer current: the table changed, so "
         "it can never run.", "Layout Advisor"),
    Term("Break-even", "How many queries it takes for the predicted saving to repay the "
         "reclustering cost.", "Layout Advisor"),
)


def search(text: str) -> list[Term]:
    """Terms whose name or meaning contains ``text`` (case-insensitive), name matches
    first; all of them for ''.

    Example:
    >>> [t.name for t in search("alpha")]
    ['alpha (aggressiveness)']
    """
    needle = text.strip().lower()
    by_name = [t for t in TERMS if needle in t.name.lower()]
    return by_name + [t for t in TERMS if t not in by_name and needle in t.meaning.lower()]
