"""The one façade the dashboard and the CLI call.

Each area lives in its own module (``tables``, ``workload``, ``analysis``, ``plans``,
``simulate``, ``files``); this package re-exports their public functions (each module's
``__all__``) so callers write ``from engine import api; api.analyze(settings, "lineitem")``.
"""

from __future__ import annotations

from engine.api import (
    analysis, calibration, demo, design, export, files, history, impact, plans, security,
    simulate as _simulate, state, tables, workload,
)
from engine.api.analysis import (
    analyze, analyze_with_arrays, column_clustering, ep_files_holding, ep_metrics, fragment_scan,
    iter_pruning, predicate_partitions, pruning, pruning_scans, signature_projection, span_shares,
)
from engine.api.design import PAW_DELTA_ESTIMATORS, PAW_PSI, design_paw, design_pto
from engine.api.calibration import calibrate, calibrate_queries, calibrate_rewrite, show_calibration
from engine.api.demo import DEMO_SCALE, make_demo_data, start_spark_early
from engine.api.demo import DEMO_WRITERS, create_demo_table
from engine.api import summaries
from engine.api.summaries import (SUMMARY_VERSION, column_partition_arrays, column_summaries,
                                  pruning_summary, stored_column_clustering, warm_summaries)
from engine.api import partition_view
from engine.api.partition_view import (EP_FILES_SHOWN, PARTITION_SORT_KEYS, ep_overview,
                                       partition_details, partition_page)
from engine.api.export import compare_plans, plan_json, plan_runbook
from engine.api import compare, runs, whatif
from engine.api.compare import PREVIEW_LABEL, compare_preview
from engine.api.runs import (
    CANCELLED, RunCancelled, cancel_plan, eta_seconds, run_eta, settle_cancelled,
)
from engine.api.whatif import (
    DEFAULT_WHATIF_POLICIES, whatif_policies, whatif_shift_choices, whatif_table,
)
from engine.api.files import files_bytes, rollback_targets
from engine.api.history import clustering_trend, reclustering_history
from engine.api.history import snapshot_history
from engine.api.impact import plan_impact
from engine.api.plans import (
    BackgroundRun, approve_plan, audit_log, create_plan, default_actor, list_plans,
    plan_progress, policy_names, policy_state, prediction_history, preview_plan, reject_plan,
    require_approver, run_plan, show_plan, start_run,
)
from engine.api.plans import realized_savings
from engine.api import busier
from engine.api.busier import busier_preview
from engine.api import wair_defaults
from engine.api.wair_defaults import wair_k_max
from engine.api.security import (
    Identity, add_approver, authenticate, change_secret, check_session, generate_secret,
    has_admin, link_oidc, list_approvers, list_oidc_links, remove_approver, sign_in_oidc,
    sign_out, unlink_oidc, verify_audit,
)
from engine.api.simulate import (
    COLD_START_MODES, DEFAULT_COLD_START, DEFAULT_SIMULATION_POLICIES, list_presets, scenario_parameters,
    simulate, simulate_scenario, simulation_policies,
)
from engine.api.state import reset_policy_state, rollback_and_reset, wair_state
from engine.api.tables import (
    DEMO_TARGET_ROWS, MIN_RETENTION, adopt_iceberg, append_table, create_table, drop_table,
    gc_table, list_tables, load_snapshot, parse_duration, register_delta, register_iceberg,
    register_table, rollback_table, show_table, table_files, table_info, table_snapshots,
)
from engine.api.workload import (
    clear_workload, import_workload, lint_workload, predicate_text, show_workload,
    workload_fragments, workload_version,
)
from engine.api import workload_view
from engine.api.workload_view import (
    QUERY_SORT_KEYS, find_queries, histogram_bins, query_page, query_scan,
)

__all__ = [*tables.__all__, *workload.__all__, *analysis.__all__, *plans.__all__,
           *_simulate.__all__, *files.__all__, *history.__all__, *impact.__all__,
           *design.__all__, *security.__all__, *calibration.__all__,
           *export.__all__, *state.__all__, *demo.__all__,
           *summaries.__all__, *partition_view.__all__, *compare.__all__, *whatif.__all__, *runs.__all__,
           *workload_view.__all__, *busier.__all__, *wair_defaults.__all__]
