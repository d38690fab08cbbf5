"""Identities, roles, the approvals gate, approvers, sessions, OIDC links and the hash-chained audit log.

``db`` (the control database: one SQLite file in WAL mode, its schema and transactions,
shared with :mod:`engine.plans.store`), ``chain`` (how audit entries are hashed, chained and
appended), ``audit`` (the log: administrative entries, reads, :meth:`~audit.AuditLog.verify`),
``approvers``, ``sessions``, ``oidc`` (links and sign-in through OpenID Connect),
``identity`` (Argon2id secrets, sign-in, the failure delay, resolving a session), ``gate``
(which role may do which guarded action), ``store`` (the :class:`~store.SecurityStore` the
workspace builds over the parts), ``keys`` (Ed25519 signing keys sealed by the secret),
``certs`` (approvers certified by an admin's signature up to the root admin), ``signing``
(signed proposals and approvals bound to the exact plan), ``policy`` (the admin's stored
security policy, only tightened locally), ``trust_audit`` (what ``audit verify`` checks of
certificates, approver changes, the policy and plan signatures).
"""
