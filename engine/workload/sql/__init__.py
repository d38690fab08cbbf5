"""SQL -> scan fragments, as small steps composed in :mod:`engine.workload.sql.extract`.

parse (text -> statements), ctes (inlining), walk (scopes of
:mod:`~engine.workload.sql.scopes`, column resolution in
:mod:`~engine.workload.sql.columns`, :mod:`~engine.workload.sql.pushdown` into derived
tables), normalize (NOT pushdown, capped DNF), ranges (comparisons -> per-column ranges);
nodes holds the shared AST helpers, render the SQL literal renderer. Nothing is imported
here, so :mod:`~engine.workload.sql.render` stays cheap to import.
"""
