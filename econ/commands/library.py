"""`econ library ...`: the versioned scenario library (see docs/library.md).

    econ library save models/scenarios/deepseek-r1-gb200-nvl72.toml --message "v6.0 baseline" --tag q3
    econ library list [--tag T] [--hardware H] [--model M]
    econ library history NAME            econ library show NAME[@VERSION]
    econ library diff NAME@1 NAME@2      econ library restore NAME@1
    econ library export DIR [--force]    econ library import DIR [--update]
    econ library delete NAME             econ library migrate NAME@VERSION
    econ library upgrade                 (create the library, or upgrade its tables)

The library is `--library URL`, else ECON_LIBRARY, else the per-user SQLite file. Thin: every
command calls econ.library and prints a table or JSON (`--format json`). Exit 3 on a bad library,
name, version or file, with the reason and nothing changed.

`show` and `export` write a first line naming the version (`# econ library: NAME@V`); `save` and
`import` read that line as the version the file was edited from (an implicit --base) and store the
file's text after it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import unicodedata

from econ.commands import SCENARIO_FILE_HELP, Number, add_format, scenario_path
from econ.library import HEADER, LibraryError, default_path, parse_ref, split_header
from econ.text import printable

EXIT_OK = 0
MESSAGE_HELP = "what changed and why (default: none)"
AUTHOR_HELP = (
    "who saves (default: ECON_AUTHOR, else the PostgreSQL role connected, or on SQLite the login "
    "name; a name other than the role is stored with the role: 'ada (role bob)')"
)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "library",
        help="the versioned scenario library: save, list, history, show, diff, restore, ...",
        description="Keep every saved version of a team's scenarios (SQLite file by default, "
        f"{default_path()}; PostgreSQL when shared). Choose the library with --library URL or "
        "ECON_LIBRARY (sqlite:///PATH.db, postgresql+psycopg://USER@HOST/DB). Every command that "
        "takes a scenario file also takes library:NAME[@VERSION].",
    )
    commands = p.add_subparsers(dest="library_command", metavar="COMMAND", required=True)

    def add(name: str, help_text: str, run) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument(
            "--library",
            metavar="URL",
            default=argparse.SUPPRESS,
            help="library URL (default: ECON_LIBRARY, else the per-user SQLite file)",
        )
        add_format(sub, ("table", "json"))
        sub.set_defaults(run=run)
        return sub

    s = add("save", "save a scenario file as a new version of its name", _save)
    s.add_argument("file", metavar="FILE", help=SCENARIO_FILE_HELP)
    s.add_argument("--message", "-m", default="", help=MESSAGE_HELP)
    s.add_argument(
        "--tag",
        dest="tags",
        action="append",
        default=[],
        metavar="TAG",
        help="label the version (repeat for several)",
    )
    s.add_argument("--author", help=AUTHOR_HELP)
    s.add_argument(
        "--base",
        type=Number(int, what="a version number", ge=1),
        metavar="N",
        help="the version this file was edited from: refuse the save if another is now newest "
        "(default: the version named by the file's first line, '# econ library: NAME@N', which "
        "`econ library show` writes)",
    )
    s.add_argument(
        "--new",
        action="store_true",
        help="the file is a new scenario: refuse the save if the library holds its name",
    )

    ls = add("list", "list scenarios (newest version matching the filters)", _list)
    ls.add_argument("--tag", help="only versions with this tag")
    ls.add_argument("--hardware", help="only this hardware key (fleet.hardware)")
    ls.add_argument("--model", help="only this model key (e.g. deepseek-r1)")
    ls.add_argument("--deleted", action="store_true", help="include deleted scenarios")

    h = add("history", "every version of a scenario, oldest first", _history)
    h.add_argument("name", metavar="NAME", help="scenario name")

    sh = add(
        "show",
        "print a stored version's TOML as saved (control characters but CRLF line ends escaped), "
        "after a first line '# econ library: NAME@V' that `save` reads as --base V",
        _show,
    )
    sh.add_argument("ref", metavar="NAME[@VERSION]", help="scenario and version (default: newest)")

    d = add("diff", "input and metric changes between two versions", _diff)
    d.add_argument("old", metavar="NAME@A", help="the older version")
    d.add_argument("new", metavar="NAME@B", help="the newer version")

    r = add("restore", "save an old version again as the newest (undeletes)", _restore)
    r.add_argument("ref", metavar="NAME@VERSION", help="the version to restore")
    r.add_argument("--message", "-m", default="", help=MESSAGE_HELP)
    r.add_argument("--author", help=AUTHOR_HELP)

    t = add("tag", "label a saved version (it is not saved again; labels are only added)", _tag)
    t.add_argument("ref", metavar="NAME@VERSION", help="the version to label")
    t.add_argument("tags", metavar="TAG", nargs="+", help="labels, e.g. board-2026q3")

    e = add(
        "export",
        "write each scenario's newest version to DIR/NAME.toml, after a first line "
        "'# econ library: NAME@V' that `import` and `save` read as the version it came from",
        _export,
    )
    e.add_argument("folder", metavar="DIR", help="folder to write to")
    e.add_argument("--force", action="store_true", help="overwrite files that differ")

    i = add("import", "save DIR/*.toml into the library (never overwrites silently)", _import)
    i.add_argument("folder", metavar="DIR", help="folder of scenario TOML files")
    i.add_argument(
        "--update", action="store_true", help="save changed files as new versions of their names"
    )
    i.add_argument("--message", "-m", default="", help=MESSAGE_HELP)
    i.add_argument("--author", help=AUTHOR_HELP)

    x = add("delete", "soft-delete a scenario (every version is kept)", _delete)
    x.add_argument("name", metavar="NAME", help="scenario name")
    x.add_argument("--author", help=AUTHOR_HELP)

    m = add("migrate", "save a stored version brought to today's schema as a new version", _migrate)
    m.add_argument("ref", metavar="NAME[@VERSION]", help="scenario and version (default: newest)")
    m.add_argument("--author", help=AUTHOR_HELP)

    add(
        "upgrade",
        "create the library's tables, or bring them to this econ's revision (on PostgreSQL, as "
        "the role that owns them); commands that only read never do",
        _upgrade,
    )


def _open(args, *, create: bool = False):
    """The library of --library / ECON_LIBRARY; `create`: for the commands that write (save,
    import, restore, delete, migrate, upgrade), which upgrade an older library and whose first
    write creates a new one; the commands that only read never write anything (a library that
    does not exist yet reads as empty; an older one is refused, naming `upgrade`)."""
    from econ.library import open_library

    return open_library(getattr(args, "library", None), create=create)


# Text stored by others (a message, a name saved before names were checked, a comment of a
# stored file) must not reach a terminal raw, where an escape sequence could rewrite the screen or
# an invisible character hide what a name is: one-line text is written with what Python does not
# count as printable as escapes (econ.text.printable, line=True), a stored file's text with its
# control characters and bidirectional overrides as escapes (`show`).


def _printable(text: str) -> str:
    """`text` as one printable line: ESC as \\x1b, U+2028 as \\u2028; ' ' is kept."""
    return printable(text, line=True)


def _json_escape(char: str) -> str:
    """A character as JSON's \\u escape (two, a surrogate pair, beyond U+FFFF)."""
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _json(payload) -> None:
    text = json.dumps(payload, indent=2, ensure_ascii=False, allow_nan=False)
    # the same JSON, with the unprintable characters json leaves raw written as \\u escapes (it
    # escapes U+0000-U+001F itself; the layout's newlines stay)
    if not text.isascii():
        text = "".join(_json_escape(c) if c > "\x7e" and not c.isprintable() else c for c in text)
    sys.stdout.write(text + "\n")


def _table(header: list[str], rows: list[list[str]]) -> str:
    cells = [header] + [["" if c is None else _printable(str(c)) for c in row] for row in rows]
    widths = [max(_width(r[i]) for r in cells) for i in range(len(header))]
    lines = [
        "  ".join(c + " " * (w - _width(c)) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _width(text: str) -> int:
    """Columns a terminal gives `text`: 2 for a wide or full-width character (East Asian Width W
    or F: '名', most emoji), 0 for a combining mark, 1 for any other (escapes are plain ASCII)."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def _saved(args, info, verb: str) -> int:
    if args.format == "json":
        _json(info.to_json())
    else:
        name = _printable(info.name)
        back = f"; {name} had been deleted, and is restored by this save" if info.undeleted else ""
        print(f"{verb} {name} version {info.version} (text sha256 {info.text_sha256[:12]}){back}")
    return EXIT_OK


def _save(args) -> int:
    # (the file read as Library.save_file reads it)
    from econ.library.store import other_header_note, read_scenario_text

    notes = []
    file = str(scenario_path(args.file))  # a ready-made scenario's name too
    with _open(args, create=True) as library:
        header, text = split_header(read_scenario_text(file))
        base, implicit = args.base, None
        if header is not None and args.base is None and not args.new:
            if header.name == _scenario_name(text):
                base = implicit = header.version
            else:
                notes.append(other_header_note(file, header, "saved with no --base"))
        try:
            info = library.save_text(
                text,
                origin=file,
                message=args.message,
                tags=args.tags,
                author=args.author,
                base=base,
                new=args.new,
            )
        except LibraryError as exc:
            if implicit is None or f"--base {implicit}: " not in str(exc):
                raise
            raise LibraryError(
                f"{exc}\n  (--base {implicit} is this file's first line, '{HEADER}{header}', "
                "which `econ library show` wrote: the version the file was edited from. A --base N "
                "given on the command line is used instead)"
            ) from None
        if base is None and not args.new and (note := library.unchecked_note(info, file)):
            notes.append(note)
    _saved(args, info, "saved")
    for note in notes:
        print(_printable(note), file=sys.stderr)
    return EXIT_OK


def _scenario_name(text: str) -> str | None:
    """The `name` of a scenario text (already read as TOML), as the library stores it (NFC)."""
    import tomllib

    name = tomllib.loads(text).get("name")
    return unicodedata.normalize("NFC", name) if isinstance(name, str) else None


def _version_rows(infos, *, with_name: bool) -> str:
    header = (["name"] if with_name else []) + [
        "version",
        "saved (UTC)",
        "author",
        "hardware",
        "model",
        "tags",
        "message",
    ]
    rows = [
        ([i.name + (" (deleted)" if i.deleted else "")] if with_name else [])
        + [
            i.version,
            i.created_utc,
            i.author,
            i.hardware,
            i.model,
            ",".join(i.tags),
            _line(i.message),
        ]
        for i in infos
    ]
    return _table(header, rows)


def _line(message: str) -> str:
    """A message's first line, for one table row (JSON keeps it whole)."""
    lines = message.splitlines()
    return lines[0] + (" ..." if len(lines) > 1 else "") if lines else ""


def _list(args) -> int:
    with _open(args) as library:
        infos = library.list(
            tag=args.tag, hardware=args.hardware, model=args.model, deleted=args.deleted
        )
    if args.format == "json":
        _json({"scenarios": [i.to_json() for i in infos]})
    elif infos:
        print(_version_rows(infos, with_name=True))
    elif not library.exists:
        print(f"no scenarios: {_printable(library.missing_note())}", file=sys.stderr)
    else:
        print("no scenarios match", file=sys.stderr)
    return EXIT_OK


def _history(args) -> int:
    with _open(args) as library:
        infos = library.history(args.name)
    if args.format == "json":
        _json({"name": args.name, "versions": [i.to_json() for i in infos]})
    else:
        print(_version_rows(infos, with_name=False))
        if infos and infos[-1].deleted:  # (the table alone read as a scenario still in use)
            last = f"{infos[-1].name}@{infos[-1].version}"
            note = (
                f"note: {infos[-1].name} is deleted, so library:{infos[-1].name} is refused; "
                f"{library.suggest('restore', last)} brings it back"
            )
            print(_printable(note), file=sys.stderr)
    return EXIT_OK


def _show(args) -> int:
    with _open(args) as library:
        stored = library.get(parse_ref(args.ref))
    if args.format == "json":
        _json({**stored.info.to_json(), "toml": stored.text})
    else:  # (a comment may hold a C1 control or a bidirectional override; JSON has the text)
        name = _printable(stored.info.name)  # (one line, whatever an old stored name holds)
        text = f"{HEADER}{name}@{stored.info.version}\n{stored.text}"
        # a CRLF is a line end, written as stored: a file saved with CRLF line ends shows as a
        # file TOML reads, which saved back unedited keeps its text_sha256; a CR alone is escaped
        sys.stdout.write("\r\n".join(printable(line) for line in text.split("\r\n")))
    return EXIT_OK


def _diff(args) -> int:
    from econ.library.diff import code_name, differs, input_changes, is_coded, metric_changes

    old_ref, new_ref = (
        parse_ref(args.old, need_version=True),
        parse_ref(args.new, need_version=True),
    )
    with _open(args) as library:
        old, new = library.load(old_ref), library.load(new_ref)
        inputs = input_changes(old, new)
        metrics = metric_changes(library.summary(old_ref), library.summary(new_ref))
    if args.format == "json":
        _json({"old": str(old_ref), "new": str(new_ref), "inputs": inputs, "metrics": metrics})
        return EXIT_OK
    rows = [
        [c["path"], *_cells([c["old"], c["new"]], money="USD" in (c["unit"] or "")), c["unit"]]
        for c in inputs
    ]
    print(f"inputs ({_printable(str(old_ref))} -> {_printable(str(new_ref))})")
    print(_table(["path", "old", "new", "unit"], rows) if rows else "  no input differs")
    print()
    print("metrics")
    rows = [
        [k, code_name(k, v["old"]), code_name(k, v["new"]), ""]  # (a code has no difference)
        if is_coded(k)
        else [k, *_cells([v["old"], v["new"], v["change"]], money="usd" in k, exact=False)]
        for k, v in metrics.items()
        if differs(k, v)
    ]
    print(_table(["metric", "old", "new", "change"], rows) if rows else "  no metric changes")
    return EXIT_OK


def _cell(value) -> str:
    if value is None:
        return "null"
    return json.dumps(value) if isinstance(value, list | dict) else str(value)


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _places(value: float) -> int:
    """Decimal places of the shortest text that reads back as `value` (Python's repr):
    0.079 -> 3, 310000.0 -> 0, 1e-07 -> 7."""
    if isinstance(value, int):
        return 0
    mantissa, _, exponent = repr(value).partition("e")
    return max(0, len(mantissa.partition(".")[2].rstrip("0")) - int(exponent or 0))


MAX_PLACES = 20
"""Decimal places beyond which a diff's numbers are written as Python writes them (1e-30)."""


def _cells(values: list, *, money: bool, exact: bool = True) -> list[str]:
    """A diff row's values (old, new[, change]) as text, numbers with thousands grouped and one
    number of decimal places for all: an input's (`exact`) as many as the value that needs most
    to be written exactly; a metric's six significant digits of the largest value; money at
    least cents; more while an old and a new that differ would read alike (310,000.4 and
    310,000 as 310,000.4 and 310,000.0). Trailing zeros every number has are dropped (down to
    cents for money)."""
    numbers = [v for v in values if _is_number(v)]
    if not numbers:
        return [_cell(v) for v in values]
    if exact:
        places = max(_places(v) for v in numbers)
    else:
        largest = max(abs(v) for v in numbers)
        places = max(0, 5 - math.floor(math.log10(largest))) if largest else 0
    floor = 2 if money else 0
    places = max(places, floor)
    if places > MAX_PLACES:
        return [repr(v) if _is_number(v) else _cell(v) for v in values]
    old, new = values[0], values[1]
    differ = _is_number(old) and _is_number(new) and old != new
    while True:
        texts = [f"{v:,.{places}f}" if _is_number(v) else _cell(v) for v in values]
        if not differ or texts[0] != texts[1]:
            break
        if places >= MAX_PLACES:
            return [repr(v) if _is_number(v) else _cell(v) for v in values]
        places += 1
    decimals = [t.partition(".")[2] for t, v in zip(texts, values, strict=True) if _is_number(v)]
    drop = min(min(len(d) - len(d.rstrip("0")) for d in decimals), max(0, places - floor))
    if not drop:
        return texts
    return [
        t[:-drop].rstrip(".") if _is_number(v) else t for t, v in zip(texts, values, strict=True)
    ]


def _restore(args) -> int:
    with _open(args, create=True) as library:
        info = library.restore(
            parse_ref(args.ref, need_version=True), message=args.message, author=args.author
        )
    return _saved(args, info, "restored as")


def _tag(args) -> int:
    with _open(args) as library:
        info = library.tag(parse_ref(args.ref, need_version=True), args.tags)
    if args.format == "json":
        _json(info.to_json())
    else:
        print(f"{_printable(info.name)}@{info.version} tagged: {_printable(', '.join(info.tags))}")
    return EXIT_OK


def _migrate(args) -> int:
    with _open(args, create=True) as library:
        info = library.migrate(parse_ref(args.ref), author=args.author)
    return _saved(args, info, "migrated as")


def _report(args, payload: dict[str, list[str]]) -> int:
    if args.format == "json":
        _json(payload)
    else:
        for kind, paths in payload.items():
            for path in paths:
                print(f"{kind}: {_printable(path)}")
    return EXIT_OK


def _export(args) -> int:
    with _open(args) as library:
        written = library.export(args.folder, force=args.force)
        if not any(written.values()):  # said on stderr: JSON on stdout stays as it is
            why = library.missing_note() if not library.exists else "the library holds none"
            print(f"no scenarios exported: {_printable(why)}", file=sys.stderr)
        return _report(args, written)


def _import(args) -> int:
    with _open(args, create=True) as library:
        report = library.import_folder(
            args.folder, update=args.update, message=args.message, author=args.author
        )
    payload = {
        "added": report.added,
        "updated": report.updated,
        "unchanged": report.unchanged,
        "restored": report.restored,  # (of the updated: a deleted scenario brought back)
    }
    code = _report(args, payload)
    for note in report.notes:  # (on stderr: the JSON on stdout stays as it is)
        print(_printable(note), file=sys.stderr)
    return code


def _delete(args) -> int:
    with _open(args, create=True) as library:
        library.delete(args.name, author=args.author)
        versions = library.history(args.name)
    last = versions[-1].version
    if args.format == "json":
        _json({"deleted": args.name, "versions_kept": len(versions)})
    else:
        from econ.labels import counted

        print(
            f"deleted {_printable(versions[-1].name)} ({counted(len(versions), 'version')} kept; "
            f"{library.suggest('restore', f'{versions[-1].name}@{last}')} brings it back)"
        )
    return EXIT_OK


def _upgrade(args) -> int:
    with _open(args, create=True) as library:
        before, now = library.upgrade()
    if args.format == "json":
        _json({"library": library.display, "previous_revision": before, "revision": now})
    elif before is None:
        print(f"created library {_printable(library.display)} at revision {now}")
    elif before != now:
        print(f"upgraded library {_printable(library.display)} from revision {before} to {now}")
    else:
        print(
            f"library {_printable(library.display)} is at revision {now}, this econ's: nothing to do"
        )
    return EXIT_OK
