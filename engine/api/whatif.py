"""What-if: generated scenarios simulated under several policies, the same on the user's
own table and workload, a busier workload's plan, and whole-table designs previewed.

Everything here is simulated or previewed; nothing is stored. The computations are
:mod:`engine.whatif`; :class:`WhatIfOptions` gathers how the what-if on a table is computed
(sampling, reuse, PTO's design, DD's tuning, cold starts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from engine.api.results import WhatIfReport
from engine.whatif import busier, designs, own, simulate as simulation
from engine.whatif.designs import PAW_DELTA_ESTIMATORS, PAW_PSI
from engine.whatif.own import (DEFAULT_WHATIF_POLICIES, SAMPLE_ROWS, WhatIfOptions,
                               whatif_policies)
from engine.whatif.simulate import (COLD_START_MODES, DEFAULT_COLD_START,
                                    DEFAULT_SIMULATION_POLICIES, list_presets,
                                    scenario_parameters, simulation_policies)
from engine.workspace import as_workspace, on_settings, on_workspace

if TYPE_CHECKING:
    from engine.workspace import Workspace

__all__ = ["simulate", "simulate_scenario", "list_presets", "scenario_parameters",
           "simulation_policies", "DEFAULT_SIMULATION_POLICIES", "COLD_START_MODES",
           "DEFAULT_COLD_START", "whatif_table", "whatif_shift_choices", "whatif_policies",
           "DEFAULT_WHATIF_POLICIES", "WhatIfOptions", "busier_preview",
           "design_paw", "design_pto", "PAW_PSI", "PAW_DELTA_ESTIMATORS"]

simulate = on_settings(simulation.simulate)
simulate_scenario = on_settings(simulation.simulate_scenario)
whatif_shift_choices = on_workspace(own.whatif_shift_choices)
busier_preview = on_workspace(busier.busier_preview)
design_paw = on_workspace(designs.design_paw)
design_pto = on_workspace(designs.design_pto)


def whatif_table(ws: "Workspace", table: str,
                 policies: Sequence[str] | str = DEFAULT_WHATIF_POLICIES, batches: int = 8,
                 shift: "str | Sequence[str] | None" = None, sample_rows: int = SAMPLE_ROWS,
                 seed: int = 0, progress: Callable[[Mapping[str, Any]], None] | None = None,
                 options: WhatIfOptions | None = None) -> WhatIfReport:
    """Replay ``table``'s imported workload (and, with ``shift`` "SOURCE:TARGET" or "auto",
    a copy whose predicate moved) on a simulated copy of the table under ``policies``
    (:func:`engine.whatif.own.whatif_table`); ``options`` (:class:`WhatIfOptions`) says how."""
    return WhatIfReport(**own.whatif_table(as_workspace(ws), table, policies, batches, shift,
                                           sample_rows, seed, progress, options or WhatIfOptions()))
