"""Hardware and model keys on each version (for `econ library list`) and the results cache.

Existing versions get their keys filled from their stored text where it still validates; a text
that no longer validates keeps null keys (it is never changed or dropped).

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("versions") as batch:
        batch.add_column(sa.Column("hardware", sa.String(200), nullable=True))
        batch.add_column(sa.Column("model", sa.String(200), nullable=True))
    op.create_table(
        "results",
        sa.Column("scenario_sha256", sa.String(64), primary_key=True),
        sa.Column("econ_version", sa.String(64), primary_key=True),
        sa.Column("catalog_sha256", sa.String(64), primary_key=True),
        sa.Column("summary_json", sa.Text, nullable=False),
        sa.Column("created_utc", sa.DateTime(timezone=True), nullable=False),
    )
    from econ.library.store import scenario_keys

    connection = op.get_bind()
    versions = sa.table(
        "versions",
        sa.column("id"),
        sa.column("toml_text"),
        sa.column("hardware"),
        sa.column("model"),
    )
    rows = connection.execute(sa.select(versions.c.id, versions.c.toml_text)).all()
    for row in rows:
        keys = scenario_keys(row.toml_text)
        if keys is not None:
            connection.execute(
                versions.update()
                .where(versions.c.id == row.id)
                .values(hardware=keys[0], model=keys[1])
            )


def downgrade() -> None:
    op.drop_table("results")
    with op.batch_alter_table("versions") as batch:
        batch.drop_column("model")
        batch.drop_column("hardware")
