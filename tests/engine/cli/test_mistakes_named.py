"""A mistyped table name or a bad argument value is one line naming it, exit code 2, on
commands that used to answer with an unrelated reason or an empty listing."""

from __future__ import annotations

import pytest

from engine.cli import main
from plan_helpers import make_table


@pytest.mark.parametrize("argv,expect", [
    (("calibrate", "--queries-on", "nosuch"), "no table named 'nosuch'"),
    (("plan", "list", "--table", "nosuch"), "no table named 'nosuch'"),
    (("table", "gc", "lineitem", "--older-than", "5x"), "--older-than: invalid duration '5x'"),
], ids=["calibrate-queries-on", "plan-list-table", "gc-older-than"])
def test_the_mistake_is_named_in_one_line_with_exit_2(settings, capsys, argv, expect):
    make_table(settings, "lineitem", n=1000, rows_per_file=500)
    assert main(["--home", str(settings.home), *argv]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and expect in lines[0] and out == ""


def test_plan_list_of_a_known_table_without_plans_is_empty(settings, capsys):
    make_table(settings, "lineitem", n=1000, rows_per_file=500)
    assert main(["--home", str(settings.home), "plan", "list", "--table", "lineitem"]) == 0
    assert capsys.readouterr().out.strip() == "no plans"
