"""Real replay: a query log run against a live table before and after a plan, measured with DuckDB and Spark."""
