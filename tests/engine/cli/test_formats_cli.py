"""The CLI over open formats: adopt a Parquet folder as Iceberg without copying, register
Iceberg and Delta tables, ``table files`` and ``table show --json``'s format fields."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
from deltalake import write_deltalake

from engine.cli import main
from engine.table.formats import iceberg
from plan_helpers import lineitem_arrow


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_adopt_register_files_and_show(tmp_path, capsys):
    home = str(tmp_path / "home")
    folder = tmp_path / "dataset"
    folder.mkdir()
    data = lineitem_arrow(300)
    for i in range(3):
        pq.write_table(data.slice(i * 100, 100), folder / f"part-{i}.parquet")
    before = {p: p.stat().st_mtime_ns for p in folder.glob("*.parquet")}
    code, out, err = run(capsys, "--home", home, "table", "adopt", "li", str(folder), "--json")
    assert code == 0, err
    assert json.loads(out)["partition_count"] == 3
    # nothing copied: the catalog's table points at the very same files, untouched
    tbl = iceberg.workspace_catalog(home).load_table("default.li")
    assert tbl.scan().to_arrow().num_rows == 300
    assert {p: p.stat().st_mtime_ns for p in folder.glob("*.parquet")} == before
    code, out, _ = run(capsys, "--home", home, "table", "files", "li", "--json")
    files = json.loads(out)
    assert sorted(files) == sorted(f"file://{p}" for p in before)
    code, out, _ = run(capsys, "--home", home, "table", "files", "li")
    assert out.split() == files
    code, out, _ = run(capsys, "--home", home, "table", "show", "li", "--json")
    shown = json.loads(out)
    assert (shown["format"], shown["catalog"], shown["location"]) == (
        "iceberg", None, f"file://{folder}")
    # the same Iceberg table registered under a second name, by identifier
    code, out, _ = run(capsys, "--home", home, "table", "register", "li2", "--iceberg",
                       "default.li", "--json")
    assert code == 0 and json.loads(out)["rows"] == 300
    code, out, _ = run(capsys, "--home", home, "table", "show", "li2")
    assert "format iceberg, default.li in catalog workspace" in out
    code, out, _ = run(capsys, "--home", home, "table", "list", "--json")
    assert [(r["name"], r["format"]) for r in json.loads(out)] == [("li", "iceberg"),
                                                                   ("li2", "iceberg")]


def test_register_delta_and_show_its_columns_without_statistics(tmp_path, capsys):
    home = str(tmp_path / "home")
    path = str(tmp_path / "dl")
    write_deltalake(path, lineitem_arrow(100),
                    configuration={"delta.dataSkippingNumIndexedCols": "3"})
    code, out, err = run(capsys, "--home", home, "table", "register", "d", "--delta", path, "--json")
    assert code == 0, err
    assert json.loads(out)["id"] == "0"
    code, out, _ = run(capsys, "--home", home, "table", "show", "d")
    assert "format delta" in out
    assert ("no statistics in the format's metadata for: l_commitdate, l_quantity, l_comment; "
            "read from the Parquet footers") in out
    code, out, _ = run(capsys, "--home", home, "table", "snapshots", "d", "--json")
    snaps = json.loads(out)
    assert [s["id"] for s in snaps] == ["0"] and snaps[0]["parent"] is None
    assert os.path.isdir(Path(path) / "_delta_log")
