"""Settings precedence: defaults < layout-advisor.toml < LAYOUT_ADVISOR_* < CLI flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli import main
from engine.core.config import CONFIG_FILE_NAME, Settings, SettingWarning, load_settings
from engine.core.errors import ConfigError


def _write_config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / CONFIG_FILE_NAME).write_text(text)


def test_defaults_when_nothing_is_set(tmp_path):
    s = load_settings({"home": str(tmp_path)}, environ={})
    assert s.spark_master == Settings().spark_master == "local[*]"
    assert s.approvers == ()  # always: approvers live in the control store
    # the security policy is the admin's, in the control store; settings only tighten it,
    # so by default they leave it as it is
    assert (s.separation_of_duties, s.dual_approval_bytes, s.auth_delay_s) == (False, 0, 0.0)
    assert s.home == tmp_path


def test_file_then_environment_then_flags(tmp_path):
    _write_config(tmp_path, 'spark_master = "spark://file:7077"\ntarget_rows = 5\n'
                            'price_per_cpu_hour = 0.5\n')
    env = {"LAYOUT_ADVISOR_SPARK_MASTER": "spark://env:7077", "LAYOUT_ADVISOR_TARGET_ROWS": "7"}
    from_file = load_settings({"home": str(tmp_path)}, environ={})
    assert (from_file.spark_master, from_file.target_rows) == ("spark://file:7077", 5)
    from_env = load_settings({"home": str(tmp_path)}, environ=env)
    assert (from_env.spark_master, from_env.target_rows) == ("spark://env:7077", 7)
    assert from_env.price_per_cpu_hour == 0.5  # untouched keys still come from the file
    from_flags = load_settings({"home": str(tmp_path), "spark_master": "local[2]"}, environ=env)
    assert (from_flags.spark_master, from_flags.target_rows) == ("local[2]", 7)


def test_home_from_environment_selects_the_config_file(tmp_path):
    _write_config(tmp_path / "ws", 'ui_port = 9999\n')
    s = load_settings({}, environ={"LAYOUT_ADVISOR_HOME": str(tmp_path / "ws")})
    assert s.ui_port == 9999


def test_the_environment_and_the_file_can_no_longer_make_approvers(tmp_path):
    with pytest.raises(ConfigError, match="LAYOUT_ADVISOR_APPROVERS: approvers are no longer "
                                          "configured.*`layout-advisor approvers add NAME`"):
        load_settings({"home": str(tmp_path)}, environ={"LAYOUT_ADVISOR_APPROVERS": "mallory"})
    _write_config(tmp_path, 'approvers = ["mallory"]\n')  # an old workspace: migrate, go on
    with pytest.warns(SettingWarning, match=f"{CONFIG_FILE_NAME}: `approvers = \\[...\\]` is "
                                            "ignored: approvers are no longer"):
        assert load_settings({"home": str(tmp_path)}, environ={}).approvers == ()


def test_secret_file_variables_are_not_settings(tmp_path):
    s = load_settings({"home": str(tmp_path)}, environ={"LAYOUT_ADVISOR_SECRET_FILE": "/x",
                                                         "LAYOUT_ADVISOR_DEMO_SECRET": "y"})
    assert s.home == tmp_path


@pytest.mark.parametrize("text,needle", [
    ("scan_bytes_per_s = 0\n", "'scan_bytes_per_s'.*must be greater than 0"),
    ("sort_bytes_per_s = -5.0\n", "'sort_bytes_per_s'.*must be greater than 0"),
    ("memory_budget_bytes = inf\n", "'memory_budget_bytes'.*whole, finite number"),
    ("price_per_cpu_hour = nan\n", "'price_per_cpu_hour'.*finite number"),
    ("ui_port = 70000\n", "'ui_port'.*at most 65535"),
    ("target_rows = true\n", "'target_rows'.*not true/false"),
    ("separation_of_duties = \"maybe\"\n", "'separation_of_duties'.*true or false"),
], ids=["zero-rate", "negative-rate", "inf-int", "nan", "port", "bool-int", "bad-bool"])
def test_numbers_are_checked_where_they_enter(tmp_path, text, needle):
    _write_config(tmp_path, text)
    with pytest.raises(ConfigError, match=needle):
        load_settings({"home": str(tmp_path)}, environ={})


def test_non_utf8_config_and_a_file_as_home_are_config_errors(tmp_path):
    tmp_path.joinpath(CONFIG_FILE_NAME).write_bytes(b"spark_master = \"\xff\xfe\"\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_settings({"home": str(tmp_path)}, environ={})
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(ConfigError, match="is a file, not a workspace directory"):
        load_settings({"home": str(afile)}, environ={})


@pytest.mark.parametrize("text,needle", [
    ("no_such_setting = 1\n", "unknown setting 'no_such_setting'"),
    ("target_rows = 'many'\n", "target_rows"),
    ("target_rows = \n", CONFIG_FILE_NAME),
], ids=["unknown-key", "bad-type", "bad-toml"])
def test_bad_config_file_is_a_config_error(tmp_path, text, needle):
    _write_config(tmp_path, text)
    with pytest.raises(ConfigError, match=needle):
        load_settings({"home": str(tmp_path)}, environ={})


def test_cli_reports_bad_config_in_one_line(tmp_path, capsys):
    _write_config(tmp_path, "no_such_setting = 1\n")
    assert main(["--home", str(tmp_path), "table", "list"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown setting 'no_such_setting'" in err[0]
    assert "Traceback" not in err[0]


@pytest.mark.parametrize("name", ["fitted_job_s", "fitted_key_bytes_per_s", "file_s",
                                  "rewrite_fixed_s", "query_scan_bytes_per_s"])
@pytest.mark.parametrize("raw,needle", [("-0.5", "must be at least 0"),
                                        ("nan", "finite number"), ("inf", "finite number")],
                         ids=["negative", "nan", "inf"])
def test_calibrated_terms_are_checked_like_the_rates(tmp_path, name, raw, needle):
    """The layout terms enter from the file, the environment and the
    calibration; each way a bad value is one ConfigError naming the setting."""
    with pytest.raises(ConfigError, match=f"environment: setting '{name}'.*{needle}"):
        load_settings({"home": str(tmp_path)}, environ={f"LAYOUT_ADVISOR_{name.upper()}": raw})
    cal = tmp_path / "cal"
    cal.mkdir()
    (cal / "calibration.json").write_text(
        '{"rates": {}, "terms": {"%s": %s}}' % (name, {"-0.5": "-0.5"}.get(raw, '"%s"' % raw)))
    with pytest.raises(ConfigError, match=f"calibration.json: setting '{name}'.*{needle}"):
        load_settings({"home": str(cal)}, environ={})


def test_calibrated_terms_merge_and_configured_values_win(tmp_path):
    (tmp_path / "calibration.json").write_text(json.dumps(
        {"rates": {"rewrite_fixed_s": 2.0},
         "terms": {"fitted_job_s": 0.3, "fitted_key_bytes_per_s": 4e6, "file_s": 0.05}}))
    _write_config(tmp_path, "file_s = 0.2\n")
    s = load_settings({"home": str(tmp_path)}, environ={})
    assert (s.rewrite_fixed_s, s.fitted_job_s, s.fitted_key_bytes_per_s, s.file_s) == \
        (2.0, 0.3, 4e6, 0.2)
    s = load_settings({"home": str(tmp_path)}, environ={"LAYOUT_ADVISOR_FITTED_JOB_S": "0"})
    assert s.fitted_job_s == 0.0


_BELOW_A_BEAT = "must be greater than 10; a running plan's runner beats every 10 s"


@pytest.mark.parametrize("raw,needle", [("-1", _BELOW_A_BEAT), ("0", _BELOW_A_BEAT),
                                        ("5", _BELOW_A_BEAT), ("10", _BELOW_A_BEAT),
                                        ("nan", "finite number"), ("inf", "finite number")],
                         ids=["negative", "zero", "below-a-beat", "one-beat", "nan", "inf"])
def test_runner_timeout_is_a_checked_setting(tmp_path, raw, needle, capsys):
    """``runner_timeout_s`` (how long a silent runner on another host lives):
    300 s by default, set from the file or the environment, refused in one line naming it;
    at or below the runner's 10 s heartbeat a live runner would be taken for gone."""
    assert load_settings({"home": str(tmp_path)}, environ={}).runner_timeout_s == 300.0
    assert load_settings({"home": str(tmp_path)},
                         environ={"LAYOUT_ADVISOR_RUNNER_TIMEOUT_S": "45"}).runner_timeout_s == 45.0
    with pytest.raises(ConfigError, match=f"environment: setting 'runner_timeout_s'.*{needle}"):
        load_settings({"home": str(tmp_path)}, environ={"LAYOUT_ADVISOR_RUNNER_TIMEOUT_S": raw})
    _write_config(tmp_path, f"runner_timeout_s = {raw}\n")
    with pytest.raises(ConfigError, match=f"setting 'runner_timeout_s'.*{needle}"):
        load_settings({"home": str(tmp_path)}, environ={})
    capsys.readouterr()
    assert main(["--home", str(tmp_path), "table", "list"]) == 2  # the CLI: exit 2, one line
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "runner_timeout_s" in err, err
