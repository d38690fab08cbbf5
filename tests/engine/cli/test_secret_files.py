"""A secret file is read as its first line, bounded, from a regular file only: a device
that never ends, a pipe nobody writes, a folder or a huge line is refused in one line
naming the file, before any sign-in is tried (so it is not counted as a failed sign-in),
and a file saved with a UTF-8 byte order mark or Windows line ends signs in."""

from __future__ import annotations

import argparse
import io
import os
import threading

import pytest

from engine import api
from engine.cli import main
from engine.cli.auth import SECRET_FILE_MAX_BYTES, read_secret
from engine.core.errors import InvalidParameterError
from security_helpers import SECRET, ensure_account


def _read(path):
    return read_secret(argparse.Namespace(secret_file=str(path)), "alice")


@pytest.mark.parametrize("content", [
    SECRET.encode() + b"\n", SECRET.encode(), b"\xef\xbb\xbf" + SECRET.encode() + b"\r\n",
    SECRET.encode() + b"\r\nsecond line\n"], ids=["line", "no-newline", "bom-crlf", "two-lines"])
def test_the_secret_is_the_first_line_without_bom_or_line_end(tmp_path, content):
    path = tmp_path / "s"
    path.write_bytes(content)
    assert _read(path) == SECRET


def _fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("make,why", [
    (lambda t: "/dev/zero", "not a regular file"),
    (_fifo, "not a regular file"),
    (lambda t: t, "not a regular file"),
    (lambda t: t / "missing", "cannot read it"),
    (lambda t: (t / "big").write_bytes(b"x" * (SECRET_FILE_MAX_BYTES + 1)) and t / "big",
     f"longer than {SECRET_FILE_MAX_BYTES} bytes"),
    (lambda t: (t / "empty").write_bytes(b"\xef\xbb\xbf\n") and t / "empty", "first line is empty"),
    (lambda t: (t / "bin").write_bytes(b"\xff\xfe\n") and t / "bin", "not UTF-8"),
    (lambda t: (t / "nul").write_bytes(b"a\x00b\n") and t / "nul", "NUL"),
], ids=["dev-zero", "fifo", "folder", "missing", "long", "empty", "binary", "nul"])
def test_anything_but_a_text_file_is_refused_in_one_line_without_blocking(tmp_path, make, why):
    path = make(tmp_path)
    done: list[BaseException] = []

    def attempt():
        try:
            _read(path)
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            done.append(exc)

    reader = threading.Thread(target=attempt, daemon=True)
    reader.start()
    reader.join(20)
    assert not reader.is_alive(), f"reading {path} blocked"
    assert len(done) == 1 and isinstance(done[0], InvalidParameterError)
    message = str(done[0])
    assert message.startswith(f"--secret-file {path}: ") and why in message and "\n" not in message


def test_a_refused_secret_file_exits_2_and_is_not_a_failed_sign_in(settings, tmp_path, capsys,
                                                                    monkeypatch):
    ensure_account(settings, "alice")
    home = str(settings.home)
    entries = api.verify_audit(settings)["entries"]
    fifo = _fifo(tmp_path)
    for bad in ("/dev/zero", str(fifo)):
        assert main(["--home", home, "approvers", "passwd", "alice", "--as", "alice",
                     "--secret-file", bad]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"--secret-file {bad}: not a regular file" in err[0]
    assert api.verify_audit(settings)["entries"] == entries  # no failed sign-in recorded
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbf" + SECRET.encode() + b"\r\n")
    monkeypatch.setattr("sys.stdin", io.StringIO("\ufeff" + SECRET + "\r\n"))  # the new secret
    assert main(["--home", home, "approvers", "passwd", "alice", "--as", "alice",
                 "--secret-file", str(bom)]) == 0
    assert api.authenticate(settings, "alice", SECRET).name == "alice"
