"""Pruning analysis: which partitions each scan fragment prunes, scans, fully covers.

``analyze_fragment(zonemaps, fragment) -> FragmentScan`` works on the driver with numpy
only, conservatively (a missing bound means "might match"). Utilization is the estimated
fraction of a scanned partition's rows that match (uniform within the zonemap range),
1.0 for fully covered partitions and 0.0 for pruned ones.

This module is the public entry to the scan analysis; each part lives in a module of its
own:

* :mod:`engine.scan.fragment_scan`: :class:`FragmentScan`, the sparse outcome, and
  :func:`fragment_summary`;
* :mod:`engine.scan.estimate`: the per-column arithmetic on zonemaps and the dense
  reference evaluator :func:`analyze_fragment_dense`;
* :mod:`engine.scan.endpoints`: per-column sorted endpoints, :func:`analyze_fragment` and
  :func:`covering_candidates` (O(log n + k) per range);
* :mod:`engine.scan.batched`: :func:`analyze_fragments`, a window of fragments at once;
* :mod:`engine.scan.window`: :class:`WindowScans` and :func:`analyze_workload`, a
  window's outcomes computed lazily, optionally refined by row groups
  (:mod:`engine.scan.rowgroups`).
"""

from engine.scan.batched import analyze_fragments
from engine.scan.endpoints import analyze_fragment, covering_candidates
from engine.scan.estimate import DISCRETE_TYPES, analyze_fragment_dense
from engine.scan.fragment_scan import FragmentScan, fragment_summary
from engine.scan.window import WindowScans, analyze_workload, fragment_key

__all__ = [
    "DISCRETE_TYPES", "FragmentScan", "WindowScans", "analyze_fragment", "analyze_fragment_dense",
    "analyze_fragments", "analyze_workload", "covering_candidates", "fragment_key", "fragment_summary",
]
