"""What-if on the user's own table: other policies, workloads and budgets simulated over a sample of it."""
