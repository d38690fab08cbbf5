"""Table formats behind one interface (:class:`engine.table.formats.base.TableFormat`)."""
