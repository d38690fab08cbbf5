"""The frames and labels the dashboard's pages show, built from engine results.

Pure pandas and numpy: no Streamlit and no engine call (:mod:`app.services` fetches,
these modules only reshape), so every function can be tested on plain data. One module
per topic: :mod:`~app.views.formatting` (numbers, Markdown-safe text, badges),
:mod:`~app.views.tables` (snapshots, partitions), :mod:`~app.views.workload`,
:mod:`~app.views.plans`, :mod:`~app.views.runs`, :mod:`~app.views.simulation` and
:mod:`~app.views.designs`. Their public names are re-exported here for the pages
(``views.partition_frame(...)``); a tunable limit such as
:data:`app.views.tables.BULK_ROWS` is read in its own module.
"""

from __future__ import annotations

from app.views.formatting import (
    fmt_bytes, fmt_seconds, fmt_money, fmt_num, md_text, LIGHT_WORDS, STATUS_BADGE,
    light_badge, verdict_reason, sentence,
)
from app.views.tables import (
    table_label, snapshot_history, snapshot_history_frame, trend_series, partition_order,
    partition_frame, filter_partitions, partition_zonemaps,
)
from app.views.workload import (
    pruning_frame, QUERY_SORT_LABELS, queries_table, picked_row, column_frequency,
    workload_summary, relevant_columns, query_times, selectivity, waste_per_column,
    query_labels, workload_views, range_sources,
)
from app.views.plans import (
    wair_params, k_max_help, proposer_label, plans_list, plans_frame, cost_table,
    groups_frame, group_label, NOT_REWRITTEN, group_assignment, signature_points,
    plan_summary, predicted_time_caption, impact_frames, regressions_frame,
    refused_net_of_losses, plan_key_columns, compare_frame, wair_state_frame, busier_text,
)
from app.views.runs import (
    run_progress, eta_text, cancel_text, cost_check_frame, RE_ESTIMATED_LABEL,
    REALIZED_LABEL, later_saving_label, history_frame, realized_frame, log_check_frame,
    prediction_frame, prediction_summary, depth_before_after, UNDERDELIVERED, savings_frame,
    underdelivered_red, savings_summary, promise_text,
)
from app.views.simulation import (
    simulation_frames, period_frame,
)
from app.views.designs import (
    PAW_METHODS, paw_costs_frame, pto_candidates_frame,
)

__all__ = [
    "fmt_bytes", "fmt_seconds", "fmt_money", "fmt_num", "md_text", "sentence", "LIGHT_WORDS",
    "STATUS_BADGE", "light_badge", "verdict_reason", "table_label", "snapshot_history",
    "snapshot_history_frame", "trend_series", "partition_order", "partition_frame",
    "filter_partitions", "partition_zonemaps", "pruning_frame", "QUERY_SORT_LABELS",
    "queries_table", "range_sources", "picked_row", "column_frequency", "workload_summary",
    "relevant_columns", "query_times", "selectivity", "waste_per_column", "query_labels",
    "workload_views", "wair_params", "k_max_help", "proposer_label", "plans_list",
    "plans_frame", "cost_table", "groups_frame", "group_label", "NOT_REWRITTEN",
    "group_assignment", "signature_points", "plan_summary", "predicted_time_caption",
    "impact_frames", "regressions_frame", "refused_net_of_losses", "plan_key_columns",
    "compare_frame", "wair_state_frame", "busier_text", "run_progress", "eta_text",
    "cancel_text", "cost_check_frame", "RE_ESTIMATED_LABEL", "REALIZED_LABEL",
    "later_saving_label", "history_frame", "realized_frame", "log_check_frame",
    "prediction_frame", "prediction_summary", "depth_before_after", "UNDERDELIVERED",
    "savings_frame", "underdelivered_red", "savings_summary", "promise_text", "simulation_frames",
    "period_frame", "PAW_METHODS", "paw_costs_frame", "pto_candidates_frame",
]
