"""Approvers for tests: real accounts in the control store, signed in with a real secret.

``sign_in(settings, "alice")`` creates ``alice`` (an approver; ``admin=True`` for an admin)
the first time, with :data:`SECRET`, through the same API as ``approvers add``, and returns
a live :class:`~engine.api.security.Identity`. The first account of a workspace is the
bootstrap admin ``root``.
"""

from __future__ import annotations

from pathlib import Path

from engine import api
from engine.core.config import Settings

SECRET = "correct horse battery staple"
ROOT = "root"


def ensure_account(settings: Settings, name: str, admin: bool = False) -> None:
    """Create ``name`` (and the bootstrap admin first) unless it exists."""
    if not api.has_admin(settings):
        api.add_approver(settings, ROOT, SECRET, admin=True)
    if name == ROOT or any(a["name"] == name for a in api.list_approvers(settings)):
        return
    root = api.authenticate(settings, ROOT, SECRET)
    api.add_approver(settings, name, SECRET, admin=admin, actor=root)


def sign_in(settings: Settings, name: str, admin: bool = False) -> api.Identity:
    """A live identity of ``name`` (created on first use)."""
    ensure_account(settings, name, admin=admin)
    return api.authenticate(settings, name, SECRET)


def secret_file(tmp_path: Path, secret: str = SECRET) -> str:
    """A file holding ``secret``, for ``--secret-file`` / LAYOUT_ADVISOR_SECRET_FILE."""
    path = tmp_path / "secret.txt"
    path.write_text(secret + "\n")
    return str(path)
