"""The library's store: opening a SQLite or PostgreSQL library, saving versions, reading them back.

Versions are never updated or removed. A save runs in one write transaction that first locks the
scenario's row (SQLite: BEGIN IMMEDIATE, which takes the database's write lock; PostgreSQL: SELECT
... FOR UPDATE), then numbers the new version max + 1, so two people saving at once both get a
version, numbered without gaps or duplicates; the unique (scenario, version) constraint backs
this up and a save that still collides is retried. An import takes the same lock on each of its
names (in name order) before it compares its files with the stored texts, so a save of the same
name under way is waited for and compared with. On PostgreSQL a lock is waited for at most
PG_LOCK_TIMEOUT_S (lock_timeout), then the save fails naming the cause.

A new name is stored in NFC and must be visible and unlike every stored name (`name_problem`,
`skeleton`, `look_keys`); names stored before these checks keep working.

A library that does not exist yet (a missing or empty SQLite file, a database without econ's
tables) reads as empty and is created by its first write, inside that write's transaction, so a
write that fails creates nothing. Opening a library to write it (create=True) brings its tables
to the newest Alembic revision (shipped in econ/library/migrations) inside a write transaction
(PostgreSQL: under an advisory lock), so two processes opening an old library at once migrate it
once; a library opened only to be read (create=False) is never written to: an older one is
refused, naming `econ library upgrade`. Every database failure becomes a LibraryError naming the
library (password hidden) and what to do; nothing is written then.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import functools
import getpass
import hashlib
import json
import math
import os
import re
import stat
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from econ import __version__
from econ.library import (
    HEADER,
    PREFIX,
    LibraryError,
    Ref,
    command_line,
    default_path,
    hide_credentials,
    resolve_url,
    split_header,
)
from econ.library.tables import (
    NAME_LENGTH,
    TAG_LENGTH,
    metadata,
    results,
    scenarios,
    tags,
    versions,
)
from econ.scenario import (
    SCHEMA_VERSION,
    ScenarioError,
    apply_overrides,
    read_toml,
    validate_dict,
)
from econ.scenario.errors import QUOTED_LIMIT, shortened
from econ.scenario.io import (
    MAX_SCENARIO_BYTES,
    check_complete,
    parse_toml,
    read_bounded,
    refuse_set_elsewhere,
)
from econ.scenario.migrations import file_version, migrate
from econ.scenario.section import check_name
from econ.sources import source_files, sources_sha256
from econ.text import clipped, listed

REVISION_TABLE = "econ_library_revision"
"""Alembic's version table, named for econ so it cannot clash with another tool's."""

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
SQLITE_TIMEOUT_S = 30.0
"""How long a SQLite write waits for another writer's lock before giving up [s]."""
MAX_SQLITE_TIMEOUT_S = 86_400.0
"""The longest wait `?timeout=` may ask for [s] (a day: longer is a library stuck, not busy)."""
PG_CONNECT_TIMEOUT_S = 10
"""How long connecting to a PostgreSQL server may take before giving up [s]."""
PG_LOCK_TIMEOUT_S = 30.0
"""How long a PostgreSQL save waits for another save's lock on the same scenario [s]."""
WRITE_ATTEMPTS = 5
FILE_NAME_BYTES = 255
"""The longest file name export writes [bytes of UTF-8]: what ext4, XFS and btrfs hold (APFS
and NTFS count 255 characters or UTF-16 units, never more than the UTF-8 bytes)."""
MAX_VERSION = 2**31 - 1
"""The largest version number the versions table holds (a 32-bit INTEGER on PostgreSQL)."""
_PG_LOCK_KEY = 0x65636F6E  # "econ": the advisory lock held while a library is migrated
_PG_NAMES_LOCK = {"k": _PG_LOCK_KEY, "n": 1}
"""The advisory lock (two int keys: apart from the one-key migration lock) a PostgreSQL write
holds while it checks and adds new names (`Library._looks`)."""
_WRITE = "econ_library_write"
_TAG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/+-]*$")
_URL_HELP = "expected sqlite:///PATH.db or postgresql+psycopg://USER@HOST/DATABASE"
_INFO_COLUMNS = [c for c in versions.c if c.name != "toml_text"]
"""The columns of a version's details: `list` and `history` never read the texts."""


_COMMIT_UNKNOWN = (
    "the connection was lost while the server was committing the write, so it may have been "
    "made: `econ library history NAME` (or `econ library list`) shows whether it was, before "
    "it is made again"
)
"""Said instead of "nothing was changed" of a write whose COMMIT lost its connection."""


class _DatabaseFailure(LibraryError):
    """A failure of the database itself (a full disk, a lock, a permission), not of the input."""


@dataclass(frozen=True)
class VersionInfo:
    """One saved version, without its text."""

    name: str
    version: int
    created_utc: str
    author: str
    message: str
    tags: list[str]
    text_sha256: str
    scenario_sha256: str
    schema_version: int
    parent_version: int | None
    hardware: str | None
    model: str | None
    deleted: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SavedVersion(VersionInfo):
    """A version just saved (by save, restore, migrate): its details, and whether the save
    brought its scenario back from a delete (`undeleted`), which the saver may not know of."""

    undeleted: bool = False


@dataclass(frozen=True)
class StoredVersion:
    info: VersionInfo
    text: str

    @property
    def label(self) -> str:
        return f"library:{self.info.name}@{self.info.version}"


@dataclass
class ImportReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    """Files among `updated` whose save brought a deleted scenario back (as a save says)."""
    notes: list[str] = field(default_factory=list)
    """What the import could not check, for the user (econ library import prints them on
    stderr): a first line naming another scenario, an update over another author's version."""


@dataclass(frozen=True)
class _Prepared:
    """A scenario text checked and hashed, ready to be stored."""

    name: str
    text: str
    text_sha256: str
    scenario_sha256: str
    schema_version: int
    hardware: str
    model: str | None
    origin: str = "<text>"
    name_problem: ScenarioError | None = None
    """Why the name may not be a new name (`name_problem`); a name already stored is kept."""


@dataclass(frozen=True)
class _ResultsAccess:
    """What a user may do with a library's results cache (`Library.summary`)."""

    me: str
    """results.written_by of this user's rows: the PostgreSQL role (current_user); '' on SQLite."""
    trusted: tuple[str, ...] | None
    """The writers whose rows are read: this role and the library's owner (the owner of the
    results table) on PostgreSQL; None on SQLite: every row."""
    insert: bool
    update: bool


_PG_RESULTS_ACCESS = sa.text(
    "SELECT current_user AS me, pg_get_userbyid(c.relowner) AS owner, "
    "has_table_privilege(c.oid, 'INSERT') AS can_insert, "
    "has_table_privilege(c.oid, 'UPDATE') AS can_update "
    "FROM pg_class c WHERE c.oid = 'results'::regclass"
)
"""Who this role is, who owns the results table, and whether this role may INSERT into it and
UPDATE it (the table as econ's queries name it, through the search path)."""


def _result_key(scenario) -> dict[str, str] | None:
    """The results key of a scenario now: its hash, the engine version, the catalogs' hash
    (None when the engine version cannot be told: `engine_version`)."""
    from econ.provenance import catalog_versions, scenario_sha256

    engine = engine_version()
    if engine is None:
        return None
    catalogs = json.dumps(catalog_versions(), sort_keys=True)
    return {
        "scenario_sha256": scenario_sha256(scenario),
        "econ_version": engine,
        "catalog_sha256": hashlib.sha256(catalogs.encode()).hexdigest(),
    }


def scenario_keys(text: str) -> tuple[str, str | None] | None:
    """(hardware, model) of a scenario text, or None when the text is no scenario today: it does
    not validate (migrated first, as a stored text is when used), or lacks a required section
    (a text of only `name` and `schema_version`, saved before sections were required, would
    validate on defaults that describe no fleet: generic-gpu)."""
    try:
        data = migrate(parse_toml(text))
        scenario = validate_dict(data)
        check_complete(data, None)
    except ValueError:
        return None
    return scenario.fleet.hardware, _model_key(scenario)


def _model_key(scenario) -> str | None:
    """The LLM a scenario serves: named by its simulated, history or measured-catalog throughput
    (a catalog_query's model, or the model of the MLPerf row a catalog_id names), else the longest
    catalog model key that starts the scenario's name or follows a '-' in it."""
    throughput = scenario.throughput
    for section in (throughput.simulated, throughput.history):
        if section is not None:
            return section.model
    measured = throughput.measured
    if measured is not None and measured.catalog_query.get("model"):
        return str(measured.catalog_query["model"])
    if measured is not None and measured.catalog_id:
        family = _catalog_model(measured.catalog_id)
        if family:
            return family
    from econ.llms import load_llm_catalog

    name = scenario.name.lower()
    found = [
        key for key in load_llm_catalog() if re.search(rf"(^|-){re.escape(key.lower())}(-|$)", name)
    ]
    return max(found, key=len) if found else None


def _catalog_model(catalog_id: str) -> str | None:
    """The model (benchmark family: deepseek-r1, llama2-70b, ...) of the MLPerf catalog row an
    id names; None for an id the catalog lacks (refused when the scenario is projected)."""
    from econ.benchmarks import get_row
    from econ.errors import InputError

    try:
        return str(get_row(catalog_id)["benchmark_family"] or "") or None
    except InputError:
        return None


def file_paths(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(field path, value) of every file a scenario dict names (measured throughput curves)."""
    sections = [("throughput", data.get("throughput"))] + [
        (f"vintages[{i}].throughput", v.get("throughput"))
        for i, v in enumerate(data.get("vintages", []) or [])
        if isinstance(v, dict)
    ]
    found = []
    for where, section in sections:
        measured = section.get("measured") if isinstance(section, dict) else None
        curve = measured.get("curve") if isinstance(measured, dict) else None
        if isinstance(curve, str) and curve:
            found.append((f"{where}.measured.curve", curve))
    return found


def _refuse_files(data: Mapping[str, Any], label: str) -> None:
    for path, value in file_paths(data):
        raise LibraryError(
            f"{label}: {path} = {value!r}: a library scenario has no folder on disk, so it cannot "
            "name a file; expected throughput.measured.catalog_id or catalog_query (MLPerf rows "
            "shipped with econ) or a fixed throughput.tokens_per_s_per_gpu"
        )


# --- names --------------------------------------------------------------------------------------
# A name is how a team tells scenarios apart, in a terminal, a table, the app and a file name: two
# names must not look alike, and no character of one may be invisible or move the text around.
# The checks follow Unicode's UTS #39 ("Unicode Security Mechanisms"), kept small and readable.

_FORMS = ("NFC", "NFD")
"""How a name is looked up besides as typed: NFC (how names are stored), NFD (as stored before)."""

_INVISIBLE = {
    "Cf": "an invisible format character (zero-width, bidirectional control, tag)",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}

_DEFAULT_IGNORABLE = (
    # Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt), as ranges: characters a
    # font draws as nothing. Most are format characters (Cf) too; the others are joiners and
    # variation selectors (U+034F, U+FE00-FE0F, U+E0100-E01EF), fillers drawn as letters of no
    # shape (U+115F, U+1160, U+3164, U+FFA0), the Khmer inherent vowels and unassigned ones.
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
_BLANK = "\u2800"
"""BRAILLE PATTERN BLANK: a symbol, not ignorable to Unicode, yet drawn as nothing."""

_MIXES = (
    # the scripts one word may mix (UTS #39 section 5.2, "Highly Restrictive"): Japanese, Chinese
    # and Korean words hold Latin letters as a matter of course (GPU集群, Llamaモデル, H200서버)
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
_SCRIPT_OF_NAME = {"CJK": "HAN", "IDEOGRAPHIC": "HAN", "KATAKANA-HIRAGANA": "KATAKANA"}
"""The script of letters whose Unicode name does not start with it (U+4E00 CJK UNIFIED
IDEOGRAPH-4E00 is Han; U+30FC KATAKANA-HIRAGANA PROLONGED SOUND MARK is Japanese kana)."""
_COMMON_LETTERS = frozenset("\u00b5")
"""Letters of no script (Unicode's Script=Common): MICRO SIGN, the unit prefix of 200µs."""

# What each character passes for: the common cases of Unicode's confusables.txt (UTS #39 section
# 4, "Confusable Detection"), for the characters scenario names are written in. NFKC has already
# made full-width, mathematical and superscript characters, ligatures and U+2024 ONE DOT LEADER
# plain ones; this holds what NFKC keeps. Letters of other scripts map to the Latin letter they
# are drawn like; then Latin letters, digits and punctuation drawn alike map to one of them.
_SCRIPT_LOOKALIKES = dict(
    zip(
        # Cyrillic, Greek and Armenian
        "АВСЕНІЈКМОРЅТХУҮԚԜӀасеһіјорѕхуүԁԛԝӏΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹϳονϲυχρօսզհո",
        "ABCEHIJKMOPSTXYYQWIacehijopsxyydqwlABEZHIKMNOPTYXCjovcuxpouqhn",
        strict=True,
    )
)
_SHAPE_LOOKALIKES = {
    **dict.fromkeys("Il1|", "l"),  # capital I, small L, one and the vertical bar
    **dict.fromkeys("O0", "O"),  # capital O and zero
    # the dash family: hyphen, non-breaking hyphen, figure dash, en and em dashes, horizontal
    # bar, hyphen bullet, modifier minus, minus sign, small em dash, small and full-width minus
    **dict.fromkeys(
        "\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u02d7\u2212\ufe58\ufe63\uff0d", "-"
    ),
    # dots on the line: one dot leader, full-width full stop (U+3002 IDEOGRAPHIC FULL STOP, a
    # small circle, is told apart)
    **dict.fromkeys("\u2024\uff0e", "."),
}
_SCRIPTS_AS_LATIN = str.maketrans(_SCRIPT_LOOKALIKES)
_LOOKALIKES = str.maketrans(
    {
        **{c: _SHAPE_LOOKALIKES.get(latin, latin) for c, latin in _SCRIPT_LOOKALIKES.items()},
        **_SHAPE_LOOKALIKES,
    }
)


def _invisible(char: str) -> str | None:
    """What makes `char` invisible in a name, or None when it can be seen."""
    kind = _INVISIBLE.get(unicodedata.category(char))
    if kind:
        return kind
    code = ord(char)
    if any(low <= code <= high for low, high in _DEFAULT_IGNORABLE):
        return (
            "a default-ignorable character, drawn as nothing (a joiner, variation selector or "
            "filler)"
        )
    if char == _BLANK:
        return "a blank, drawn as nothing"
    return None


def name_problem(name: str) -> str | None:
    """Why `name` (in NFC) may not be a new scenario name, or None: an invisible character (a
    format character such as a zero width space or a bidirectional control, any other Unicode
    default-ignorable character such as a variation selector or a Hangul filler, the braille
    blank, a line or paragraph separator), a space of any kind at its start or end, or letters of
    two scripts in one word (Cyrillic 'а' in a Latin word; Latin with Han and kana, bopomofo or
    hangul is one word of Japanese, Chinese or Korean). Names stored before these checks keep
    loading and saving."""
    for position, char in enumerate(name, start=1):
        kind = _invisible(char)
        if kind:
            return (
                f"character {position} is {_code_point(char)}, {kind}; expected a name of visible "
                "characters, so that what is shown is what is stored"
            )
    if name != name.strip():
        position = 1 if name[0].isspace() else len(name.rstrip()) + 1
        where = "start" if position == 1 else "end"
        return (
            f"character {position} is {_code_point(name[position - 1])}, a space at the name's "
            f"{where}; expected a name without spaces at its start or end (they cannot be seen)"
        )
    # a word: a run of letters, marks and digits, so that a letter between digits ('h2О0' with a
    # Cyrillic О) is in a word with the letters before it
    for word in re.finditer(r"[^\W_]+", name):
        seen: dict[str, int] = {}  # each script of the word, at the offset of its first letter
        for offset, char in enumerate(word[0]):
            script = _script(char)
            if script is None or script in seen:
                continue
            clash = next((s for s in seen if not any({s, script} <= m for m in _MIXES)), None)
            if clash is not None:
                first = word.start() + seen[clash]
                return (
                    f"word {word[0]!r} mixes {clash.title()} and {script.title()} letters "
                    f"(character {first + 1} is {_code_point(name[first])}, character "
                    f"{word.start() + offset + 1} is {_code_point(char)}); expected the letters "
                    "of each word in one script (or Latin with Han and kana, bopomofo or "
                    "hangul), so that a name cannot pass for another"
                )
            seen[script] = offset
    return None


def _visible(name: str) -> str:
    """A name as it is seen: NFKC (full-width and mathematical letters as plain ones), invisible
    characters dropped, each run of spaces as one ' ', none at either end."""
    kept = []
    for char in unicodedata.normalize("NFKC", name):
        if _invisible(char) and not unicodedata.category(char).startswith("Z"):
            continue
        kept.append(" " if unicodedata.category(char).startswith("Z") else char)
    return re.sub(" +", " ", "".join(kept)).strip()


def skeleton(name: str) -> str:
    """What a name looks like: `_visible`, then every character as the one it passes for
    (`_LOOKALIKES`: Cyrillic 'А' as 'A', 'I' and '1' as 'l', '0' as 'O', an en dash as '-').
    Two names with one skeleton look alike."""
    return _visible(name).translate(_LOOKALIKES)


def look_keys(name: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """The keys two names that may not both be stored share: ("looks like", skeleton) and
    ("differs only in case from", the name `_visible`, other scripts' look-alikes as Latin,
    case-folded). Names differing only in case are one name to a team (and export's files of
    them clash on a disk that ignores case); 'L' beside '1' still differs."""
    return (
        ("looks like", skeleton(name)),
        (
            "differs only in letter case from",
            _visible(name).translate(_SCRIPTS_AS_LATIN).casefold(),
        ),
    )


def _script(char: str) -> str | None:
    """The script of a letter, from its Unicode name (None for a mark, digit, modifier or a
    letter of no script)."""
    if not unicodedata.category(char).startswith("L") or char in _COMMON_LETTERS:
        return None
    words = unicodedata.name(unicodedata.normalize("NFKC", char)[0], "").split()
    if words[:1] in (["FULLWIDTH"], ["HALFWIDTH"]):
        words = words[1:]
    if not words or words[0] == "MODIFIER":
        return None
    return _SCRIPT_OF_NAME.get(words[0], words[0])


def _code_point(char: str) -> str:
    """U+0410 CYRILLIC CAPITAL LETTER A"""
    return f"U+{ord(char):04X} {unicodedata.name(char, '(unnamed)')}"


def _first_difference(name: str, other: str) -> str:
    """'(character 1 is U+0410 ... where it has U+0041 ...)' for names of one length."""
    if len(name) != len(other):
        return ""
    for position, (a, b) in enumerate(zip(name, other, strict=True), start=1):
        if a != b:
            return f" (character {position} is {_code_point(a)} where it has {_code_point(b)})"
    return ""


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _iso(value: dt.datetime) -> str:
    if value.tzinfo is None:  # SQLite keeps no zone: every time stored here is UTC
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def given_author(author: str | None = None) -> str | None:
    """The author the user named, checked (`_check_author`): `author` (--author), else
    ECON_AUTHOR; None when neither is given (then `Library` records the PostgreSQL role, or on
    SQLite the login name)."""
    given = author or os.environ.get("ECON_AUTHOR") or None
    return None if given is None else _check_author(given)


def login_name() -> str:
    """The login name of the user running econ (the author on SQLite when none is given)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


def _folder_path(folder: str | os.PathLike, expected: str) -> Path:
    """`folder` as a Path, or LibraryError for an empty one: pathlib reads "" as the current
    folder, so an unset variable in a script (`econ library import "$DIR"`) would import or
    export the working folder's files."""
    if not os.fspath(folder):
        raise LibraryError(f"'': an empty path; expected {expected} (write . for this one)")
    return Path(folder)


class Library:
    """A scenario library at a URL (see econ.library.resolve_url).

    `timeout_s`: how long a save waits for another writer's lock before failing [s] (default:
    SQLite, the URL's ?timeout= else 30; PostgreSQL, 30, as its lock_timeout).
    `create`: True (the default) for a library that may be written (save, import, restore,
    delete, migrate): opening it upgrades an older library's tables, and a library that does not
    exist yet (a missing or empty SQLite file, a database without econ's tables) is created by
    its first write, in that write's transaction, so a save that fails creates nothing. False for
    a library that is only read (list, history, show, diff, export, library:NAME): nothing is
    ever written to create or upgrade it; one that does not exist yet reads as empty, an existing
    SQLite file is opened without the right to create it (SQLite's mode=rw), and an older
    library is refused, naming the command that upgrades it.
    """

    def __init__(
        self, url: str | None = None, *, timeout_s: float | None = None, create: bool = True
    ):
        text, source = resolve_url(url)
        target = _make_engine(text, source, timeout_s, create)
        self._named_url = text if source == "--library" else None
        """The URL a suggested command must name (None: ECON_LIBRARY or the default finds it)."""
        self.display = target.display
        self.missing_file = target.missing_file
        """The SQLite file, missing or empty, that this library will be (None: it exists)."""
        self.exists = True
        """False until the library exists: reads find nothing, and the first write creates it."""
        self.opened_revision: str | None = None
        """The revision of the library's tables when it was opened (None: no library yet)."""
        self._create = create
        self._connect = target.connect
        self._store: sa.Engine | None = None  # the library's own engine while it does not exist
        self._new_file: Path | None = None  # a SQLite file this Library's first write creates
        self._role = target.role  # (None: libpq's default, the login name)
        self._file = target.file
        self._lock_timeout_s = PG_LOCK_TIMEOUT_S if timeout_s is None else timeout_s
        self._access: _ResultsAccess | None = None  # asked on the first summary
        if self.missing_file is not None:
            self._read_as_empty()
            return
        self._engine = target.connect()
        try:
            self._open()
        except BaseException:
            self._engine.dispose()
            raise

    def close(self) -> None:
        self._engine.dispose()
        if self._store is not None:
            self._store.dispose()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def upgrade(self) -> tuple[str | None, str]:
        """Create the library if it does not exist yet (as its first save would: a SQLite file,
        an empty database's tables); (its revision when opened, None for a new library; the
        revision it is at now). Opening it (create=True) has already upgraded an older library."""
        if not self.exists:
            self._transaction(lambda conn: None, "creating the library")
        return self.opened_revision, _head_revision()

    def recorded_author(self, author: str | None = None) -> str:
        """Who a save, restore or delete given `author` (None: ECON_AUTHOR, else none) records
        as its author, as `_author` records it: on PostgreSQL the server is asked which role
        this library connects as (the URL's user, else libpq's PGUSER or the login name)."""
        given = given_author(author)
        # (a database that holds no library yet is read through an empty stand-in: the role is
        # the server's, asked through the library's own engine)
        engine = self._engine if self._file is not None else self._connect()
        with self._guard("reading"), engine.connect() as conn:
            return self._author(conn, given)

    # --- writing ------------------------------------------------------------------------------

    def save_file(
        self,
        path: str | os.PathLike,
        *,
        message: str = "",
        tags: Sequence[str] = (),
        author: str | None = None,
        base: int | None = None,
        new: bool = False,
    ) -> SavedVersion:
        """Save a scenario file's text exactly as a new version of the scenario's `name`."""
        return self.save_text(
            read_scenario_text(path),
            origin=str(path),
            message=message,
            tags=tags,
            author=author,
            base=base,
            new=new,
        )

    def save_text(
        self,
        text: str,
        *,
        origin: str = "<text>",
        message: str = "",
        tags: Sequence[str] = (),
        author: str | None = None,
        base: int | None = None,
        new: bool = False,
    ) -> SavedVersion:
        """Save a scenario's TOML text as a new version of its `name` (validated first).

        `base`: the version the text was edited from; the save is refused unless it is still the
        newest, so that an edit of a stale copy never silently replaces a colleague's change.
        `new`: the text was written as a new scenario; the save is refused if the library holds
        the name (not deleted), even when a colleague saved it a moment ago. Both are checked
        under the name's lock, in the transaction that saves."""
        _check_utf8(text, f"{origin}: text")
        _check_base(base, new)
        prepared = _prepare(text, origin)
        tag_list = _check_tags(tags)
        given = given_author(author)
        message = _check_message(message)

        def run(conn):
            who = self._author(conn, given)
            return self._insert(
                conn, prepared, message, tag_list, who, base=base, new=new, origin=origin
            )

        return self._transaction(run, "saving")

    def restore(self, ref: Ref, *, message: str = "", author: str | None = None) -> SavedVersion:
        """Save version `ref.version`'s text again as the newest version (and undelete)."""
        stored = self.get(ref)
        prepared = _prepare(stored.text, stored.label, restoring=True)
        note = _check_message(message) or f"restored from version {stored.info.version}"
        given = given_author(author)
        return self._transaction(
            lambda conn: self._insert(conn, prepared, note, [], self._author(conn, given)),
            "restoring",
        )

    def migrate(self, ref: Ref, *, author: str | None = None) -> SavedVersion:
        """Save a stored version brought to today's schema as a new version (comments are lost:
        the text is written anew from the migrated data)."""
        import tomli_w

        stored = self.get(ref)
        data = parse_toml(stored.text, stored.label)
        old = file_version(data, stored.label)
        if old == SCHEMA_VERSION:
            raise LibraryError(
                f"{stored.label} is already at schema_version {old}, today's; nothing to migrate"
            )
        migrated = migrate(data, stored.label)
        try:
            validate_dict(migrated, file=stored.label)
        except ScenarioError as exc:
            raise LibraryError(
                f"{exc}\n  No migration makes {stored.label} valid; nothing was changed. Fix it by "
                f"hand: {self.suggest('show', str(ref), then=' > FILE.toml')}, edit FILE.toml, "
                f"then {self.suggest('save', 'FILE.toml', note=False)}."
            ) from None
        note = f"migrated version {stored.info.version} from schema_version {old}"
        return self.save_text(
            tomli_w.dumps(migrated), origin=stored.label, message=note, author=author
        )

    def tag(self, ref: Ref, labels: Sequence[str] | str) -> VersionInfo:
        """Label a saved version (the one sent to the board) without saving it again: its text,
        number and place in the history are unchanged, and a label it has is kept once. Labels
        are only ever added, as every row of the tags table is (docs/library.md)."""
        wanted = _check_tags(labels)
        if not wanted:
            raise LibraryError("tag: expected at least one label, e.g. board-2026q3")
        stored = self.get(ref)  # the version exists, and its text is as saved

        def run(conn):
            row = self._scenario(conn, stored.info.name)
            version = conn.execute(
                sa.select(*_INFO_COLUMNS).where(
                    (versions.c.scenario_id == row.id) & (versions.c.version == stored.info.version)
                )
            ).one()
            have = set(conn.scalars(sa.select(tags.c.tag).where(tags.c.version_id == version.id)))
            added = [{"version_id": version.id, "tag": t} for t in wanted if t not in have]
            if added:
                conn.execute(tags.insert(), added)
            return self._infos(conn, [(row, version)])[0]

        return self._transaction(run, "tagging")

    def delete(self, name: str, *, author: str | None = None) -> None:
        """Soft delete: the scenario leaves `list` and `library:` names; every version is kept."""
        given = given_author(author)
        if not self.exists:  # no such name, and nothing to create
            with self._guard("reading"), self._engine.connect() as conn:
                self._scenario(conn, name)

        def run(conn):
            row = self._scenario(conn, name, lock=True)
            if row.deleted_utc is not None:
                raise LibraryError(f"{name!r} is already deleted (library {self.display})")
            conn.execute(
                scenarios.update()
                .where(scenarios.c.id == row.id)
                .values(deleted_utc=_now(), deleted_by=self._author(conn, given))
            )

        self._transaction(run, "deleting")

    # --- reading ------------------------------------------------------------------------------

    def get(self, ref: Ref) -> StoredVersion:
        """A stored version's text and details (deleted scenarios stay readable)."""
        with self._guard("reading"), self._engine.connect() as conn:
            row = self._scenario(conn, ref.name)
            query = sa.select(versions).where(versions.c.scenario_id == row.id)
            if ref.version is None:
                query = query.order_by(versions.c.version.desc()).limit(1)
            else:
                query = query.where(versions.c.version == ref.version)
            # a number beyond the column's range is no stored version (and no database error)
            too_large = ref.version is not None and ref.version > MAX_VERSION
            version = None if too_large else conn.execute(query).first()
            if version is None:
                latest = conn.scalar(
                    sa.select(sa.func.max(versions.c.version)).where(
                        versions.c.scenario_id == row.id
                    )
                )
                raise LibraryError(
                    f"{ref.name!r} has no version {ref.version} (library {self.display}); "
                    f"expected 1 to {latest} (see {self.suggest('history', ref.name)})"
                )
            self._check_text(row.name, version)
            info = self._infos(conn, [(row, version)])[0]
            return StoredVersion(info, version.toml_text)

    def _check_text(self, name: str, version) -> None:
        """LibraryError unless a stored version's text hashes to its text_sha256: every read of
        a text (show, library:NAME, diff, restore, migrate, export) goes through `get`, so a
        text changed in the database by hand is refused, never used. (Someone who rewrites the
        hash too is not caught: the grants of docs/library.md are what keep versions as saved.)"""
        text = version.toml_text
        actual = hashlib.sha256(str(text).encode("utf-8", "surrogatepass")).hexdigest()
        if actual == version.text_sha256:
            return
        raise LibraryError(
            f"library {self.display}: {shortened(name)} version {version.version}: the stored "
            f"text does not match its SHA-256 (text_sha256 {str(version.text_sha256)[:16]}..., "
            f"the text hashes to {actual[:16]}...): the library was changed outside econ; "
            "nothing was read from that version. Expected every version as it was saved: "
            "restore the library from a backup, and have its owner check who may change its "
            f"tables ({_INTEGRITY_DOCS})"
        )

    def history(self, name: str) -> list[VersionInfo]:
        """Every version of a scenario, oldest first (their details, not their texts)."""
        with self._guard("reading"), self._engine.connect() as conn:
            row = self._scenario(conn, name)
            rows = conn.execute(
                sa.select(*_INFO_COLUMNS)
                .where(versions.c.scenario_id == row.id)
                .order_by(versions.c.version)
            ).all()
            return self._infos(conn, [(row, v) for v in rows])

    def list(
        self,
        *,
        tag: str | None = None,
        hardware: str | None = None,
        model: str | None = None,
        deleted: bool = False,
    ) -> list[VersionInfo]:
        """Per scenario, its newest version matching every filter given (by name); the database
        picks it, and only the versions' details are read, never their texts."""
        newest = sa.select(
            versions.c.scenario_id, sa.func.max(versions.c.version).label("version")
        ).group_by(versions.c.scenario_id)
        if hardware:
            newest = newest.where(versions.c.hardware == hardware)
        if model:
            newest = newest.where(versions.c.model == model)
        if tag:
            newest = newest.where(
                sa.exists().where((tags.c.version_id == versions.c.id) & (tags.c.tag == tag))
            )
        chosen = newest.subquery()
        query = (
            sa.select(*_INFO_COLUMNS, scenarios.c.name, scenarios.c.deleted_utc)
            .join(scenarios, versions.c.scenario_id == scenarios.c.id)
            .join(
                chosen,
                (versions.c.scenario_id == chosen.c.scenario_id)
                & (versions.c.version == chosen.c.version),
            )
            .order_by(scenarios.c.name)
        )
        if not deleted:
            query = query.where(scenarios.c.deleted_utc.is_(None))
        with self._guard("reading"), self._engine.connect() as conn:
            return self._infos(conn, [(row, row) for row in conn.execute(query).all()])

    def load(self, ref: Ref, overrides: Mapping[str, Any] | Iterable[str] | None = None):
        """The validated Scenario of a stored version, with dotted-path overrides applied."""
        stored = self.get(ref)
        if stored.info.deleted:
            raise LibraryError(
                f"library:{ref}: the scenario is deleted (library {self.display}); "
                f"{self.suggest('restore', f'{stored.info.name}@{stored.info.version}')} "
                "brings it back"
            )
        try:
            # migrated first, as a file is (read_toml): the overrides and checks below apply to
            # today's fields, which validate_dict would otherwise rewrite over an override
            data = migrate(parse_toml(stored.text, stored.label), stored.label)
            scenario = validate_dict(data, file=stored.label)
            check_complete(data, stored.label)
        except ScenarioError as exc:
            label = f"{stored.info.name}@{stored.info.version}"
            raise LibraryError(
                f"{exc}\n  The stored version no longer validates with econ {__version__}; it is "
                f"kept unchanged. See it with {self.suggest('show', label)}; "
                f"{self.suggest('migrate', label, note=False)} saves a migrated copy as a new "
                "version where a schema migration exists, or fix the text and "
                f"{self.suggest('save', 'FILE', note=False)}."
            ) from None
        if overrides:
            data = apply_overrides(data, overrides, file=stored.label)
            _refuse_files(data, stored.label)
            scenario = validate_dict(data, file=stored.label)
            refuse_set_elsewhere(scenario, overrides, file=stored.label)
            return scenario
        _refuse_files(data, stored.label)
        return scenario

    def summary(self, ref: Ref) -> dict[str, Any]:
        """Summary metrics of a stored version (econ.engine), cached by scenario hash, engine
        version (`engine_version`: econ's version and a hash of its source), catalog version
        (econ.provenance.catalog_versions) and the role that wrote the row (results.written_by).

        Only rows this user can trust are read: on PostgreSQL those the library's owner or this
        role wrote (the server records the writer, migration 0004), so that a member cannot plant
        a summary for others; on SQLite, a file without roles, every row. A miss projects the
        stored text, as does a row that is not a summary of today's metrics (damaged, or written
        by other code) or whose summary_sha256 does not bind its summary to its key
        (`summary_sha256`: changed by hand, copied from another key); this user's own row is
        then replaced where it may UPDATE results (SQLite; on PostgreSQL the library's owner),
        else recomputed each time. What it may do is asked once per Library (`_results_access`):
        a user who may not INSERT into results (a role granted SELECT alone) never tries to.

        The catalog version is taken before projecting (which makes econ read again the catalog
        data of a models/ folder that changed: econ.catalog.catalog_signature) and again after:
        a summary is cached only under the catalogs it was computed from, and only when the
        code running is the code its engine version names (`engine_version` is None otherwise).
        """
        scenario = self.load(ref)
        summary: dict[str, Any] = {}
        for _ in range(WRITE_ATTEMPTS):
            key = _result_key(scenario)
            if key is None:  # the code running may not be the files' code: no cache at all
                return project_summary(scenario)
            access = self._results_access()
            cached, mine = self._cached_result(key, access)
            if cached is not None:
                return cached
            summary = project_summary(scenario)
            if _result_key(scenario) == key:  # (no catalog changed while projecting)
                self._cache_result(key, summary, access, mine)
                return summary
        return summary  # (models/ changed under every attempt: computed, not cached)

    def _results_access(self) -> _ResultsAccess:
        """What this user may do with the results cache, asked once (`_ResultsAccess`)."""
        if self._access is None:
            access = _ResultsAccess(me="", trusted=None, insert=True, update=True)
            if self._engine.dialect.name == "postgresql":
                # (not asked: nothing cached is read, nothing is written)
                access = _ResultsAccess(me="", trusted=(), insert=False, update=False)
                with contextlib.suppress(LibraryError), self._guard("reading"):
                    with self._engine.connect() as conn:
                        row = conn.execute(_PG_RESULTS_ACCESS).one()
                    access = _ResultsAccess(
                        me=row.me,
                        trusted=tuple(dict.fromkeys([row.me, row.owner])),
                        insert=bool(row.can_insert),
                        update=bool(row.can_update),
                    )
            self._access = access
        return self._access

    def _cached_result(self, key: Mapping[str, str], access: _ResultsAccess):
        """(the cached summary of `key` this user can trust, or None; this user's own row, or
        None): the own row is read first, and is the one a recomputed summary replaces."""
        query = sa.select(
            results.c.summary_json, results.c.summary_sha256, results.c.written_by
        ).where(*(results.c[k] == v for k, v in key.items()))
        if access.trusted is not None:
            query = query.where(results.c.written_by.in_(access.trusted))
        rows: list = []
        # The cache is only a cache: a library this user may read but not write (a read-only
        # file, a role granted SELECT alone) still gives every summary, recomputed each time.
        with contextlib.suppress(LibraryError), self._guard("reading"):
            with self._engine.connect() as conn:
                rows = sorted(conn.execute(query).all(), key=lambda r: r.written_by != access.me)
        mine = next((r for r in rows if r.written_by == access.me), None)
        for row in rows:
            if row.summary_sha256 == summary_sha256(key, row.summary_json):
                cached = _cached_summary(row.summary_json)
                if cached is not None:
                    return cached, mine
        return None, mine

    def _cache_result(self, key, summary, access: _ResultsAccess, mine) -> None:
        """Store `summary` as this user's row of `key`: replace the own row that failed its
        check where this user may UPDATE results, insert one where there is none and it may
        INSERT; nothing is tried that the server would refuse (and log)."""
        if not (access.update if mine is not None else access.insert):
            return
        text = json.dumps(summary, sort_keys=True, allow_nan=False)
        values = {
            "summary_json": text,
            "summary_sha256": summary_sha256(key, text),
            "created_utc": _now(),
        }
        own = {**key, "written_by": access.me}

        def store(conn):
            if mine is not None:  # a row that failed its check: UPDATE, which members lack
                conn.execute(
                    results.update()
                    .where(*(results.c[k] == v for k, v in own.items()))
                    .values(**values)
                )
                return
            # DO NOTHING, not DO UPDATE (which PostgreSQL refuses without UPDATE on results,
            # conflict or not): a row this role cached meanwhile is checked when it is read
            conn.execute(
                _dialect_insert(conn, results)
                .values(**own, **values)
                .on_conflict_do_nothing(index_elements=list(own))
            )

        with contextlib.suppress(LibraryError):
            self._transaction(store, "caching a result")

    # --- folders ------------------------------------------------------------------------------

    def export(self, folder: str | os.PathLike, *, force: bool = False) -> dict[str, list[str]]:
        """Write each scenario's newest version as FOLDER/<name>.toml: its first line
        `# econ library: NAME@V` (`export_text`: what `show` writes, which `save` and `import`
        read as the version the file was edited from), then its text exactly.

        A file that exists with other content is refused unless `force` (one holding the same
        text under another first line, or none, has its line rewritten); one that is not a
        regular file (a symbolic link, a FIFO, a device) is refused even so, unread. All files
        are checked before any is written, and written all or none (temporary files renamed
        into place once every one is written: a full disk leaves the folder as it was). A missing
        folder is created (with its missing parents) when there is a scenario to write, and
        removed again if the writing fails."""
        from econ.files import write_files

        folder = _folder_path(folder, "a folder to export to")
        # the folder, or the first of its parents that is there, must be a folder
        there = next((p for p in (folder, *folder.parents) if os.path.lexists(p)), None)
        if there == folder and not folder.is_dir():
            raise LibraryError(
                f"{folder}: not a folder; expected a folder to export to (econ creates a missing "
                "one)"
            )
        if there is not None and not there.is_dir():
            raise LibraryError(
                f"{folder}: cannot create the folder ({there}: a file of that name is in the "
                "way); expected a folder to export to, or one econ may create; nothing was "
                "written"
            )
        plan, seen = [], set()
        for info in self.list():
            stem = _file_stem(info.name, seen)
            text = self.get(Ref(info.name, info.version)).text
            plan.append((folder / f"{stem}.toml", export_text(info.name, info.version, text), text))
        report: dict[str, list[str]] = {"written": [], "unchanged": []}
        conflicts, todo, relined = [], {}, False
        for path, written, text in plan:
            data = written.encode("utf-8")
            held = _held(path, data, text.encode("utf-8"))
            if held == "same":
                report["unchanged"].append(str(path))
                continue
            # a file holding this text under another first line (an older export, or one
            # written before export wrote the line) only has its line brought up to date
            if held == "other" and not force:
                conflicts.append(str(path))
            relined = relined or held == "text"
            todo[path] = data
        if conflicts:
            raise LibraryError(
                "refusing to overwrite files whose content differs from the library: "
                + ", ".join(conflicts)
                + "; nothing was written (use --force, or force=True from Python, to "
                "overwrite them)"
            )
        # all files or none: each is written to a temporary file beside it, and only when every
        # one is written are they renamed into place (econ.files.write_files); a file that
        # appears meanwhile is not overwritten unless --force, or unless files whose first line
        # is brought up to date are replaced in the same write
        made = _make_folder(folder) if todo else []
        try:
            write_files(todo, overwrite=force or relined)
        except BaseException:
            for path in reversed(made):  # (only empty ones: nothing else is removed)
                with contextlib.suppress(OSError):
                    path.rmdir()
            raise
        report["written"] = [str(path) for path in todo]
        return report

    def import_folder(
        self,
        folder: str | os.PathLike,
        *,
        update: bool = False,
        message: str = "",
        author: str | None = None,
    ) -> ImportReport:
        """Save each FOLDER/*.toml: new names as version 1; a text equal to a stored version is
        skipped; a changed text is refused unless `update` (then it is saved as a new version).
        All files are checked first and saved in one transaction: all or nothing.

        A first line `# econ library: NAME@V` (what `econ library show` writes) is read as save
        reads it: the text after it is stored, and V is the version the file was edited from,
        so that an update is refused, nothing imported, when NAME has a newer version than V
        (someone saved meanwhile). A changed file without the line is saved over whatever is
        newest, with a note (`notes`) when another author saved that version."""
        folder = _folder_path(folder, "a folder of TOML scenario files")
        if not folder.is_dir():
            raise LibraryError(f"{folder}: not a folder; expected a folder of TOML scenario files")
        files = sorted(folder.glob("*.toml"))
        if not files:
            raise LibraryError(f"{folder}: no *.toml files; expected a folder of scenario files")
        _refuse_links_out(files, folder)
        prepared, bases, notes = [], {}, []
        for path in files:
            header, text = split_header(read_scenario_text(path))
            item = _prepare(text, str(path))
            prepared.append((item, path))
            if header is not None and header.name == item.name:
                bases[str(path)] = header.version
            elif header is not None:
                notes.append(other_header_note(path, header, "imported with no base"))
        names: dict[str, tuple[_Prepared, Path]] = {}
        for item, path in prepared:
            if item.name in names:  # (names are compared in NFC: 'Å' is one name, however typed)
                raise LibraryError(
                    f"{path} and {names[item.name][1]} both hold scenario {item.name!r}; "
                    "expected one file per scenario name; nothing was imported"
                )
            names[item.name] = item, path
        given = given_author(author)
        message = _check_message(message)

        def run(conn) -> ImportReport:
            who = self._author(conn, given)
            # Each name's row is created if new and locked (in name order, so two imports never
            # deadlock) before its stored texts are read: a save or import of the same name that
            # is under way is waited for, and its version is compared with, not skipped past.
            stored: dict[str, set[str]] = {}
            looks = self._looks(conn)  # (read once: an import may add thousands of names)
            added: dict[str, str] = {}  # the new names of this import, by their files
            for name in sorted(names):
                row = self._lock_scenario(conn, names[name][0], looks, added)
                stored[name] = set(
                    conn.scalars(
                        sa.select(versions.c.text_sha256).where(versions.c.scenario_id == row.id)
                    )
                )
            report, changed = ImportReport(), []
            for item, path in prepared:
                hashes = stored[item.name]
                if item.text_sha256 in hashes:
                    report.unchanged.append(str(path))
                elif not hashes:  # a new name (or one whose row only this import made)
                    report.added.append(str(path))
                else:
                    changed.append(str(path))
                    report.updated.append(str(path))
            if changed and not update:
                raise LibraryError(
                    "these files differ from every stored version of their scenario: "
                    + ", ".join(changed)
                    + "; nothing was imported (re-run with --update to save them as new versions)"
                )
            todo = set(report.added) | set(report.updated)
            saved = []
            for item, path in prepared:
                if str(path) in todo:
                    note = message or f"imported from {path.name}"
                    base = bases.get(str(path)) if str(path) in report.updated else None
                    info = self._insert(
                        conn, item, note, [], who, base=base, origin=str(path), line=True
                    )
                    if info.undeleted:
                        report.restored.append(str(path))
                    if str(path) in report.updated and base is None:
                        saved.append((info, str(path)))
            return report, saved

        report, saved = self._transaction(run, "importing")
        report.notes = notes + [
            n for info, path in saved if (n := self.unchecked_note(info, path, "import"))
        ]
        return report

    def unchecked_note(self, info: SavedVersion, origin: str, verb: str = "save") -> str | None:
        """A note for `info`, a version stored (by a `verb`: save, import) from the file `origin`
        with no base over a version another author saved, else None: econ cannot tell whether
        the file held that version's changes (a save or an import is never refused for that),
        so the note names the version followed and how to see and undo what the new one did."""
        if info.parent_version is None:
            return None
        parent = self.get(Ref(info.name, info.parent_version)).info
        if parent.author == info.author:
            return None
        before, now = f"{info.name}@{parent.version}", f"{info.name}@{info.version}"
        return (
            f"note: {origin} names no version it was edited from, and the version this {verb} "
            f"follows, {before}, was saved by {parent.author!r} at {parent.created_utc}: if this "
            f"file did not start from it, {self.suggest('diff', before, now)} shows what this "
            f"{verb} undid and {self.suggest('restore', before, note=False)} brings it back (a "
            f"file whose first line is '{HEADER}NAME@V', as `econ library show` writes, or a "
            "save with --base V, is refused instead when V is no longer the newest version)"
        )

    # --- internals ----------------------------------------------------------------------------

    def _lock_scenario(
        self,
        conn,
        item: _Prepared,
        looks: dict[tuple[str, str], list[str]] | None = None,
        added: dict[str, str] | None = None,
    ):
        """The scenario's row, inserted if the name is new, locked until the transaction ends
        (PostgreSQL: FOR UPDATE; SQLite: BEGIN IMMEDIATE has locked the whole file).

        A name already stored (as typed, NFC or NFD) is used as it is, so versions saved before
        names were checked keep being saved to; a new name must pass the checks of
        `name_problem` and must not look like a stored one (`_refuse_lookalike`; `looks`: the
        stored names by their `look_keys`, when one transaction adds many names; `added`: the
        names this transaction has added so far, by the file each came from)."""
        row = self._find(conn, item.name, lock=True)
        if row is not None:
            return row
        if item.name_problem is not None:
            raise item.name_problem
        if looks is None:
            looks = self._looks(conn)
        self._refuse_lookalike(item, looks, added or {})
        for key in look_keys(item.name):
            looks.setdefault(key, []).append(item.name)
        if added is not None:
            added[item.name] = item.origin
        conn.execute(
            _dialect_insert(conn, scenarios)
            .values(name=item.name, created_utc=_now())
            .on_conflict_do_nothing(index_elements=["name"])
        )
        return self._scenario(conn, item.name, lock=True)

    @staticmethod
    def _looks(conn) -> dict[tuple[str, str], list[str]]:
        """Every stored name (deleted ones too) by each of its `look_keys`, read in a write
        transaction that may add names. On PostgreSQL that transaction first takes the names'
        advisory lock (held until it ends), so that two saves of look-alike new names at once
        (plan-N, PLAN-N) are checked one after the other, the second seeing the first's name;
        SQLite's BEGIN IMMEDIATE has already locked the file."""
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k, :n)"), _PG_NAMES_LOCK)
        looks: dict[tuple[str, str], list[str]] = {}
        for name in conn.scalars(sa.select(scenarios.c.name)):
            for key in look_keys(name):
                looks.setdefault(key, []).append(name)
        return looks

    def _refuse_lookalike(
        self,
        item: _Prepared,
        looks: dict[tuple[str, str], list[str]],
        added: Mapping[str, str] | None = None,
    ) -> None:
        """ScenarioError when a new name looks like a stored name (the same `skeleton`: Cyrillic
        'А-B' beside Latin 'A-B', 'IIama' beside 'llama', an en dash for '-', a trailing
        no-break space) or differs from one only in letter case (`look_keys`); or like a name
        the same import adds (`added`: name -> its file), naming that file."""
        added = added or {}
        for key in look_keys(item.name):
            for other in looks.get(key, []):
                # the same name (one another save has just committed, on PostgreSQL) is no
                # look-alike: it is waited for and saved to by the insert and lock that follow
                if unicodedata.normalize("NFC", other) == item.name:
                    continue
                difference = _first_difference(item.name, other)
                if other in added:
                    raise ScenarioError(
                        item.origin,
                        "name",
                        item.name,
                        f"{key[0]} {other!r}, the name in {added[other]} of the same import"
                        f"{difference}; expected names that cannot be mistaken for one another "
                        "(one file per scenario); nothing was imported",
                    )
                raise ScenarioError(
                    item.origin,
                    "name",
                    item.name,
                    f"{key[0]} {other!r}, already in library {self.display}{difference}; "
                    "expected a name that cannot be mistaken for another (save to "
                    f"{other!r} if it is that scenario); nothing was saved",
                )

    def _insert(
        self,
        conn,
        item: _Prepared,
        message,
        tag_list,
        author,
        *,
        base=None,
        new=False,
        origin="",
        line=False,
    ) -> SavedVersion:
        """Store `item` as its name's next version (`base`: the version it was edited from, or None;
        `line`: that base is the file's first line, read by an import, not a --base)."""
        now = _now()
        row = self._lock_scenario(conn, item)
        if new and row.deleted_utc is None:  # checked under the row's lock
            latest = conn.scalar(
                sa.select(sa.func.max(versions.c.version)).where(versions.c.scenario_id == row.id)
            )
            if latest is not None:
                self._refuse_taken(conn, row.id, item.name, latest, origin)
        if row.deleted_utc is not None:  # saving a deleted name brings its history back
            conn.execute(
                scenarios.update()
                .where(scenarios.c.id == row.id)
                .values(deleted_utc=None, deleted_by=None)
            )
        latest = conn.scalar(
            sa.select(sa.func.max(versions.c.version)).where(versions.c.scenario_id == row.id)
        )
        if base is not None and latest != base:  # checked under the row's lock
            self._refuse_stale(conn, row.id, item.name, base, latest, origin, line=line)
        values = {
            "scenario_id": row.id,
            "version": (latest or 0) + 1,
            "toml_text": item.text,
            "text_sha256": item.text_sha256,
            "scenario_sha256": item.scenario_sha256,
            "schema_version": item.schema_version,
            "author": author,
            "message": message,
            "created_utc": now,
            "parent_version": latest,
            "hardware": item.hardware,
            "model": item.model,
        }
        result = conn.execute(versions.insert().values(**values))
        version_id = result.inserted_primary_key[0]
        if tag_list:
            conn.execute(tags.insert(), [{"version_id": version_id, "tag": t} for t in tag_list])
        return SavedVersion(
            name=row.name,
            version=values["version"],
            created_utc=_iso(now),
            author=author,
            message=message,
            tags=list(tag_list),
            text_sha256=item.text_sha256,
            scenario_sha256=item.scenario_sha256,
            schema_version=item.schema_version,
            parent_version=latest,
            hardware=item.hardware,
            model=item.model,
            undeleted=row.deleted_utc is not None,
        )

    @staticmethod
    def _author(conn, given: str | None) -> str:
        """Who saves, as versions.author (and scenarios.deleted_by) keep it. On PostgreSQL, the
        role connected (current_user), which the server has authenticated: a name given
        (--author, ECON_AUTHOR) is kept, with that role beside it where they differ, 'bob (role
        ada)', so that a shared library records who really wrote. On SQLite, which has no
        users, the name given, else the login name."""
        if conn.dialect.name != "postgresql":
            return given or _check_author(login_name())
        role = _check_author(conn.scalar(sa.text("SELECT current_user")))
        if given is None or given == role:
            return role
        both = f"{given} (role {role})"
        if len(both) > NAME_LENGTH:
            raise LibraryError(
                f"author {_quoted(given)}: with the role econ records beside it on PostgreSQL "
                f"({role!r}), longer than {NAME_LENGTH} characters; expected a name of at most "
                f"{NAME_LENGTH - len(both) + len(given)} characters (or none: the role is then "
                "the author); nothing was saved"
            )
        return both

    def _newest_by(self, conn, scenario_id, latest: int) -> str:
        """'saved by AUTHOR at TIME' of version `latest`."""
        newest = conn.execute(
            sa.select(versions.c.author, versions.c.created_utc).where(
                (versions.c.scenario_id == scenario_id) & (versions.c.version == latest)
            )
        ).first()
        return f"saved by {_quoted(newest.author)} at {_iso(newest.created_utc)}"

    def _refuse_taken(self, conn, scenario_id, name, latest: int, origin):
        raise LibraryError(
            f"{origin}: --new: {name!r} is already in library {self.display} at version "
            f"{latest} ({self._newest_by(conn, scenario_id, latest)}); expected a name the "
            f"library does not hold ({self.suggest('show', name)} shows it); nothing was saved"
        )

    def _refuse_stale(
        self, conn, scenario_id, name, base: int, latest: int | None, origin, *, line=False
    ):
        """LibraryError: `base` is not the newest version (`line`: the base is the first line an
        import read, '# econ library: NAME@V', not a save's --base)."""
        given = f"its first line '{HEADER}{name}@{base}'" if line else f"--base {base}"
        outcome = "nothing was imported" if line else "nothing was saved"
        if latest is None:  # (an import reads no base for a name the library does not hold)
            raise LibraryError(
                f"{origin}: {given}: {name!r} has no version in library {self.display}; "
                f"expected no --base for a new name; {outcome}"
            )
        if base > latest:
            raise LibraryError(
                f"{origin}: {given}: {name!r} has no version {base} (its newest is "
                f"{latest}); expected the version this file was edited from; {outcome}"
            )
        fix = f"the line to name {name}@{latest}" if line else f"--base {latest}"
        raise LibraryError(
            f"{origin}: {given}: {name!r} is now at version {latest} "
            f"({self._newest_by(conn, scenario_id, latest)}); expected {fix}, once the "
            f"changes since version {base} are in this file "
            f"({self.suggest('diff', f'{name}@{base}', f'{name}@{latest}')} shows them); "
            f"{outcome}"
        )

    def _scenario(self, conn, name: str, *, lock: bool = False):
        row = self._find(conn, name, lock=lock)
        if row is None:
            if not self.exists:
                raise LibraryError(
                    f"no scenario {shortened(name)} in library {self.display}: "
                    f"{self.missing_note()}"
                )
            known = list(conn.scalars(sa.select(scenarios.c.name)))
            close = difflib.get_close_matches(name, known, n=3)
            shown = (n if n.isprintable() else repr(n) for n in close)  # (a stored name's U+2028)
            hint = f"; did you mean {', '.join(shown)}?" if close else ""
            raise LibraryError(
                f"no scenario {shortened(name)} in library {self.display}{hint} "
                f"({self.suggest('list')} shows the names)"
            )
        return row

    def missing_note(self) -> str:
        """Why a library holds nothing: it does not exist yet (its SQLite file is missing or
        empty, its database has no tables of econ's)."""
        path = self.missing_file
        if path is None:
            return (
                f"its database holds no econ library yet ({self.suggest('save', 'FILE')} "
                f"creates the library, as does {self.suggest('upgrade', note=False)})"
            )
        state = "is empty" if path.exists() else "does not exist yet"
        return f"its file {path} {state} ({self.suggest('save', 'FILE')} creates the library)"

    def suggest(self, verb: str, *refs: str, then: str = "", note: bool = True) -> str:
        """`econ library VERB REF...` (`command_line`) in backticks, for a message: with
        `--library URL` when this library was named by URL (--library, or the Python API's url),
        so that the pasted command reads this library and not ECON_LIBRARY's or the default.
        A URL holding a password is not shown: the command says `--library URL` and (`note`)
        a word after it says to give the URL as before. `then`: more of the shell line
        (`> FILE.toml`)."""
        url = self._named_url
        withheld = url is not None and hide_credentials(url) != url
        line = command_line(verb, *refs, library="URL" if withheld else url)
        suggested = f"`{line}{then}`"
        if withheld and note:
            suggested += " (URL: the --library URL you gave, not shown as it holds a password)"
        return suggested

    def _find(self, conn, name: str, *, lock: bool = False):
        """The row of `name` as typed, else of its NFC form (how names are stored), else of its
        NFD form (a name stored before names were normalized), or None."""
        spellings = list(dict.fromkeys([name, *(unicodedata.normalize(f, name) for f in _FORMS)]))
        rows = conn.execute(sa.select(scenarios).where(scenarios.c.name.in_(spellings))).all()
        found = {row.name: row for row in rows}
        row = next((found[s] for s in spellings if s in found), None)
        if row is None or not lock:
            return row
        query = sa.select(scenarios).where(scenarios.c.id == row.id).with_for_update()
        return conn.execute(query).first()

    def _infos(self, conn, pairs: list[tuple]) -> list[VersionInfo]:
        ids = [v.id for _, v in pairs]
        labels: dict[int, list[str]] = {}
        if ids:
            query = sa.select(tags).where(tags.c.version_id.in_(ids)).order_by(tags.c.tag)
            for row in conn.execute(query):
                labels.setdefault(row.version_id, []).append(row.tag)
        return [
            VersionInfo(
                name=s.name,
                version=v.version,
                created_utc=_iso(v.created_utc),
                author=v.author,
                message=v.message,
                tags=labels.get(v.id, []),
                text_sha256=v.text_sha256,
                scenario_sha256=v.scenario_sha256,
                schema_version=v.schema_version,
                parent_version=v.parent_version,
                hardware=v.hardware,
                model=v.model,
                deleted=s.deleted_utc is not None,
            )
            for s, v in pairs
        ]

    @contextlib.contextmanager
    def _write(self, engine: sa.Engine | None = None) -> Iterator[sa.Connection]:
        with (engine or self._engine).connect() as conn:
            conn.execution_options(**{_WRITE: True})
            with conn.begin() as transaction:
                yield conn
                try:
                    transaction.commit()
                except sa.exc.DBAPIError as exc:
                    # the connection lost while the server commits: the write may have been made
                    # (`_guard` says so, rather than "nothing was changed")
                    exc.econ_commit_unknown = exc.connection_invalidated
                    raise

    def _transaction(self, run, doing: str):
        """run(conn) in a write transaction (retried when a unique constraint collides); in a
        library that does not exist yet, the same transaction first creates its tables, so a
        write that fails leaves none (and no SQLite file: `_discard_new_file`)."""
        if not self.exists and not self._create:  # opened for reading: never create it
            raise LibraryError(
                f"library {self.display}: {doing} failed: {self.missing_note()}; nothing was "
                "written"
            )
        if not self.exists:
            self._rehearse(run)
        try:
            with self._guard(doing):
                engine = self._engine if self.exists else self._creating()
                for attempt in range(WRITE_ATTEMPTS):
                    try:
                        with self._write(engine) as conn:
                            if not self.exists:
                                self._upgrade(conn)
                            result = run(conn)
                        break
                    except sa.exc.IntegrityError:
                        if attempt == WRITE_ATTEMPTS - 1:
                            raise
                if not self.exists:  # created: the library's own engine reads it from now on
                    self._engine.dispose()
                    self._engine, self._store, self.exists = engine, None, True
                    self.missing_file = self._new_file = None  # the file is the user's now
                return result
        except BaseException as exc:
            self._discard_new_file(exc)
            raise

    def _rehearse(self, run) -> None:
        """run(conn) on the empty library in memory, rolled back: a write that the library
        refuses for its input (a name, --base) is refused before any file or table is made."""
        with self._guard("checking"), self._engine.connect() as conn:
            transaction = conn.begin()
            try:
                run(conn)
            finally:
                transaction.rollback()

    def _creating(self) -> sa.Engine:
        """The engine of a library that does not exist yet (a SQLite file's, made now)."""
        if self._store is None:
            path = self.missing_file
            if path is not None and not path.exists() and not path.is_symlink():
                self._new_file = path
            self._store = self._connect()
        return self._store

    def _read_as_empty(self) -> None:
        """Read the library as empty (it does not exist yet): the tables exist in memory only."""
        self._engine, self.exists = _empty_engine(), False
        metadata.create_all(self._engine)

    def _discard_new_file(self, exc: BaseException) -> None:
        """Remove the SQLite file this Library created when its first write failed (a full disk,
        say), so that a failed save leaves no new file behind; a file holding any version, or
        one that existed before, is never removed."""
        path, self._new_file = self._new_file, None
        if path is None or not path.is_file():
            return
        if self._store is not None:  # closed first: (the next write makes the file again)
            self._store.dispose()
            self._store = None
        if _holds_versions(path):
            return
        for leftover in (path, *(path.with_name(path.name + s) for s in _SQLITE_SIDECARS)):
            with contextlib.suppress(OSError):
                leftover.unlink()
        if isinstance(exc, _DatabaseFailure):  # (a refused input made the file only in passing)
            exc.args = (f"{exc}; econ removed the library file it had just created ({path})",)

    @contextlib.contextmanager
    def _guard(self, doing: str, upgrading: str | None = None) -> Iterator[None]:
        """Database failures as LibraryError (`_describe`); `upgrading`: the revision of a
        library being upgraded, whose upgrade only the owner of its tables may make."""
        try:
            yield
        except sa.exc.SQLAlchemyError as exc:
            owner = None
            if upgrading is not None:
                owner = (
                    f"it is at library revision {upgrading}, older than the revision "
                    f"{_head_revision()} econ {__version__} writes, and its upgrade changes its "
                    f"tables: {self.suggest('upgrade')}, as the role that owns them"
                )
            message = _describe(
                exc,
                self.display,
                doing,
                role=self._role,
                lock_timeout_s=self._lock_timeout_s,
                file=self._file,
                upgrading=owner,
            )
            if getattr(exc, "econ_commit_unknown", False):
                message = message.replace("; nothing was changed", f"; {_COMMIT_UNKNOWN}", 1)
            raise _DatabaseFailure(message) from None

    def _open(self) -> None:
        """Check the library's revision when it is opened: at the newest, every table must be
        there; a database without tables does not hold a library yet (read as empty: the first
        write creates it); an older one is upgraded if `create` (a library only read is never
        written to, so it is refused, naming the command that upgrades it)."""
        head = _head_revision()
        with self._guard("opening"):
            with self._engine.connect() as conn:
                current, tables, others = _revision(conn)
                # the tables are listed again after the revision is read: a migration another
                # process commits in between has then made both, never the revision alone
                if current == head:
                    tables = set(sa.inspect(conn).get_table_names())
            self.opened_revision = current
            if current == head:
                missing = sorted(set(metadata.tables) - tables)
                if missing:
                    raise LibraryError(
                        f"library {self.display}: table {', '.join(missing)} missing, though "
                        f"{REVISION_TABLE} says the library is at revision {current}; nothing was "
                        f"changed. Expected every table of an econ library "
                        f"({', '.join(sorted(metadata.tables))}): restore the database from a "
                        "backup, or point --library / ECON_LIBRARY at another library"
                    )
                return
            if current is None and not tables and not others:  # an empty database (or file)
                store = self._engine
                self._read_as_empty()
                if self._create:
                    self._store = store  # for the first write, which creates the tables
                else:
                    store.dispose()
                return
            self._refuse_unusable(current, tables, others)
            if not self._create:
                raise LibraryError(
                    f"library {self.display} is at library revision {current}, older than the "
                    f"revision {head} econ {__version__} reads; nothing was changed (a command "
                    "that only reads never upgrades a library). Expected the library upgraded "
                    "first by a user allowed to change its tables (on PostgreSQL, the role that "
                    f"owns them): {self.suggest('upgrade')} (a save upgrades it too)"
                )
            with self._guard("opening", upgrading=current), self._write() as conn:
                self._upgrade(conn)

    def _upgrade(self, conn) -> None:
        """Bring the library's tables to the newest revision (creating them in an empty
        database) in the write transaction of `conn`, under the library's lock (PostgreSQL: an
        advisory lock; SQLite: BEGIN IMMEDIATE), so that two processes upgrading at once
        upgrade it once."""
        from alembic import command

        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
        current, tables, others = _revision(conn)
        self._refuse_unusable(current, tables, others)
        if current != _head_revision():
            config = _alembic_config()
            config.attributes["connection"] = conn
            command.upgrade(config, "head")

    def _refuse_unusable(self, current: str | None, tables: set[str], others: list[str]):
        """LibraryError for a database holding tables or views (`others`) but no econ library,
        or a library at a revision this econ does not know (a newer econ's, or none econ
        wrote)."""
        if current is None and (tables or others):
            named = sorted(tables)
            held = [f"tables {named[0]}", *named[1:]] if named else []
            raise LibraryError(
                f"library {self.display} is a database but not an econ library (it has "
                f"{listed([*held, *others], limit=5)}); nothing was changed. Expected an econ "
                "library, a new file or an empty database"
            )
        if current is None or current in _known_revisions():
            return
        head = _head_revision()
        if re.fullmatch(r"[0-9]{4}", current) and current > head:  # (numbered as econ numbers)
            raise LibraryError(
                f"library {self.display} was written by a newer econ (library revision "
                f"{current}; econ {__version__} knows up to {head}); nothing was changed. "
                "Upgrade econ to use it"
            )
        raise LibraryError(
            f"library {self.display}: {REVISION_TABLE} holds {shortened(current)}, which is not "
            f"a library revision econ knows (econ {__version__} knows 0001 to {head}, and a "
            f"newer econ numbers its revisions on from there); nothing was changed. Expected the "
            "revision econ wrote there: restore the library from a backup"
        )


def project_summary(scenario) -> dict[str, Any]:
    """The engine's summary metrics of one scenario (strict JSON values)."""
    from econ.engine import project

    records = project([scenario]).summary_records()
    return records[0]["summary"]


def _cached_summary(text: Any) -> dict[str, Any] | None:
    """A cached summary_json as a summary of today's metrics, or None (a miss) when it is not
    one: not JSON (a damaged row), or not an object holding exactly econ.engine's summary keys."""
    from econ.engine import SUMMARY_COLUMNS

    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or set(value) != set(SUMMARY_COLUMNS):
        return None
    return value


def summary_sha256(key: Mapping[str, str], summary_json: str) -> str:
    """The SHA-256 a results row keeps beside its summary: over its key (scenario hash, engine
    version, catalog hash) and its summary_json, joined by NUL (none of them holds one), so that
    a summary changed by hand, or copied to another scenario's key, no longer matches. It is no
    secret: whoever may write the table can compute it too (the grants keep members from
    changing a row; docs/library.md, "What keeps versions as saved")."""
    parts = (key["scenario_sha256"], key["econ_version"], key["catalog_sha256"], summary_json)
    return hashlib.sha256("\0".join(map(str, parts)).encode("utf-8", "surrogatepass")).hexdigest()


ENGINE_HASH_CHARS = 40
"""Hex digits of the source hash in `engine_version` (with the version, within the column's 64)."""


def engine_version() -> str | None:
    """The results cache's engine key: econ's version and a hash of the package's Python source
    (`sources_sha256`), e.g. 0.1.0+3f2a...: the version alone is not bumped by every change of
    the engine, and teammates running other code must not read each other's results.

    None when a source file of the package was modified after this process imported econ (an
    upgrade or a `git pull` under a running app, a file dated in the future): the code running
    may then be older than the files, and their hash would label its results as theirs, so its
    results are neither read from the cache nor written to it (`package_sha256`)."""
    digest = _package_sha256()
    return None if digest is None else f"{__version__}+{digest[:ENGINE_HASH_CHARS]}"


def _package_sha256() -> str | None:
    """`package_sha256` of the econ package, against the time this process imported it."""
    import econ

    return package_sha256(Path(econ.__file__).parent, econ._IMPORTED_NS)


_SOURCE_HASHES: dict[tuple, str] = {}
"""The last `sources_sha256` computed, by its files' signature (one entry: the package's)."""
_SOURCE_HASHES_LOCK = threading.Lock()


def package_sha256(folder: Path, since_ns: int) -> str | None:
    """`sources_sha256` of `folder`, or None when one of its *.py files was modified at or after
    `since_ns` [ns since 1970] (when the process read the package: the file may not be the code
    running). Hashed again only when a file's size or modification time changes."""
    signature = []
    for path in source_files(folder):
        stat = path.stat()
        if stat.st_mtime_ns >= since_ns:
            return None
        signature.append((path.relative_to(folder).as_posix(), stat.st_size, stat.st_mtime_ns))
    key = (str(folder), *signature)
    # (safe in threads: the hash returned is the one looked up or computed here, never read
    # back from the cache another thread may have emptied in between)
    with _SOURCE_HASHES_LOCK:
        digest = _SOURCE_HASHES.get(key)
    if digest is None:
        digest = sources_sha256(folder)
        with _SOURCE_HASHES_LOCK:
            _SOURCE_HASHES.clear()
            _SOURCE_HASHES[key] = digest
    return digest


@functools.cache
def _migration_script():
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_alembic_config())


def _head_revision() -> str:
    """The newest library revision this econ ships."""
    return _migration_script().get_current_head()


def _known_revisions() -> set[str]:
    return {rev.revision for rev in _migration_script().walk_revisions()}


def _alembic_config():
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def _revision(conn) -> tuple[str | None, set[str], list[str]]:
    """(current Alembic revision or None, every table of the schema econ's tables are in, and
    with no revision the other objects the database holds (`_other_relations`): a database
    holding any of them is not empty)."""
    from alembic.runtime.migration import MigrationContext

    names = set(sa.inspect(conn).get_table_names())
    if REVISION_TABLE not in names:
        return None, names, _other_relations(conn)
    context = MigrationContext.configure(conn, opts={"version_table": REVISION_TABLE})
    return context.get_current_revision(), names, []


_PG_RELATIONS = sa.text(
    "SELECT n.nspname = current_schema() AS here, n.nspname AS schema, c.relname AS name, "
    "c.relkind AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') "
    "AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%' "
    "AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass "
    "AND d.objid = c.oid AND d.deptype = 'e')"
)
"""A PostgreSQL database's tables, views, materialized views and foreign tables in every
schema but the system's, without those an extension made (pg_stat_statements' views)."""
_PG_KINDS = {
    "r": "table",
    "p": "table",
    "v": "view",
    "m": "materialized view",
    "f": "foreign table",
}


def _other_relations(conn) -> list[str]:
    """What a database holds besides the tables of the schema econ's tables go in, each named
    with its kind, sorted: views there ('view v_sales'), and on PostgreSQL the tables and views
    of other schemas ('table billing.orders'), extensions' objects aside."""
    if conn.dialect.name != "postgresql":
        return [f"view {name}" for name in sorted(sa.inspect(conn).get_view_names())]
    return sorted(
        f"{_PG_KINDS[row.kind]} {row.name if row.here else f'{row.schema}.{row.name}'}"
        for row in conn.execute(_PG_RELATIONS)
        if not (row.here and _PG_KINDS[row.kind] == "table")  # (the caller's `tables`)
    )


def _dialect_insert(conn, table):
    module = postgresql if conn.dialect.name == "postgresql" else sqlite
    return module.insert(table)


_SQLITE_SIDECARS = ("-journal", "-wal", "-shm")
"""Files SQLite keeps beside a database (rollback journal, write-ahead log, its index)."""


def _holds_versions(path: Path) -> bool:
    """Whether a SQLite library file holds a saved version (True when that cannot be told).

    Opened to write (mode=rw, which never creates it), not read-only: a write that failed on a
    full disk can leave its rollback journal behind, which SQLite must play back before anything
    is read, and a read-only connection cannot ("attempt to write a readonly database")."""
    import sqlite3

    try:
        uri = f"file:{_uri_path(path)}?mode=rw"
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            if "versions" not in tables:
                return False
            return conn.execute("SELECT count(*) FROM versions").fetchone()[0] > 0
    except sqlite3.DatabaseError as exc:
        # a file cut short while econ created it holds nothing; any other doubt keeps the file
        return "not a database" not in str(exc) and "malformed" not in str(exc)


_PATH_SUFFIXES = (".db", ".sqlite", ".sqlite3", ".db3")


def _looks_like_path(text: str) -> bool:
    """Whether a text that is no URL reads as a file path (a folder separator, or a SQLite file's
    suffix), so that the message can give the URL for it: sqlite:/// then the path, which makes
    four slashes for an absolute one (sqlite:////srv/econ/lib.sqlite)."""
    text = text.strip()
    if not text or "://" in text or "\n" in text:
        return False
    return "/" in text or "\\" in text or text.lower().endswith(_PATH_SUFFIXES)


@dataclass(frozen=True)
class _Target:
    """Where a library is, checked, before anything is opened or created."""

    display: str
    """The URL to show (password hidden)."""
    connect: Callable[[], sa.Engine]
    """The library's engine (a SQLite file's, made once it is needed)."""
    missing_file: Path | None = None
    """A SQLite file that does not exist yet or is empty (the library does not exist yet)."""
    role: str | None = None
    """The PostgreSQL role named in the URL (None: libpq's default, the login name)."""
    file: Path | None = None
    """A SQLite library's file (None: PostgreSQL), for messages naming it or its folder."""


def _make_engine(text: str, source: str, timeout_s: float | None, create: bool = True) -> _Target:
    """The library at a URL, checked (LibraryError naming `source` for a URL econ does not
    read); nothing is opened or created yet."""
    shown = hide_credentials(text)
    try:
        url = sa.engine.make_url(text)
    except (sa.exc.ArgumentError, ValueError):
        if _looks_like_path(text):
            raise LibraryError(
                f"{source} = {shown!r}: a file path, not a database URL; for a SQLite library "
                f"in that file write sqlite:///{shown} ({_URL_HELP})"
            ) from None
        raise LibraryError(f"{source} = {shown!r}: not a database URL; {_URL_HELP}") from None
    backend = url.get_backend_name()
    if backend == "sqlite":
        return _sqlite_engine(url, source, timeout_s, shown, create)
    if backend == "postgres":
        raise LibraryError(
            f"{source} = {shown}: 'postgres://' is not a scheme econ reads; expected "
            "postgresql+psycopg://USER@HOST/DATABASE (write postgresql+psycopg:// where "
            "postgres:// is)"
        )
    if backend == "postgresql":
        if url.drivername == "postgresql":
            url = url.set(drivername="postgresql+psycopg")
        if url.drivername != "postgresql+psycopg":
            raise LibraryError(
                f"{source}: driver {url.drivername!r} is not supported; {_URL_HELP} (psycopg 3)"
            )
        if url.host and "@" in url.host:  # the URL's parser ends the password at its first '@'
            raise LibraryError(
                f"{source} = {shown}: more than one '@' before the host; expected "
                "USER:PASSWORD@HOST, with an '@' in the password written as %40"
            )
        if not (url.database or url.query.get("dbname") or os.environ.get("PGDATABASE")):
            # libpq would open the database named like the user: a library read or made in
            # another database than the team's ('postgres', the superuser's), or one said to be
            # missing though the URL named none
            raise LibraryError(
                f"{source} = {shown}: names no database; expected "
                "postgresql+psycopg://USER@HOST/DATABASE, the library's own database"
            )
        display = hide_credentials(url.render_as_string(hide_password=True))
        args = {} if "connect_timeout" in url.query else {"connect_timeout": PG_CONNECT_TIMEOUT_S}
        try:
            engine = sa.create_engine(url, connect_args=args)
        except (sa.exc.ArgumentError, ImportError) as exc:
            detail = hide_credentials(str(exc))
            raise LibraryError(f"{source} = {display}: {detail}; {_URL_HELP}") from None
        lock_timeout_ms = max(
            1, round(1000 * (PG_LOCK_TIMEOUT_S if timeout_s is None else timeout_s))
        )

        @sa.event.listens_for(engine, "begin")
        def _begin(conn):
            # A save waits this long for another's row lock (or an upgrade's advisory lock), and
            # a read for a table another session locked (an upgrade altering it, LOCK TABLE),
            # then fails naming the cause, rather than hanging on a stuck session.
            conn.exec_driver_sql(f"SET LOCAL lock_timeout = {lock_timeout_ms}")

        return _Target(display, lambda: engine, role=url.username)
    url_shown = hide_credentials(url.render_as_string(hide_password=True))
    raise LibraryError(
        f"{source} = {url_shown}: {backend!r} databases are not supported; {_URL_HELP}"
    )


def _sqlite_engine(url, source: str, timeout_s: float | None, shown: str, create: bool = True):
    database = url.database or ""
    if url.drivername not in ("sqlite", "sqlite+pysqlite"):
        raise LibraryError(f"{source}: driver {url.drivername!r} is not supported; {_URL_HELP}")
    query = dict(url.query)
    others = sorted(set(query) - {"timeout"})
    if others:
        hint = (
            " (a read-only library: make the file read-only, and econ reads it but refuses saves)"
            if "mode" in others
            else ""
        )
        raise LibraryError(
            f"{source}: ?{others[0]}=... is not a SQLite library option; expected only "
            f"?timeout=S, the seconds a save waits for another writer's lock{hint}"
        )
    timeout = timeout_s if timeout_s is not None else query.get("timeout", SQLITE_TIMEOUT_S)
    try:
        timeout = float(timeout if isinstance(timeout, int | float | str) else timeout[-1])
    except ValueError:
        timeout = math.nan
    if not 0 <= timeout <= MAX_SQLITE_TIMEOUT_S:  # (NaN fails too)
        raise LibraryError(
            f"{source}: timeout={shortened(query.get('timeout', timeout_s))}: expected the "
            f"seconds a save waits for another writer's lock, 0 to {MAX_SQLITE_TIMEOUT_S:,.0f} "
            f"(a day), e.g. {SQLITE_TIMEOUT_S:g}"
        )
    if url.host or url.username or url.port:  # sqlite://team.db: two slashes, not three
        raise LibraryError(
            f"{source} = {shown}: not a SQLite library URL (a host after sqlite://); expected "
            "sqlite:///PATH.db (three slashes; four before an absolute path: "
            "sqlite:////home/ada/library.db)"
        )
    if not database or database == ":memory:":
        raise LibraryError(
            f"{source} = {shown}: an in-memory SQLite database, whose saves are lost when the "
            "command ends; expected a library file, sqlite:///PATH.db"
        )
    if database.endswith(("/", "/.", "/..")) or database in (".", ".."):
        # Path() would drop the trailing '/' and SQLite create a file named like the folder
        raise LibraryError(
            f"{source} = {shown}: the path ends in '/', which names a folder; expected a library "
            f"file's path, e.g. sqlite:///{database.rstrip('/.') or '.'}/library.db"
        )
    path = Path(database).expanduser()
    display = f"sqlite:///{database}"
    default = path == default_path()
    if not (default and not path.parent.is_dir()):  # (the default's folder is made when needed)
        if path.is_dir():
            raise LibraryError(f"{source}: {path} is a folder; expected a library file (.db)")
        if not path.parent.is_dir():
            raise LibraryError(
                f"{source}: folder {path.parent} does not exist; expected the library file's "
                "folder to exist (econ creates the file, not its folder)"
            )
        if path.exists() and not path.is_file():  # /dev/full, a FIFO, a socket
            raise LibraryError(
                f"{source}: {path} is not a regular file; expected a library file (.db)"
            )
    if create:
        url = url.set(database=str(path), query={})
    else:  # open the file only if it exists (SQLite's mode=rw never creates it)
        url = url.set(database=f"file:{_uri_path(path)}?mode=rw", query={"uri": "true"})

    def connect() -> sa.Engine:
        if default:
            path.parent.mkdir(parents=True, exist_ok=True)
        try:
            engine = sa.create_engine(url, connect_args={"timeout": timeout})
        except sa.exc.ArgumentError as exc:
            raise LibraryError(f"{source} = {url}: {exc}; expected sqlite:///PATH.db") from None

        @sa.event.listens_for(engine, "connect")
        def _connect(dbapi_connection, _record):
            # Transactions are begun by the "begin" hook below, so DDL is transactional and
            # writes take the lock at BEGIN (no deadlock between two readers turning writers).
            dbapi_connection.isolation_level = None
            dbapi_connection.execute("PRAGMA foreign_keys = ON")

        @sa.event.listens_for(engine, "begin")
        def _begin(conn):
            write = conn.get_execution_options().get(_WRITE)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        return engine

    # A file that does not exist yet (or is empty) is no library yet: it reads as empty, and
    # only a write creates it (never a read, nor a save that fails).
    missing = not path.exists() or path.stat().st_size == 0
    return _Target(display, connect, path if missing else None, file=path)


def _empty_engine():
    """An in-memory SQLite database standing for a library file that does not exist yet."""
    return sa.create_engine("sqlite://", poolclass=sa.pool.StaticPool)


def _uri_path(path: Path) -> str:
    """A path as SQLite's URI filenames write it ('?', '#', '%' and spaces escaped)."""
    from urllib.parse import quote

    return quote(str(path.absolute()), safe="/")


_TEAM_DOCS = 'docs/library.md, "A team on PostgreSQL"'

MEMBER_GRANTS = (
    "GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}",
    "GRANT INSERT ON scenarios, versions, tags, results TO {role}",
    "GRANT UPDATE (deleted_utc, deleted_by) ON scenarios TO {role}",
    "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}",
)
"""What a member who saves needs, and no more (docs/library.md, "A team on PostgreSQL"): the
versions, tags and results are only ever inserted, so no member may UPDATE or DELETE them; a
scenario's row is marked deleted and undeleted, and locked by each save (SELECT ... FOR UPDATE,
which PostgreSQL allows with UPDATE on one column); the sequences number new rows."""


def member_grants(role: str) -> list[str]:
    """`MEMBER_GRANTS` for `role`, as statements."""
    return [grant.format(role=role) for grant in MEMBER_GRANTS]


_INTEGRITY_DOCS = 'docs/library.md, "What keeps versions as saved"'

APP_LIBRARY = "the app's library"
"""How a message shown to the app's visitors names the library instead of by its URL or file."""
_EXAMPLE_URLS = ("sqlite:///PATH.db", "postgresql+psycopg://USER@HOST/DATABASE")
_EXAMPLE_PATH = "sqlite:////home/ada/library.db"
"""The examples the library's messages give of a URL: advice, not the server's library."""
_PATH_ADVICE = "sqlite:/// followed by the path"
"""The URL for a bare file path, as the app's visitors read it (without the server's path)."""
_URL_LEFT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"(),;]")
_PATH_LEFT = re.compile(r"(?<![\w.:/~\\-])~?/[^\s/'\"]+|\b[A-Za-z]:\\")
_IP_ADDRESS = re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w.])|\[[0-9A-Fa-f:]+\]")


def hide_location(text: str, url: str, typed: Iterable[str] = ()) -> str | None:
    """A library message (of the library at `url`) fit for someone who may not see where the
    library is: the app's visitors. Its URL, file, folder and server's host are named
    APP_LIBRARY (or the library file, its folder, the database server) and any password hidden.

    None where a URL or an absolute path is still left after that (a driver's message quoting
    another form of it): the caller then shows a message of its own and logs this one. `typed`:
    texts the visitor typed (a tag, a name), which the message may quote back ('...') however
    much they look like a path ("tag 'q3 </b>'" holds "/b>'").
    """
    forms = _location_forms(url)
    out = text
    for form in forms["urls"]:
        # the URL a bare file path asks for (`_looks_like_path`): the advice without the path
        out = out.replace(f"sqlite:///{form}", _PATH_ADVICE)
        for quoted in (repr(form), form):
            out = out.replace(f" = {quoted}", "")  # ECON_LIBRARY = URL: ... -> ECON_LIBRARY: ...
            out = out.replace(f"library {quoted}", APP_LIBRARY)
            out = out.replace(quoted, APP_LIBRARY)
    for form in forms["folders"]:
        out = _replace_word(out, f"folder {form}", "the library file's folder")
    for form in forms["files"]:
        out = _replace_word(out, form, "the library file")
    for form in forms["folders"]:
        out = _replace_word(out, form, "the library file's folder")
    for host in forms["hosts"]:
        out = re.sub(rf"(?<![\w.-]){re.escape(host)}(?![\w-])", "the database server", out)
    out = hide_credentials(_IP_ADDRESS.sub("the database server", out))
    masked = out.replace(_EXAMPLE_PATH, "").replace(_PATH_ADVICE, "")
    for example in _EXAMPLE_URLS:
        masked = masked.replace(example, "")
    for said in typed:  # where the message quotes it (as typed, not a part of it)
        masked = masked.replace(repr(said), "")
    if _URL_LEFT.search(masked) or _PATH_LEFT.search(masked):
        return None
    return out


def _replace_word(text: str, form: str, said: str) -> str:
    """`form` replaced where it stands whole (not inside a longer name or path)."""
    return re.sub(rf"(?<![\w./~-]){re.escape(form)}(?![\w/-])", said, text)


def _location_forms(url: str) -> dict[str, list[str]]:
    """The texts a message may name the library at `url` by, each kind longest first."""
    urls = {url, hide_credentials(url)}
    files: set[str] = set()
    hosts: set[str] = set()
    try:
        parsed = sa.engine.make_url(url)
    except (sa.exc.ArgumentError, ValueError):
        parsed = None
    if parsed is not None:
        variants = [parsed]
        if parsed.drivername in ("postgresql", "postgres"):
            variants.append(parsed.set(drivername="postgresql+psycopg"))
        for variant in variants:
            for hide in (True, False):
                urls.add(hide_credentials(variant.render_as_string(hide_password=hide)))
        if parsed.host:
            hosts.add(parsed.host)
        database = parsed.database or ""
        if parsed.get_backend_name() == "sqlite" and database and database != ":memory:":
            path = Path(database).expanduser()
            urls.add(f"sqlite:///{database}")
            files |= {database, str(path), str(path.absolute()), _uri_path(path)}
            files.add(os.path.realpath(path))
    folders = {str(Path(f).parent) for f in files} - {".", "/", ""}
    urls.discard("")

    def longest_first(texts: set[str]) -> list[str]:
        return sorted((t for t in texts if t), key=len, reverse=True)

    return {
        "urls": longest_first(urls),
        "files": longest_first(files),
        "folders": longest_first(folders),
        "hosts": longest_first(hosts),
    }


def _describe(
    exc: sa.exc.SQLAlchemyError,
    display: str,
    doing: str,
    *,
    role: str | None = None,
    lock_timeout_s: float = PG_LOCK_TIMEOUT_S,
    file: Path | None = None,
    upgrading: str | None = None,
) -> str:
    """The message of a database failure: what failed, why, and what was expected (any password
    the driver quotes hidden). `file`: a SQLite library's file, whose folder and disk a message
    about writing it names. `upgrading`: said of a permission refused while an older library was
    being upgraded (which its owner makes, whatever a member is granted)."""
    return hide_credentials(
        _describe_raw(exc, display, doing, role, lock_timeout_s, file, upgrading)
    )


def _describe_raw(
    exc,
    display: str,
    doing: str,
    role: str | None,
    lock_timeout_s: float,
    file: Path | None,
    upgrading: str | None = None,
) -> str:
    original = getattr(exc, "orig", None) or exc
    detail = (str(original).strip().splitlines() or [type(original).__name__])[0]
    low = detail.lower()
    code = getattr(original, "sqlstate", None)
    where = f"library {display}"
    role = role or "YOUR_ROLE"
    if "database is locked" in low or "database table is locked" in low:
        return (
            f"{where}: {doing} failed: the library is locked by another process (waited for it); "
            "nothing was changed. Try again when the other econ finishes"
        )
    if code == "55P03" or "lock timeout" in low:
        holder = {
            "opening": "another econ is upgrading the library",
            "reading": "another session holds a lock on the library's tables that a read waits "
            "for (an upgrade altering them, or a LOCK TABLE, ALTER TABLE or VACUUM FULL)",
        }.get(doing, "another save holds the scenario (or one of the scenarios) being written")
        return (
            f"{where}: {doing} failed: {holder} and did not finish within {lock_timeout_s:g} s; "
            "nothing was changed. Try again when the other session finishes (a session left "
            "open in a transaction holds its locks until it ends)"
        )
    if code == "42501" or "permission denied" in low or "must be owner" in low:
        if upgrading is not None or "must be owner" in low:
            expected = (
                "the library's owner (the role that created its tables) to open it first with "
                "this econ, which upgrades the tables" + (f" ({upgrading})" if upgrading else "")
            )
        elif "schema" in low:
            expected = (
                "a role that may create tables in the database to open the library first: its "
                "owner after an econ upgrade; for a new library, the database's owner (from "
                "PostgreSQL 15 no other role may create tables in schema public unless granted "
                f"`GRANT CREATE ON SCHEMA public TO {role}`)"
            )
        else:
            expected = (
                "a role the library's owner has granted its tables and sequences: ask them for "
                f"`{'; '.join(member_grants(role))}` (the first alone to read)"
            )
        return (
            f"{where}: {doing} failed: {detail}; nothing was changed. Expected {expected} "
            f"({_TEAM_DOCS})"
        )
    if ("relation" in low and "does not exist" in low) or "no such table" in low:
        return (
            f"{where}: {doing} failed: {detail}; nothing was changed. Expected the tables of an "
            f"econ library ({', '.join(sorted(metadata.tables))}): restore the library from a "
            "backup, or point --library / ECON_LIBRARY at another library"
        )
    if "not a database" in low or "malformed" in low or "file is encrypted" in low:
        return (
            f"{where}: not a readable SQLite library ({detail}); the file was left untouched. "
            "Expected an econ library file: restore it from a backup or point --library / "
            "ECON_LIBRARY at another file"
        )
    if "unable to open database" in low or "readonly" in low:
        return _unwritable_file(
            where, doing, detail, file, getattr(original, "sqlite_errorname", "")
        )
    if display.startswith("sqlite"):  # the library is a file: no server to blame
        if "disk is full" in low or "no space" in low:
            cause = "the disk holding the library file is full"
            expected = "free space on that disk (or a library file on another disk)"
        elif "disk i/o" in low or "i/o error" in low:
            cause = "the library file could not be read or written (a disk I/O error)"
            expected = "a library file on a working, writable disk"
        else:
            cause = "SQLite could not use the library file"
            expected = "a readable, writable library file in a folder econ may write to"
        return (
            f"{where}: {doing} failed: {cause} ({detail}); nothing was changed. Expected {expected}"
        )
    if isinstance(exc, sa.exc.OperationalError | sa.exc.InterfaceError):
        failure = _connection_failure(detail)
        if failure is not None:
            cause, expected = failure
            return f"{where}: {doing} failed: {cause}; nothing was changed. Expected {expected}"
        return (
            f"{where}: {doing} failed: cannot reach or use the database server ({detail}); "
            "nothing was changed. Expected a running PostgreSQL server that accepts this user"
        )
    return f"{where}: {doing} failed: {detail}; nothing was changed"


_SERVER_AT = re.compile(
    r"^(?:connection failed: |connection is bad: )?connection to server "
    r"(?:on socket \"[^\"]*\"|at \"[^\"]*\"(?: \([^)]*\))?, port \d+) failed: "
)
"""How libpq starts a failed connection's message: where it tried (the server's socket file or
host and address), which a message of econ's does not repeat (the app may not show it)."""
_REFUSED_LOGIN = (
    ("password authentication failed", "password authentication failed"),
    ("no password supplied", "no password was given"),
    ("authentication failed", "authentication failed"),
    ("pg_hba.conf", "the server's pg_hba.conf admits no such connection"),
    ("is not permitted to log in", "the role may not log in"),
    ("role", "no such role"),  # role "x" does not exist
)
"""A login the server refused: (what its message says, said without the user's name)."""
_NO_ANSWER = (
    ("connection refused", "connection refused: nothing listens at the host and port"),
    ("no such file or directory", "no server socket in that folder"),
    ("timeout expired", "no answer in time"),
    ("timed out", "no answer in time"),
    ("failed to resolve host", "the host name is not known"),
    ("could not translate host name", "the host name is not known"),
    ("network is unreachable", "the network is unreachable"),
    ("no route to host", "no route to the host"),
)
"""A server that did not answer: (what the driver's message says, what econ says)."""


def _connection_failure(detail: str) -> tuple[str, str] | None:
    """(cause, what was expected) of a PostgreSQL connection that failed, told apart without
    naming where the server is or who logged in (the app shows the message to visitors who may
    not know either): a login the server refused (a wrong password, no such role, pg_hba.conf),
    a database it does not hold, a server that does not answer; None for any other failure."""
    reason = _SERVER_AT.sub("", detail.removeprefix("connection failed: "))
    low = reason.lower()
    if "no password supplied" in low and "fatal:" not in low:  # (libpq's fe_sendauth: ...)
        return (
            "the database server refused the login (it asks for a password, and none was given)",
            "the role's password: in the library URL (USER:PASSWORD@HOST, an '@' in it "
            "written %40), in PGPASSWORD, or in the .pgpass file of the home folder (or "
            "PGPASSFILE's), a line HOST:PORT:DATABASE:USER:PASSWORD",
        )
    if "fatal:" in low:
        said = low.split("fatal:", 1)[1].strip()
        if "database" in said and "does not exist" in said:
            return (
                "the database server holds no database of the name the library URL gives",
                "the database named in the library URL, created on that server (CREATE "
                'DATABASE; docs/library.md, "A team on PostgreSQL")',
            )
        for words, why in _REFUSED_LOGIN:
            if words in said and (words != "role" or "does not exist" in said):
                return (
                    f"the database server refused the login ({why})",
                    "the user and password of a role the server admits, given in the library "
                    "URL, the .pgpass file or PGPASSWORD",
                )
        return None
    for words, why in _NO_ANSWER:
        if words in low:
            return (
                f"cannot reach the database server: it does not answer ({why})",
                "a running PostgreSQL server at the host and port (or socket folder) the "
                "library URL names",
            )
    return None


def _unwritable_file(where: str, doing: str, detail: str, file: Path | None, code: str) -> str:
    """The message of a SQLite library file that could not be opened or written, naming what is
    in the way as far as it can be told: a disk mounted read-only, a folder econ may not write
    (where a new file is made, and where SQLite writes its journal beside the file), the file's
    own mode; SQLite's error alone says "readonly database" for each of them."""
    if file is None:  # (no file known: SQLite's reason as it gives it)
        return f"{where}: {doing} failed: {detail}; expected a readable, writable library file"
    folder = file.parent
    exists = file.exists()
    if _read_only_disk(file if exists else folder):
        return (
            f"{where}: {doing} failed: the disk holding folder {folder} is read-only (mounted "
            f"read-only: {detail}); nothing was changed. Expected a library on a writable disk"
        )
    if not exists:
        cause = (
            f"the library file cannot be created in folder {folder}"
            if os.access(folder, os.W_OK | os.X_OK)  # (yet SQLite could not: say no more)
            else f"folder {folder} cannot be written, so the library file cannot be created in it"
        )
        return (
            f"{where}: {doing} failed: {cause} ({detail}); nothing was changed. Expected a "
            "folder econ may write to (or a library file in another folder)"
        )
    if "readonly" not in detail.lower():  # an existing file that cannot be opened at all
        return (
            f"{where}: {doing} failed: cannot open the file ({detail}); expected a readable, "
            "writable library file"
        )
    if code == "SQLITE_READONLY_DIRECTORY" or (
        os.access(file, os.W_OK) and not os.access(folder, os.W_OK | os.X_OK)
    ):
        return (
            f"{where}: {doing} failed: folder {folder} cannot be written (SQLite writes its "
            f"journal beside the library file: {detail}); nothing was changed. Expected the "
            "library file's folder writable too"
        )
    if not os.access(file, os.W_OK):
        return (
            f"{where}: {doing} failed: the file is read-only; nothing was changed. Expected a "
            "writable library file"
        )
    return (
        f"{where}: {doing} failed: the library is read-only to econ ({detail}); nothing was "
        "changed. Expected a writable library file, in a folder and on a disk econ may write to"
    )


def _read_only_disk(path: Path) -> bool:
    """Whether the file system holding `path` is mounted read-only (False when that cannot be
    told)."""
    try:
        return bool(os.statvfs(path).f_flag & getattr(os, "ST_RDONLY", 0))
    except (OSError, AttributeError):
        return False


_KINDS = {
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFLNK: "a symbolic link",
}


def _make_folder(folder: Path) -> list[Path]:
    """Create `folder` and its missing parents; the folders made, outermost first (none when it
    exists). LibraryError naming the folder when one cannot be made."""
    missing = []
    for path in (folder, *folder.parents):
        if path.is_dir():
            break
        missing.append(path)
    made: list[Path] = []
    for path in reversed(missing):
        try:
            path.mkdir()
        except FileExistsError:
            if path.is_dir():  # (made meanwhile by someone else: theirs, not removed)
                continue
            why = "a file of that name is in the way"
        except OSError as exc:
            why = exc.strerror or str(exc)
        else:
            made.append(path)
            continue
        for done in reversed(made):
            with contextlib.suppress(OSError):
                done.rmdir()
        raise LibraryError(
            f"{folder}: cannot create the folder ({path}: {why}); expected a folder to export "
            "to, or one econ may create; nothing was written"
        )
    return made


def export_text(name: str, version: int, text: str) -> str:
    """What `export` writes for version `version` of `name`: the first line `show` writes,
    `# econ library: NAME@V`, then the stored text exactly, so that an export edited and imported
    with --update (or saved) is refused when NAME has a newer version than V, as a copy `show`
    wrote is (`split_header`). A name the line cannot carry (one holding '@' or a character that
    is not printable, stored before names were checked) gets the text alone."""
    line = f"{HEADER}{name}@{version}\n"
    if name.isprintable() and split_header(line + text) == (Ref(name, version), text):
        return line + text
    return text


_HEADER_BYTES = len(HEADER) + 4 * NAME_LENGTH + len("@999999999999\r\n")
"""The most bytes a first line `# econ library: NAME@V` takes (a name of NAME_LENGTH characters
of up to 4 bytes of UTF-8)."""


def _held(path: Path, data: bytes, text: bytes) -> str | None:
    """What the regular file `path` holds against what export would write there: None (no such
    file), "same" (exactly `data`), "text" (the stored `text` under another first line
    `# econ library: ...`, or under none), "other". Read without following a symbolic link or
    blocking on a FIFO, and never more than the longest of those, plus one byte; a file of
    another size is not read.

    LibraryError naming the file for anything but a regular file (a link, a FIFO, a device, a
    folder): export neither reads nor replaces those."""
    try:
        before = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LibraryError(
            f"{path}: cannot be read ({exc.strerror}); expected a readable scenario file "
            "(or none); nothing was written"
        ) from None
    kind = _KINDS.get(stat.S_IFMT(before.st_mode), "a special file")
    if not stat.S_ISREG(before.st_mode):
        raise LibraryError(
            f"{path}: {kind}, not a regular file; expected a scenario file that export may "
            "compare with the library and replace (it neither follows a link nor writes into a "
            "pipe or device); nothing was written. Remove it, or export to another folder"
        )
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:  # (replaced by a link or a FIFO since lstat: ELOOP, ENXIO)
        raise LibraryError(
            f"{path}: cannot be read ({exc.strerror}); expected a readable scenario file "
            "(or none); nothing was written"
        ) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        same_file = (info.st_dev, info.st_ino) == (before.st_dev, before.st_ino)
        if not (stat.S_ISREG(info.st_mode) and same_file):
            raise LibraryError(
                f"{path}: replaced while econ read it; nothing was written. Expected a regular "
                "scenario file; run export again"
            )
        longest = max(len(data), len(text) + _HEADER_BYTES)
        # a regular file's size is known without reading it
        if info.st_size != len(data) and not len(text) <= info.st_size <= longest:
            return "other"
        content = handle.read(longest + 1)
    if content == data:
        return "same"
    try:
        _, after = split_header(content.decode("utf-8"))
    except UnicodeDecodeError:
        return "other"
    return "text" if after.encode("utf-8") == text else "other"


def read_scenario_text(path: str | os.PathLike) -> str:
    """A scenario file's text, read by the reader of `econ validate` (econ.scenario.io.read_toml),
    whose errors name the file: missing, a folder, a device or FIFO, larger than 1 MB, not UTF-8,
    empty, bad TOML, nested too deeply. A UTF-8 byte-order mark is accepted and not kept: it marks
    the encoding, not the text. `library:NAME[@V]`, which names a stored version wherever a
    scenario is read, is refused here unless a file has that name: a stored version is saved
    again by `restore`, and read as "file not found" it sent the user looking for a file."""
    if str(path).startswith(PREFIX) and not os.path.lexists(path):
        ref = str(path).removeprefix(PREFIX)
        again = ref if "@" in ref else f"{ref}@V"
        raise LibraryError(
            f"{clipped(path)}: a version stored in the library, not a file; expected a scenario "
            f"TOML file to save (`econ library restore {clipped(again)}` saves a stored "
            "version again as the newest)"
        )
    read_toml(path)
    try:
        raw = read_bounded(Path(path), MAX_SCENARIO_BYTES, "a TOML scenario file")
        return raw.decode("utf-8-sig")
    except OSError as exc:
        raise LibraryError(f"{path}: cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError as exc:  # (changed since read_toml read it)
        raise ScenarioError(path, "", None, f"not UTF-8 text ({exc.reason})") from None


def other_header_note(origin, header: Ref, done: str) -> str:
    """The note for a file whose first line `# econ library: NAME@V` names another scenario than
    the file's `name` (a copy to be stored under a new name): the line is no base; `done` says
    what was done instead ('saved with no --base')."""
    return f"note: {origin}: its first line names {header}, not this file's scenario; {done}"


def _refuse_links_out(files: Sequence[Path], folder: Path) -> None:
    """LibraryError for a file of `folder` that is a symbolic link to a file outside it, before
    any file is read: import reads the folder's own files, and the message never quotes the
    target (its path or its content)."""
    root = Path(os.path.realpath(folder))
    for path in files:
        if root not in Path(os.path.realpath(path)).parents:
            raise LibraryError(
                f"{path}: a symbolic link to a file outside {folder}; nothing was imported. "
                f"Expected the folder's own scenario files (copy the file into {folder} to "
                "import it)"
            )


def _prepare(text: str, origin: str, *, restoring: bool = False) -> _Prepared:
    """A scenario text checked as `econ validate` checks a file (econ.scenario.io.parse_toml, the
    pydantic models, the required sections) and as a library scenario must be (no file paths, a
    `name` given: the default 'scenario' would gather every nameless file into one history; a
    stored text being restored keeps the name it was stored under, given or not)."""
    from econ.provenance import scenario_sha256

    text = text.removeprefix("\ufeff")  # as a file's is (read_text): the text is stored without
    if len(text) > MAX_SCENARIO_BYTES // 4 and len(text.encode("utf-8")) > MAX_SCENARIO_BYTES:
        raise ScenarioError(
            origin,
            "",
            None,
            f"larger than {MAX_SCENARIO_BYTES // (1024 * 1024)} MB; expected a TOML scenario (the "
            "largest scenario file econ reads)",
        )
    raw = parse_toml(text, origin)
    data = migrate(raw, origin)  # checked as today's fields, as `econ validate` checks a file
    scenario = validate_dict(data, file=origin)
    _refuse_files(data, origin)
    check_complete(data, origin)
    if "name" not in data and not restoring:
        raise ScenarioError(
            origin,
            "name",
            None,
            'not given; expected name = "..." in the file, the name the library keeps its '
            f"versions under (without one it would be saved as {scenario.name!r}, the default, "
            "as a new version of any other file saved without a name); nothing was saved",
        )
    # stored in NFC, so that 'Å' typed as one character or as 'A' + a ring is one name
    name = unicodedata.normalize("NFC", scenario.name)
    if len(name) > NAME_LENGTH:
        raise ScenarioError(
            origin, "name", name[:40] + "...", f"expected at most {NAME_LENGTH} characters"
        )
    if "@" in name:
        raise ScenarioError(
            origin,
            "name",
            name,
            "expected a name without '@': in the library '@' separates a name from its version "
            "(library:NAME@3), so this name's newest version could not be named",
        )
    problem = name_problem(name)
    return _Prepared(
        origin=origin,
        name_problem=None if problem is None else ScenarioError(origin, "name", name, problem),
        name=name,
        text=text,
        text_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        scenario_sha256=scenario_sha256(scenario),
        schema_version=file_version(raw, origin),
        hardware=scenario.fleet.hardware,
        model=_model_key(scenario),
    )


def _check_tags(values: Sequence[str] | str) -> list[str]:
    """The tags, sorted, once each; one str is one tag (not its letters)."""
    if isinstance(values, str):
        values = [values]
    elif not isinstance(values, Iterable):
        raise LibraryError(
            f"tags = {shortened(values)}: expected a list of labels (or one label as a str), "
            "e.g. ['board-2026q3']"
        )
    values = list(values)
    for tag in values:
        if not isinstance(tag, str):
            raise LibraryError(
                f"tag {shortened(tag)} ({type(tag).__name__}): expected a label as text, e.g. "
                "board-2026q3"
            )
        if not _TAG.match(tag) or len(tag) > TAG_LENGTH:
            raise LibraryError(
                f"tag {tag!r}: expected a label of letters, digits and . _ : / + - (at most "
                f"{TAG_LENGTH} characters, starting with a letter or digit), e.g. board-2026q3"
            )
    return sorted(set(values))


def _check_utf8(text: str, what: str) -> None:
    """LibraryError for what is not text a library can store, the same on SQLite and PostgreSQL:
    not a str; text that is not UTF-8 (bytes of another encoding on the command line reach Python
    as lone surrogates, '\\udc9b'); NUL (U+0000), which PostgreSQL refuses in text."""
    if not isinstance(text, str):
        raise LibraryError(f"{what} {shortened(text)} ({type(text).__name__}): expected text")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise LibraryError(
            f"{what} {_quoted(text)}: character {exc.start + 1} is a byte that is not UTF-8; "
            "expected UTF-8 text"
        ) from None
    if "\0" in text:
        raise LibraryError(
            f"{what} {_quoted(text)}: character {text.index(chr(0)) + 1} is U+0000 NULL, "
            "which a library cannot store (PostgreSQL refuses it in text); expected text "
            "without NUL characters"
        )


def _quoted(text: str) -> str:
    """A text for a message as `shortened` writes it (repr, cut), saying how long it is in the
    text's own characters: an author of 201 characters is '(201 characters)', not its repr's
    203 (the quote marks) or more (escapes)."""
    shown = repr(text)
    if len(shown) <= QUOTED_LIMIT:
        return shown
    return f"{shown[:QUOTED_LIMIT]}... ({len(text):,} characters)"


def _check_message(message: str) -> str:
    """A version's message: any UTF-8 text without NUL (free text, shown escaped: see
    econ.commands.library)."""
    _check_utf8(message, "message")
    return message


def _check_base(base: Any, new: Any) -> None:
    """LibraryError unless `base` is None or a version number (an int, not a bool or a str) and
    `new` a bool, not both given."""
    if not isinstance(new, bool):
        raise LibraryError(f"new = {shortened(new)} ({type(new).__name__}): expected True or False")
    if base is None:
        return
    if isinstance(base, bool) or not isinstance(base, int):
        raise LibraryError(
            f"base = {shortened(base)} ({type(base).__name__}): expected a version number, an "
            "int 1, 2, ... (the version the text was edited from), or None"
        )
    if base < 1:  # (a number beyond every stored version is "no version N", under the lock)
        raise LibraryError(f"--base {base}: expected a version number, 1, 2, ...")
    if new:
        raise LibraryError(
            f"--new with --base {base}: expected one of them (a new name, or the version "
            "the file was edited from)"
        )


def _check_author(author: str) -> str:
    """The author unless blank, too long or holding a control character: an author is replayed
    by `econ library history` to every user of a shared library, and an escape sequence in it
    would rewrite their terminal (the author comes from --author, ECON_AUTHOR, the PostgreSQL
    role or the login)."""
    _check_utf8(author, "author")
    shown = _quoted(author)
    if not author.strip() or len(author) > NAME_LENGTH:
        raise LibraryError(f"author {shown}: expected a name of 1 to {NAME_LENGTH} characters")
    try:
        check_name(author)
    except ValueError as exc:
        raise LibraryError(f"author {shown}: {exc}") from None
    return author


def _file_stem(name: str, seen: set[str]) -> str:
    """A file name for a scenario name, the same whatever else the library holds: the name
    itself where it is one (letters of any script, digits, '.', '_', '-') and fits
    FILE_NAME_BYTES with '.toml'; otherwise its safe characters, the others as '-', cut to fit
    by bytes (UTF-8: 200 Han characters are 600 bytes) and 8 hex digits of the name's SHA-256,
    so that "a/b" and "a:b", or two long names alike in their first 240 bytes, keep their own
    files as names come and go. A clash left (only of a name spelled as another's stem and
    hash) gets -2, -3, ..."""
    room = FILE_NAME_BYTES - len(".toml")
    stem = re.sub(r"[^\w.-]+", "-", name).strip("-.") or "scenario"
    if stem != name or len(stem.encode("utf-8")) > room:
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
        stem = f"{_cut_bytes(stem, room - len(digest) - 1)}-{digest}"
    candidate, n = stem, 1
    while candidate.lower() in seen:
        n += 1
        suffix = f"-{n}"
        candidate = _cut_bytes(stem, room - len(suffix)) + suffix
    seen.add(candidate.lower())
    return candidate


def _cut_bytes(text: str, limit: int) -> str:
    """`text` cut to at most `limit` bytes of UTF-8, at a character's end."""
    return text.encode("utf-8")[:limit].decode("utf-8", "ignore")
