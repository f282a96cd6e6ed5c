"""Alembic environment: runs on the connection econ.library.store hands over (already in a write
transaction and holding the library's lock), never on a URL of its own."""

from alembic import context

from econ.library.store import REVISION_TABLE

connection = context.config.attributes["connection"]
context.configure(connection=connection, version_table=REVISION_TABLE, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
