"""Signing in from the command line: ``--as NAME`` and a secret that never is an argument.

The secret comes from ``--secret-file PATH`` or ``LAYOUT_ADVISOR_SECRET_FILE`` (automation),
else from a prompt when stdin is a terminal (not echoed). It is never read from the
command line, never printed and never logged. A new secret (``approvers add``/``passwd``)
is asked twice on a terminal, or read from the first line of stdin for scripts.
"""

from __future__ import annotations

import argparse
import getpass
import os
import stat
import sys
from contextlib import contextmanager
from typing import Any, Iterator

from engine import api
from engine.core.errors import AdvisorError, InvalidParameterError

SECRET_FILE_ENV = "LAYOUT_ADVISOR_SECRET_FILE"


def add_identity_args(parser: argparse.ArgumentParser, required: bool = True,
                      who: str = "approver") -> None:
    """``--as NAME`` and ``--secret-file PATH`` on a guarded command. Abbreviations are
    off on that parser, so a mistyped ``--secret VALUE`` is refused instead of being taken
    for ``--secret-file`` (and its value shown as a path)."""
    parser.allow_abbrev = False
    parser.add_argument("--as", dest="actor", metavar="NAME", required=required,
                        help=f"{who} name; the secret is prompted for, or read from "
                             f"--secret-file / {SECRET_FILE_ENV}")
    parser.add_argument("--secret-file", dest="secret_file", metavar="PATH",
                        help="file whose first line is the secret (for automation)")


#: the most bytes read from a secret file: its first line must end within them
SECRET_FILE_MAX_BYTES = 4096
_BOM = "\ufeff"


def _read_secret_file(path: str, origin: str) -> str:
    """The first line of the regular file ``path``, without a UTF-8 byte order mark and
    without its line end. At most :data:`SECRET_FILE_MAX_BYTES` are read, and only from a
    regular file (checked before opening, and again on the open descriptor: a device such as
    ``/dev/zero`` never ends, a FIFO without a writer blocks the open). Anything else is an
    :class:`InvalidParameterError` naming ``origin`` and ``path``, raised before any sign-in
    is tried, so a bad file is never counted as a failed sign-in."""
    def refuse(why: str) -> InvalidParameterError:
        return InvalidParameterError(f"{origin} {path}: {why}")

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise refuse("not a regular file (a device, pipe or folder); put the secret in a file")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise refuse(f"cannot read it ({exc.strerror or exc})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced between the two looks
            raise refuse("not a regular file (a device, pipe or folder); put the secret in a file")
        data = b""
        while len(data) <= SECRET_FILE_MAX_BYTES and b"\n" not in data:
            chunk = os.read(fd, SECRET_FILE_MAX_BYTES + 1 - len(data))
            if not chunk:
                break
            data += chunk
    except OSError as exc:
        raise refuse(f"cannot read it ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    first, newline, _ = data.partition(b"\n")
    if not newline and len(data) > SECRET_FILE_MAX_BYTES:
        raise refuse(f"the first line is longer than {SECRET_FILE_MAX_BYTES} bytes; a secret "
                     "file holds the secret on its first line")
    try:
        text = first.decode("utf-8")
    except UnicodeDecodeError:
        raise refuse("not UTF-8 text (its first line)") from None
    secret = text.removeprefix(_BOM).removesuffix("\r")
    if not secret:
        raise refuse("the first line is empty")
    if "\x00" in secret or "\r" in secret:
        raise refuse("the first line holds a NUL or carriage return; a secret file holds "
                     "the secret as text on its first line")
    return secret


def read_secret(args: argparse.Namespace, name: str) -> str:
    """The signing-in secret of ``name``: --secret-file, the environment's file, a prompt."""
    if getattr(args, "secret_file", None):
        return _read_secret_file(args.secret_file, "--secret-file")
    if os.environ.get(SECRET_FILE_ENV):
        return _read_secret_file(os.environ[SECRET_FILE_ENV], SECRET_FILE_ENV)
    if sys.stdin is not None and sys.stdin.isatty():
        return getpass.getpass(f"secret for {name}: ")
    raise InvalidParameterError(f"no secret for {name!r}: run on a terminal to be asked, or "
                                f"pass --secret-file PATH or set {SECRET_FILE_ENV}")


def read_new_secret(name: str) -> str:
    """A new secret for ``name``: asked twice on a terminal, else stdin's first line."""
    if sys.stdin is not None and sys.stdin.isatty():
        first = getpass.getpass(f"new secret for {name}: ")
        if getpass.getpass("again: ") != first:
            raise InvalidParameterError("the two secrets differ; nothing was changed")
        return first
    line = sys.stdin.readline(SECRET_FILE_MAX_BYTES + 1) if sys.stdin is not None else ""
    if len(line) > SECRET_FILE_MAX_BYTES and not line.endswith("\n"):
        raise InvalidParameterError(f"the new secret for {name!r} on stdin is longer than "
                                    f"{SECRET_FILE_MAX_BYTES} characters")
    secret = line.removeprefix(_BOM).rstrip("\r\n")
    if not secret:
        raise InvalidParameterError(f"no new secret for {name!r}: type it on a terminal, or "
                                    "pipe it on stdin's first line")
    return secret


@contextmanager
def signed_in(args: argparse.Namespace, ws: "api.Workspace") -> Iterator[Any]:
    """The identity of ``--as NAME`` for one command; its session ends with the command."""
    name = args.actor
    identity = api.authenticate(ws, name, read_secret(args, name))
    try:
        yield identity
    finally:
        try:
            api.sign_out(ws, identity)
        except AdvisorError:  # pragma: no cover - the command's own error matters more
            pass
