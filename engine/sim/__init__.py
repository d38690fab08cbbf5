"""What-if simulator: the same policies over an in-memory table (see :mod:`engine.sim.runner`)."""
