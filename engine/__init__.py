"""Layout Advisor engine: tables, metrics, workload, policies, executor, simulator."""

__version__ = "0.1.0"
