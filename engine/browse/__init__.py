"""Paged read models for the dashboard: partitions, queries, histograms."""
