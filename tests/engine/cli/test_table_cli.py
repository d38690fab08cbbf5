"""``layout-advisor table ...``: JSON shapes, text output, and one-line errors with exit 2."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.cli import main
from engine.core.config import load_settings
from security_helpers import ensure_account, secret_file


def write_dataset(folder: Path, files: int = 3, rows: int = 50) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for k in range(files):
        r = range(k * rows, (k + 1) * rows)
        t = pa.table({
            "id": pa.array(list(r), pa.int64()),
            "price": pa.array([decimal.Decimal(x) / 10 for x in r], pa.decimal128(9, 1)),
            "day": pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=x) for x in r]),
            "name": pa.array([None if x == 0 else f"n{x:03d}" for x in r]),
        })
        path = folder / f"part-{k}.parquet"
        pq.write_table(t, path)
        out.append(str(path))
    return out


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_show_and_snapshots_json_shapes(tmp_path, capsys, monkeypatch):
    home = str(tmp_path / "home")
    ensure_account(load_settings({"home": home}), "bob", admin=True)  # a rollback needs an admin
    ensure_account(load_settings({"home": home}), "eve")  # an approver, not an admin
    monkeypatch.setenv("LAYOUT_ADVISOR_SECRET_FILE", secret_file(tmp_path))
    paths = write_dataset(tmp_path / "data")
    code, out, _ = run(capsys, "--home", home, "table", "register", "t", str(tmp_path / "data"), "--json")
    assert code == 0 and json.loads(out)["id"] == "1"

    code, out, _ = run(capsys, "--home", home, "table", "show", "t", "--json")
    assert code == 0
    shown = json.loads(out)
    assert set(shown) == {"name", "snapshot", "format", "location", "catalog", "partitions"}
    assert (shown["format"], shown["location"], shown["catalog"]) == (
        "native", str(tmp_path / "data"), None)
    assert shown["name"] == "t" and shown["snapshot"] == "1"
    assert [p["path"] for p in shown["partitions"]] == paths
    first = shown["partitions"][0]
    assert set(first) == {"path", "rows", "bytes", "columns"}
    assert first["rows"] == 50 and first["bytes"] == Path(paths[0]).stat().st_size
    assert set(first["columns"]) == {"id", "price", "day", "name"}
    assert first["columns"]["id"] == {"min": 0, "max": 49, "nulls": 0}
    assert first["columns"]["price"] == {"min": "0.0", "max": "4.9", "nulls": 0}
    assert first["columns"]["day"] == {"min": "2020-01-01", "max": "2020-02-19", "nulls": 0}
    assert first["columns"]["name"] == {"min": "n001", "max": "n049", "nulls": 1}

    code, _, err = run(capsys, "--home", home, "table", "rollback", "t", "--to", "1", "--as", "eve")
    assert code == 2 and "'eve' is an approver; rollback needs an admin" in err
    code, out, _ = run(capsys, "--home", home, "table", "rollback", "t", "--to", "1", "--as", "bob")
    assert code == 0 and "snapshot 2" in out
    code, out, _ = run(capsys, "--home", home, "table", "snapshots", "t", "--json")
    snaps = json.loads(out)
    assert [set(s) for s in snaps] == [{"id", "parent", "created_at", "operation", "partition_count"}] * 2
    assert [(s["id"], s["parent"], s["operation"], s["partition_count"]) for s in snaps] == [
        ("1", None, "register", 3), ("2", "1", "rollback", 3)]
    dt.datetime.fromisoformat(snaps[0]["created_at"])

    code, out, _ = run(capsys, "--home", home, "table", "list", "--json")
    listed = json.loads(out)
    assert [(r["name"], r["snapshot"], r["partitions"], r["rows"], r["managed"]) for r in listed] == [
        ("t", "2", 3, 150, False)]


def test_text_output_is_aligned_tables(tmp_path, capsys):
    home = str(tmp_path / "home")
    write_dataset(tmp_path / "data")
    run(capsys, "--home", home, "table", "register", "t", str(tmp_path / "data"))
    code, out, _ = run(capsys, "--home", home, "table", "list")
    lines = out.splitlines()
    assert code == 0 and lines[0].split()[:4] == ["name", "kind", "format", "snapshot"]
    assert lines[1].split()[:3] == ["t", "registered", "native"]
    code, out, _ = run(capsys, "--home", home, "table", "show", "t")
    assert code == 0 and "micro-partitions:" in out and "part-2.parquet" in out
    assert "2020-01-01" in out and "n149" in out
    code, out, _ = run(capsys, "--home", home, "table", "snapshots", "t")
    assert out.splitlines()[0].split() == ["id", "parent", "created_at", "operation", "partitions",
                                           "by", "plan"]
    code, out, _ = run(capsys, "--home", home, "table", "gc", "t", "--dry-run", "--older-than", "0s",
                         "--force-retention")
    assert code == 0 and "would delete 0 file(s)" in out


@pytest.mark.parametrize("argv,message", [
    (["table", "show", "nope"], "no table named 'nope'"),
    (["table", "snapshots", "nope"], "no table named 'nope'"),
    (["table", "rollback", "t", "--to", "9", "--as", "bob"], "has no snapshot '9'"),
    (["table", "gc", "t", "--older-than", "seven"], "invalid duration"),
    (["table", "register", "t", "{data}"], "already exists"),
    (["table", "register", "u", "{tmp}/missing"], "no such file"),
    (["table", "register", "u", "{tmp}/corrupt.parquet"], "corrupt.parquet"),
    (["table", "create", "u", "--from", "{tmp}/empty.csv"], "empty"),
    (["table", "create", "u", "--from", "{tmp}/missing.csv"], "no such file"),
    (["table", "create", "u", "--from", "{tmp}/corrupt.parquet"], "corrupt.parquet"),
    (["table", "create", "t", "--from", "{data}"], "already exists"),
    (["table", "create", "u", "--from", "{data}", "--order-by", "nope"], "unknown column 'nope'"),
    (["table", "create", "bad name", "--from", "{data}"], "invalid table name"),
    (["table", "register", "u", "{data}", "--iceberg", "ns.t"], "give exactly one of PATH"),
    (["table", "register", "u"], "give exactly one of PATH"),
    (["table", "register", "u", "--iceberg", "ns.nope"], "has no table 'ns.nope'"),
    (["table", "register", "u", "--iceberg", "flat"], "give NAMESPACE.TABLE"),
    (["table", "register", "u", "--iceberg", "ns.t", "--catalog", "nowhere"],
     "iceberg catalog 'nowhere' cannot be loaded"),
    (["table", "register", "u", "--delta", "{data}"], "not a Delta table"),
    (["table", "register", "u", "{data}", "--catalog", "c"], "--catalog goes with --iceberg"),
    (["table", "adopt", "u", "{tmp}/missing"], "no Parquet files to adopt"),
], ids=["show", "snapshots", "rollback", "duration", "register-exists", "register-missing",
        "register-corrupt", "create-empty", "create-missing", "create-corrupt", "create-exists",
        "create-bad-column", "bad-name", "register-two-sources", "register-no-source",
        "iceberg-missing", "iceberg-flat-name", "iceberg-bad-catalog", "delta-not-delta",
        "catalog-without-iceberg", "adopt-missing"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, message):
    home = str(tmp_path / "home")
    write_dataset(tmp_path / "data", files=1)
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "corrupt.parquet").write_bytes(b"PAR1 definitely not a footer PAR1")
    run(capsys, "--home", home, "table", "register", "t", str(tmp_path / "data"))
    argv = [a.format(tmp=tmp_path, data=tmp_path / "data") for a in argv]
    code, _, err = run(capsys, "--home", home, *argv)
    assert code == 2
    errors = [line for line in err.splitlines() if not line.startswith("[table]")]
    assert len(errors) == 1 and errors[0].startswith("layout-advisor: error: ")
    assert message in errors[0]
    assert "Traceback" not in err


@pytest.mark.spark
def test_create_via_cli_with_progress_on_stderr(tmp_path, capsys, spark):
    home = str(tmp_path / "home")
    write_dataset(tmp_path / "data", files=2, rows=120)
    code, out, err = run(capsys, "--home", home, "table", "create", "c", "--from",
                         str(tmp_path / "data"), "--target-rows", "100", "--json")
    assert code == 0, err
    made = json.loads(out)
    assert (made["id"], made["operation"], made["partition_count"], made["rows"]) == ("1", "create", 3, 240)
    assert "[table] writing 240 rows as 3 micro-partitions" in err
    code, out, _ = run(capsys, "--home", home, "table", "show", "c", "--json")
    assert [p["rows"] for p in json.loads(out)["partitions"]] == [100, 100, 40]
    # a CSV whose --order-by column only shows up after schema inference
    (tmp_path / "rows.csv").write_text("a,b\n1,x\n2,y\n")
    code, _, err = run(capsys, "--home", home, "table", "create", "d", "--from",
                       str(tmp_path / "rows.csv"), "--order-by", "zz")
    errors = [line for line in err.splitlines() if not line.startswith("[table]")]
    assert code == 2 and len(errors) == 1 and "unknown column 'zz'; columns are: a, b" in errors[0]
