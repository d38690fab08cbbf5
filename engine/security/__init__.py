"""Identities, roles, the approvals gate, approvers, sessions, OIDC links and the hash-chained audit log.

``db`` (the control database: one SQLite file in WAL mode, its schema and transactions,
shared with :mod:`engine.plans.store`), ``chain`` (how audit entries are hashed, chained and
appended), ``audit`` (the log: administrative entries, reads, :meth:`~audit.AuditLog.verify`),
``approvers``, ``sessions``, ``oidc`` (links and sign-in through OpenID Connect),
``identity`` (Argon2id secrets, sign-in, the failure delay, resolving a session), ``gate``
(which role may do which guarded action), ``store`` (the :class:`~store.SecurityStore` the
workspace builds over the parts).
"""
