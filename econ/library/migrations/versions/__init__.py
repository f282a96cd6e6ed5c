"""One file per revision; Alembic reads them by path (this file only makes setuptools ship them)."""
