"""Shared fixtures: an isolated workspace per test and one SparkSession per run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.core.config import Settings, load_settings

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's LAYOUT_ADVISOR_* variables or ./.layout-advisor."""
    for key in list(os.environ):
        if key.startswith("LAYOUT_ADVISOR_"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("LAYOUT_ADVISOR_HOME", str(tmp_path / "home"))


@pytest.fixture(autouse=True)
def _cheap_argon2(monkeypatch: pytest.MonkeyPatch) -> None:
    """Argon2id with its smallest cost in tests (still Argon2id, still salted): the
    production parameters cost about a second per hash on a busy test machine."""
    from argon2 import PasswordHasher

    import engine.security.identity as identity

    monkeypatch.setattr(identity, "_HASHER",
                        PasswordHasher(time_cost=1, memory_cost=64, parallelism=1))
    identity._dummy_hash.cache_clear()


@pytest.fixture(autouse=True)
def _no_stored_sign_in_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stored security policy's default failed-sign-in delay is 0 in tests, so the
    settings' ``auth_delay_s`` (0.01 in :func:`settings`) decides it: tests that sign in
    after a refusal would otherwise wait a second each."""
    import engine.security.policy as policy

    monkeypatch.setattr(policy, "DEFAULT_POLICY", policy.SecurityPolicy(auth_delay_s=0.0))


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings for an empty workspace under tmp_path, with small partitions."""
    return load_settings({"home": str(tmp_path / "home"), "target_rows": 1000,
                          "spark_master": "local[2]", "auth_delay_s": 0.01})


@pytest.fixture(scope="session")
def spark():
    """The one local SparkSession shared by every test of the run."""
    from engine.spark.session import get_spark

    session = get_spark(Settings(spark_master="local[2]", spark_driver_memory="1g",
                                 spark_shuffle_partitions=4), app_name="layout-advisor-tests")
    yield session
    session.stop()
