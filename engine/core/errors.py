"""Error hierarchy.

Every user mistake raises an :class:`AdvisorError` (or a child); the CLI turns it into
one line on stderr and exit code 2. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class AdvisorError(Exception):
    """Root of all errors a user can cause and fix."""


class ConfigError(AdvisorError):
    """A configuration file, environment variable or flag is invalid."""


class InvalidParameterError(ValueError, AdvisorError):
    """A parameter value is out of range or of the wrong kind."""


class TableNotFoundError(AdvisorError):
    """No table of that name exists in the workspace."""


class TableExistsError(AdvisorError):
    """A table of that name already exists."""


class SnapshotNotFoundError(AdvisorError):
    """The requested snapshot id is not part of the table's history."""


class ColumnNotFoundError(AdvisorError):
    """A column named by the user is not in the table's schema."""


class DataFileError(AdvisorError):
    """An input or table data file is missing, empty or corrupt."""


class CommitConflictError(AdvisorError):
    """The table's current snapshot is not the one a change was based on."""


class WorkloadParseError(AdvisorError):
    """A query in a workload log cannot be parsed; carries file, line and column."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None,
                 column: int | None = None) -> None:
        self.file, self.line, self.column = file, line, column
        where = ":".join(str(p) for p in (file, line, column) if p is not None)
        super().__init__(f"{where}: {message}" if where else message)


class PlanError(AdvisorError):
    """A plan cannot be created, approved or run in its current state."""


class PlanNotFoundError(PlanError):
    """No plan with that id."""


class ApprovalError(PlanError):
    """The approver is unknown or the transition is not allowed."""


class StalePlanError(PlanError):
    """The plan's base snapshot is no longer the table's current snapshot."""


class ExecutionError(AdvisorError):
    """A reclustering job failed; nothing was committed."""


class CommitVerificationError(AdvisorError):
    """A rewrite was committed (the format's catalog or log write returned) but a check
    after the commit failed: the new snapshot stands and its files are kept; the message
    says which snapshot and how to roll it back. ``table`` and ``snapshot_id`` name it."""

    def __init__(self, message: str, table: str = "", snapshot_id: str = "") -> None:
        super().__init__(message)
        self.table, self.snapshot_id = table, snapshot_id


class EnvironmentCheckError(AdvisorError):
    """Java, Python or another prerequisite is missing or too old."""


class ControlStoreError(AdvisorError):
    """The control store (``control.db``) is missing, damaged or unwritable."""


class AuthenticationError(ApprovalError):
    """A name and secret did not match, or a session expired."""
