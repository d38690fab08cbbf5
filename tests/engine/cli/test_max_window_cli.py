"""``plan preview --max-window``: WAIR's largest window is a parameter of the command line, so a
window over the default 10,000 queries is refused with the setting to raise, then accepted."""

from __future__ import annotations

from engine.cli import main
from engine.workload.store import WorkloadStore
from plan_helpers import make_table, shipdate_fragments


def test_a_window_over_the_default_maximum_names_the_flag_and_is_accepted_with_it(settings, capsys):
    snap = make_table(settings, n=1000, rows_per_file=250)
    WorkloadStore(settings).append("lineitem", shipdate_fragments("lineitem", n=30), snap.schema)
    home = ["--home", str(settings.home), "plan", "preview", "lineitem"]

    assert main(home + ["--window", "20000"]) == 2
    err = capsys.readouterr().err
    assert "window must be within [10, 10000], got 20000 (max_window raises the upper end)" in err
    assert err.count("\n") == 1  # one line, no traceback

    assert main(home + ["--window", "20000", "--max-window", "20000"]) == 0
    assert "window must be" not in capsys.readouterr().err
