"""Tables of the scenario library (SQLAlchemy Core), as the newest migration leaves them.

The Alembic migrations in econ/library/migrations create and change these tables; this module is
what the queries use. A change here needs a new migration (and a test that upgrades an old file).

- scenarios: one row per scenario name; `deleted_utc` set by a soft delete (nothing is removed).
- versions: every saved version, never updated: the TOML text exactly as saved, its SHA-256
  (checked whenever the text is read: econ.library.store.Library.get), the validated scenario's
  canonical hash (econ.provenance), the file's schema_version, author, message, time, the
  version it was saved over (parent), and the hardware and model keys for `list`.
- tags: labels on a version (e.g. board-2026q3).
- results: summaries cached by scenario hash, engine version (column econ_version: econ's version
  and a hash of its source, econ.library.store.engine_version), catalog version and the role that
  wrote them (written_by: on PostgreSQL set by the server to current_user, whatever the INSERT
  says, migration 0004; '' on SQLite), each with a SHA-256 binding its summary to that key
  (summary_sha256, econ.library.store.summary_sha256), checked when it is read; a reader on
  PostgreSQL reads only the rows of the library's owner and its own; any row can be dropped and
  recomputed from the stored text.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

NAME_LENGTH = 200
TAG_LENGTH = 100
KEY_LENGTH = 200

scenarios = sa.Table(
    "scenarios",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(NAME_LENGTH), nullable=False, unique=True),
    sa.Column("created_utc", sa.DateTime(timezone=True), nullable=False),
    sa.Column("deleted_utc", sa.DateTime(timezone=True), nullable=True),
    sa.Column("deleted_by", sa.String(NAME_LENGTH), nullable=True),
)

versions = sa.Table(
    "versions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("scenario_id", sa.Integer, sa.ForeignKey("scenarios.id"), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("toml_text", sa.Text, nullable=False),
    sa.Column("text_sha256", sa.String(64), nullable=False),
    sa.Column("scenario_sha256", sa.String(64), nullable=False),
    sa.Column("schema_version", sa.Integer, nullable=False),
    sa.Column("author", sa.String(NAME_LENGTH), nullable=False),
    sa.Column("message", sa.Text, nullable=False),
    sa.Column("created_utc", sa.DateTime(timezone=True), nullable=False),
    sa.Column("parent_version", sa.Integer, nullable=True),
    sa.Column("hardware", sa.String(KEY_LENGTH), nullable=True),
    sa.Column("model", sa.String(KEY_LENGTH), nullable=True),
    sa.UniqueConstraint("scenario_id", "version", name="uq_versions_scenario_version"),
)

tags = sa.Table(
    "tags",
    metadata,
    sa.Column("version_id", sa.Integer, sa.ForeignKey("versions.id"), primary_key=True),
    sa.Column("tag", sa.String(TAG_LENGTH), primary_key=True),
)

results = sa.Table(
    "results",
    metadata,
    sa.Column("scenario_sha256", sa.String(64), primary_key=True),
    sa.Column("econ_version", sa.String(64), primary_key=True),
    sa.Column("catalog_sha256", sa.String(64), primary_key=True),
    sa.Column("summary_json", sa.Text, nullable=False),
    sa.Column("created_utc", sa.DateTime(timezone=True), nullable=False),
    # null in no row econ writes: a row without it (or with another) is recomputed on reading
    sa.Column("summary_sha256", sa.String(64), nullable=True),
    sa.Column("written_by", sa.String(NAME_LENGTH), primary_key=True, server_default=""),
)
