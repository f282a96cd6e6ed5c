"""Alembic migrations of the library's tables (run on open by econ.library.store)."""
