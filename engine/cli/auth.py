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
import sys
from contextlib import contextmanager
from pathlib import Path
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


def _read_secret_file(path: str, origin: str) -> str:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InvalidParameterError(f"{origin} {path}: cannot read it "
                                    f"({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidParameterError(f"{origin} {path}: not UTF-8 text") from None
    secret = text.splitlines()[0] if text.splitlines() else ""
    if not secret:
        raise InvalidParameterError(f"{origin} {path}: the first line is empty")
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
    line = sys.stdin.readline() if sys.stdin is not None else ""
    secret = line.rstrip("\r\n")
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
