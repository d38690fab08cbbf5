"""The one façade the dashboard and the CLI call.

Each area lives in its own module (``tables``, ``workload``, ``analysis``, ``plans``,
``simulate``, ``files``); this package re-exports their public functions (each module's
``__all__``) so callers write ``from engine import api; api.analyze(settings, "lineitem")``.
"""

from __future__ import annotations

from engine.api import analysis, files, plans, simulate as _simulate, tables, workload
from engine.api.analysis import (
    analyze, column_clustering, ep_files_holding, ep_metrics, fragment_scan, pruning,
    pruning_scans, signature_projection, span_shares,
)
from engine.api.files import files_bytes
from engine.api.plans import (
    BackgroundRun, approve_plan, audit_log, create_plan, default_actor, list_plans,
    plan_progress, policy_names, policy_state, preview_plan, reject_plan, require_approver,
    run_plan, show_plan, start_run,
)
from engine.api.simulate import (
    DEFAULT_SIMULATION_POLICIES, list_presets, scenario_parameters, simulate, simulate_scenario,
    simulation_policies,
)
from engine.api.tables import (
    DEMO_TARGET_ROWS, adopt_iceberg, append_table, create_table, drop_table, gc_table,
    list_tables, load_snapshot, parse_duration, register_delta, register_iceberg, register_table,
    rollback_table, show_table, table_files, table_info, table_snapshots,
)
from engine.api.workload import (
    clear_workload, import_workload, predicate_text, show_workload, workload_fragments,
    workload_version,
)

__all__ = [*tables.__all__, *workload.__all__, *analysis.__all__, *plans.__all__,
           *_simulate.__all__, *files.__all__]
