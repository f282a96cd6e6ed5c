"""Who wrote each cached result: results.written_by, set by the server on PostgreSQL.

summary_sha256 is a public formula, so a member who may INSERT into results could plant a
well-formed summary for a key nobody has cached yet, which every reader would then be served. On
PostgreSQL a trigger now sets written_by to the role that inserts (or updates) a row,
current_user, whatever the statement says (a member may not alter the table to drop the trigger),
and econ reads only the rows written by the library's owner or by the reader itself
(econ.library.store.Library.summary). written_by joins the primary key, so that each role caches
its own rows beside the others'. On SQLite, a file without roles, written_by is '' and every row is
read as before: whoever may write the file may change its versions too.

The rows cached before this revision carry no writer, so they are dropped: the results table is a
cache, and every row is recomputed from the stored text when it is next needed. On PostgreSQL the
table is altered, not created anew, so that the grants on it are kept.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

KEY = ["scenario_sha256", "econ_version", "catalog_sha256"]
FUNCTION = "econ_results_written_by"
TRIGGER = "results_written_by"


def upgrade() -> None:
    op.execute(sa.text("DELETE FROM results"))
    if op.get_bind().dialect.name != "postgresql":  # SQLite: no grants to keep, no rows left
        op.drop_table("results")
        _create_results(written_by=True)
        return
    op.add_column(
        "results", sa.Column("written_by", sa.String(200), nullable=False, server_default="")
    )
    op.drop_constraint(_primary_key_name(), "results", type_="primary")
    op.create_primary_key("results_pkey", "results", [*KEY, "written_by"])
    op.execute(
        sa.text(
            f"CREATE FUNCTION {FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN NEW.written_by := current_user; RETURN NEW; END $$"
        )
    )
    op.execute(
        sa.text(
            f"CREATE TRIGGER {TRIGGER} BEFORE INSERT OR UPDATE ON results "
            f"FOR EACH ROW EXECUTE FUNCTION {FUNCTION}()"
        )
    )


def downgrade() -> None:
    op.execute(sa.text("DELETE FROM results"))
    if op.get_bind().dialect.name != "postgresql":
        op.drop_table("results")
        _create_results(written_by=False)
        return
    op.execute(sa.text(f"DROP TRIGGER {TRIGGER} ON results"))
    op.execute(sa.text(f"DROP FUNCTION {FUNCTION}()"))
    op.drop_constraint(_primary_key_name(), "results", type_="primary")
    op.create_primary_key("results_pkey", "results", KEY)
    op.drop_column("results", "written_by")


def _create_results(*, written_by: bool) -> None:
    """The results table as revision 0003 left it, with written_by in its key or without."""
    op.create_table(
        "results",
        *(sa.Column(name, sa.String(64), primary_key=True) for name in KEY),
        sa.Column("summary_json", sa.Text, nullable=False),
        sa.Column("created_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("summary_sha256", sa.String(64), nullable=True),
        *(
            [sa.Column("written_by", sa.String(200), primary_key=True, server_default="")]
            if written_by
            else []
        ),
    )


def _primary_key_name() -> str:
    return sa.inspect(op.get_bind()).get_pk_constraint("results")["name"]
