"""Scenarios, their versions and tags (the first library format).

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "scenarios",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("created_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deleted_utc", sa.DateTime(timezone=True), nullable=True),
        sa.Column("deleted_by", sa.String(200), nullable=True),
    )
    op.create_table(
        "versions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("scenario_id", sa.Integer, sa.ForeignKey("scenarios.id"), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("toml_text", sa.Text, nullable=False),
        sa.Column("text_sha256", sa.String(64), nullable=False),
        sa.Column("scenario_sha256", sa.String(64), nullable=False),
        sa.Column("schema_version", sa.Integer, nullable=False),
        sa.Column("author", sa.String(200), nullable=False),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("created_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("parent_version", sa.Integer, nullable=True),
        sa.UniqueConstraint("scenario_id", "version", name="uq_versions_scenario_version"),
    )
    op.create_table(
        "tags",
        sa.Column("version_id", sa.Integer, sa.ForeignKey("versions.id"), primary_key=True),
        sa.Column("tag", sa.String(100), primary_key=True),
    )


def downgrade() -> None:
    op.drop_table("tags")
    op.drop_table("versions")
    op.drop_table("scenarios")
