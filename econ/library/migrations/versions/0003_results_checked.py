"""A SHA-256 on each cached result, checked whenever the result is read.

summary_sha256 binds a row's summary_json to its key (scenario hash, engine version, catalog
hash): a row whose summary was changed by hand, or copied to another key, no longer matches and
is recomputed (econ.library.store.summary_sha256). The rows cached before this revision carry no
such hash, so they are dropped: the results table is a cache, and every row is recomputed from
the stored text when it is next needed.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(sa.text("DELETE FROM results"))
    with op.batch_alter_table("results") as batch:
        batch.add_column(sa.Column("summary_sha256", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.drop_column("summary_sha256")
