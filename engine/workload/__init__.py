"""Query workloads: SQL log import into scan fragments, storage, and the scenario generator."""
