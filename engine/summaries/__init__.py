"""Per-snapshot summaries of a table (column clustering, pruning), stored in the workspace and refreshed on its commit events."""
