"""Clustering metrics over zonemaps: overlap width and depth (sweep line), depth profile,
Snowflake-style histograms, and the patent's EP-file metrics. Pure numpy, no Spark."""
