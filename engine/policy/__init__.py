"""Reclustering policies behind one interface (see ``engine.policy.base``)."""
