"""Identities, roles, the approvals gate, approvers, sessions, OIDC links and the hash-chained audit log."""
