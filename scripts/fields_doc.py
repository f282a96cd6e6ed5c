"""Write docs/fields.md, the reference of every scenario field, from the pydantic models.

    .venv/bin/python scripts/fields_doc.py [--check]

Each field's path, type, unit, default, allowed range and description come from the models
(`econ.scenario`), its label from econ.labels, as the app labels it; nothing about a field is typed
here. With --check, exit 1 instead of writing when docs/fields.md differs from what the models give
(tests/test_fields_doc.py runs it).
"""

from __future__ import annotations

import datetime as dt
import inspect
import json
import re
import sys
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere: this checkout's econ
    sys.path.insert(0, str(ROOT))

from econ.labels import FIELD_LABELS, SHOWN_UNITS, field_label, humanize, plain_number  # noqa: E402
from econ.library.diff import unit_of  # noqa: E402
from econ.scenario import Scenario  # noqa: E402
from econ.scenario.models import (  # noqa: E402
    MAX_VINTAGES,
    REQUIRED_SECTIONS,
    SECTIONS,
    VINTAGE_SECTIONS,
)
from econ.scenario.section import NONE_WORD, field_bounds, none_word_fields  # noqa: E402

TARGET = ROOT / "docs" / "fields.md"
_SHOWN_UNIT = re.compile(r" \[[^\[\]]+\]$")
"""The unit a label ends with ("Custom [%]"): the page gives units a column of their own."""

EXAMPLE: dict[str, Any] = {
    "name": "my-first-scenario",
    "start_date": dt.date(2026, 4, 1),
    "fleet": {"hardware": "gb200-nvl72", "gpu_count": 72, "gpus_per_rack": 72},
    "throughput": {"tokens_per_s_per_gpu": 4867.7},
    "capex": {"system_price_usd": 3_100_000.0, "gpus_per_system": 72},
    "power": {"kw_per_gpu": 1.87, "price_usd_per_kwh": 0.0806},
    "facility": {
        "colo_usd_per_kw_month": 194.95,
        "rack_cooling": "liquid",
        "hall_cooling": "liquid",
    },
    "market": {"price_usd_per_mtok": 0.3261, "price_decline_annual": 0.3},
    "sources": {
        "throughput.tokens_per_s_per_gpu": "MLPerf Inference v6.0 closed, CoreWeave GB200 NVL72, "
        "deepseek-r1 Server, per GPU (models/scenarios/deepseek-r1-gb200-nvl72.toml)",
        "capex.system_price_usd": "GB200 NVL72 rack, SemiAnalysis via secondary, 2025-2026",
        "facility.colo_usd_per_kw_month": "CBRE North America H2 2025 (via secondary)",
    },
}
"""The minimal scenario the page shows: the seed case's fleet, throughput, capex, power, hall and
token price (models/scenarios/deepseek-r1-gb200-nvl72.toml, whose [sources] cite each) with every
other field at its default; liquid-cooled, as GB200 NVL72 racks are, so that `econ validate`
warns of nothing. The test validates and projects the page's copy."""


@dataclass(frozen=True)
class Row:
    path: str
    label: str
    kind: str
    unit: str
    default: str
    allowed: str
    description: str


@dataclass(frozen=True)
class Table:
    """One TOML table of the file: its heading, what it is, and its fields."""

    path: str
    title: str
    header: str
    tag: str
    about: str
    rows: tuple[Row, ...]
    depth: int

    @property
    def heading(self) -> str:
        if not self.path:
            return self.title
        tag = f" with `{self.tag}`" if self.tag else ""
        return f"{self.title}: `{self.header}`{tag}"


def _unwrap(annotation) -> tuple[Any, bool]:
    """(annotation without `| None`, whether None is allowed)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) < len(typing.get_args(annotation)):
            rest = args[0] if len(args) == 1 else typing.Union[tuple(args)]  # noqa: UP007
            return rest, True
    return annotation, False


def _models(annotation) -> list[type[BaseModel]]:
    """The section models of an annotation: one, or the members of a union (a tranche's kinds)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if typing.get_origin(annotation) in (tuple, list, dict):
        return []
    return [m for arg in typing.get_args(annotation) for m in _models(arg)]


def _item(annotation):
    """The item type of a list annotation (`tuple[X, ...]`), else None."""
    if typing.get_origin(annotation) in (tuple, list):
        args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        return args[0] if len(args) == 1 else None
    return None


def _nested(annotation) -> bool:
    """Whether a field holds a table or a list of tables."""
    inner, _ = _unwrap(annotation)
    item = _item(inner)
    return bool(_models(inner)) or (item is not None and bool(_models(item)))


def _literal(value: Any) -> str:
    """A value as a TOML file writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _kind(annotation, model: type[BaseModel], name: str) -> str:
    """The type of a field in words, with its choices."""
    inner, _ = _unwrap(annotation)
    origin = typing.get_origin(inner)
    if origin is Literal:
        choices = [_literal(c) for c in typing.get_args(inner)]
        text = choices[0] if len(choices) == 1 else "one of " + ", ".join(choices)
    elif _models(inner):
        text = "table"
    elif _item(inner) is not None:
        item = _item(inner)
        text = "list of tables" if _models(item) else f"list of {_kind(item, model, name)}s"
    elif origin is dict:
        value = typing.get_args(inner)[1]
        text = {str: "table of text", float: "table of numbers"}.get(value, "table")
    else:
        text = {
            bool: "true or false",
            int: "whole number",
            float: "number",
            str: "text",
            dt.date: "date",
        }[inner]
    if name in none_word_fields(model):
        text += f' or "{NONE_WORD}"'
    return text


def _default(model: type[BaseModel], name: str) -> str:
    info = model.model_fields[name]
    if info.is_required():
        return "required"
    value = info.default if info.default_factory is None else info.default_factory()
    if value is None:
        return "not set"
    if isinstance(value, BaseModel):
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return plain_number(value)
    return _literal(value)


def _allowed(model: type[BaseModel], name: str) -> str:
    """The field's range and length limits as pydantic declares them."""
    bounds = field_bounds(model, name)
    sign = {"ge": "≤", "gt": "<", "le": "≤", "lt": "<"}
    low = "".join(f"{plain_number(v)} {sign[b]} " for b, v in bounds.items() if b[0] == "g")
    high = "".join(f" {sign[b]} {plain_number(v)}" for b, v in bounds.items() if b[0] == "l")
    parts = [f"{low}x{high}"] if bounds else []
    info = model.model_fields[name]
    inner, _ = _unwrap(info.annotation)
    words = "characters" if inner is str else "items"
    for constraint in info.metadata:
        least = getattr(constraint, "min_length", None)
        most = getattr(constraint, "max_length", None)
        pattern = getattr(constraint, "pattern", None)
        if least:
            parts.append("not empty" if least == 1 else f"at least {least} {words}")
        if most:
            parts.append(f"at most {most} {words}")
        if pattern:
            parts.append(f"matches `{pattern}`")
    return "; ".join(parts)


def _unit(path: str) -> str:
    unit = unit_of(path) or ""
    return "" if unit == "1" else SHOWN_UNITS.get(unit, unit)


def _label(path: str, name: str, unit: str) -> str:
    """The field's label as the app shows it, without the unit (its own column here)."""
    if path in FIELD_LABELS:
        return FIELD_LABELS[path]
    return _SHOWN_UNIT.sub("", field_label(name, unit))


def _description(info, unit: str) -> str:
    """The field's description without its unit in brackets (the unit has a column)."""
    text = " ".join((info.description or "").split())
    raw = [u for u, shown in SHOWN_UNITS.items() if shown == unit] + [unit, "1"]
    for each in raw:
        if f"[{each}]" in text:
            head, _, tail = text.rpartition(f"[{each}]")
            text = (head.rstrip() + tail).strip()
            break
    return text.replace("|", "\\|")


def _tag(model: type[BaseModel]) -> str | None:
    """The field naming a union member's kind (`type`, `kind`): a Literal of one value."""
    for name, info in model.model_fields.items():
        args = typing.get_args(info.annotation)
        if typing.get_origin(info.annotation) is Literal and len(args) == 1:
            return name
    return None


def _discriminator(annotation, metadata) -> Any:
    """How a union picks its member: a field's name (pydantic's discriminator, which the file must
    give) or a function (`pydantic.Discriminator`, which may pick a member for a table without
    it); None for no union."""
    for item in [*metadata, *typing.get_args(annotation)]:
        found = getattr(item, "discriminator", None)
        if found is not None:
            return found
    return None


def _about(model: type[BaseModel]) -> str:
    """The first paragraph of a section model's own docstring."""
    doc = model.__dict__.get("__doc__")
    return " ".join(inspect.cleandoc(doc).split("\n\n")[0].split()) if doc else ""


def _rows(model: type[BaseModel], prefix: str, pick=None) -> Iterator[Row | Table]:
    """A table's rows, then the tables inside it (sub-sections, lists of tables, union members).
    `pick` is how a union picks this member, for its tag's row."""
    tables: list[Table] = []
    tag = _tag(model) if pick is not None else None
    names = sorted(model.model_fields, key=lambda name: name != tag)  # the tag first
    for name in names:
        info = model.model_fields[name]
        path = f"{prefix}{name}"
        inner, _ = _unwrap(info.annotation)
        item = _item(inner)
        unit = "" if _nested(inner) else _unit(path)
        row = Row(
            path,
            _label(path, name, unit),
            _kind(info.annotation, model, name),
            unit,
            _default(model, name),
            _allowed(model, name),
            _description(info, unit),
        )
        if not row.description and _models(inner):  # a sub-section: what its model says
            row = replace(row, description=" / ".join(_about(m) for m in _models(inner)))
        if name == tag:
            value = typing.get_args(info.annotation)[0]
            chosen = callable(pick) and pick({}) == value  # the member a table without a tag is
            row = replace(
                row,
                default=_literal(value) if chosen else "required",
                description=f"The kind of this table: {humanize(str(value)).lower()}",
            )
        yield row
        if _models(inner):
            tables += _tables(inner, info, path)
        elif item is not None and _models(item):
            members = _models(item)
            inline = len(members) == 1 and not any(
                _nested(f.annotation) for f in members[0].model_fields.values()
            )
            if inline:  # small tables written inline: their fields follow the list's row
                yield from _rows(members[0], f"{path}[].")
            else:
                tables += _tables(item, info, f"{path}[]")
    yield from tables


def _tables(annotation, info, path: str) -> list[Table]:
    """The tables of a sub-section or a list of tables: one, or one per union member."""
    members = _models(annotation)
    pick = _discriminator(annotation, info.metadata) if len(members) > 1 else None
    bare = path.replace("[]", "")
    header = f"[[{bare}]]" if path.endswith("[]") else f"[{bare}]"
    out, inside = [], []
    for member in members:
        tag = _tag(member) if pick is not None else None
        value = typing.get_args(member.model_fields[tag].annotation)[0] if tag else None
        title = humanize(str(value) if tag else bare.rpartition(".")[2])
        about = _about(member) or " ".join((info.description or "").split())
        rows, inner = [], []
        for entry in _rows(member, f"{path}.", pick):
            (rows if isinstance(entry, Row) else inner).append(entry)
        depth = path.count(".") + 1
        tag_text = f"{tag} = {_literal(value)}" if tag else ""
        out.append(Table(path, title, header, tag_text, about, tuple(rows), depth))
        inside += inner
    return out + inside  # every kind, then the tables inside them


def tables() -> list[Table]:
    """Every table of a scenario file, in file order: the top-level keys, each section with the
    tables inside it, then the vintages; a table met twice (a loan's floating rate, in each kind
    of loan) once."""
    top = [row for row in _rows(Scenario, "") if isinstance(row, Row) and "." not in row.path]
    top = [row for row in top if row.path not in (*SECTIONS, "vintages")]
    out = [Table("", "Top-level keys", "", "", _TOP, tuple(top), 1)]
    for name in SECTIONS:
        info = Scenario.model_fields[name]
        out += _tables(info.annotation, info, name)
    info = Scenario.model_fields["vintages"]
    out += _tables(_item(info.annotation), info, "vintages[]")
    seen, unique = set(), []
    for table in out:
        if (table.path, table.tag) not in seen:
            seen.add((table.path, table.tag))
            unique.append(table)
    return unique


_TOP = "Keys written before the first section's header: what the scenario is and when it starts."


def _table_lines(table: Table, links: dict[str, str]) -> list[str]:
    level = "#" * min(table.depth + 1, 4)
    lines = [f"{level} {table.heading}", ""]
    if table.about:
        lines += [table.about, ""]
    if table.path == "vintages[]":
        lines += [_VINTAGES, ""]
    lines += [
        "| field | label | type | unit | default | allowed | description |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in table.rows:
        kind = r.kind
        target = links.get(r.path) or links.get(f"{r.path}[]")
        if target and target != table.heading:
            kind = f"[{kind}](#{_anchor(target)})"
        cells = [f"`{r.path}`", r.label, kind, r.unit, r.default, r.allowed]
        lines.append("| " + " | ".join([*cells, r.description]) + " |")
    return [*lines, ""]


_VINTAGES = (
    "Each of its tables (`"
    + "`, `".join(VINTAGE_SECTIONS)
    + "`) takes the fields of the scenario's section of the same name, listed above, "
    "e.g. `vintages[].fleet.gpu_count` is a `fleet.gpu_count`. A scenario holds at most "
    f"{MAX_VINTAGES} vintages (`econ.scenario.models.MAX_VINTAGES`): one GPU generation a year "
    "over the longest horizon, 600 months."
)


def _example() -> str:
    """The minimal scenario as TOML, each field with its label and unit as a comment."""
    lines = []
    rows = {r.path: r for t in tables() for r in t.rows}
    for key, value in EXAMPLE.items():
        if not isinstance(value, dict):
            lines.append(_commented(f"{key} = {_literal(value)}", rows[key]))
    for key, value in EXAMPLE.items():
        if isinstance(value, dict):
            lines += ["", f"[{key}]"]
            for name, item in value.items():
                text = f'"{name}"' if key == "sources" else name
                row = rows.get(f"{key}.{name}")
                line = f"{text} = {_literal(item)}"
                lines.append(_commented(line, row) if row else line)
    return "\n".join(lines)


def _commented(line: str, row: Row) -> str:
    note = f"{row.label} [{row.unit}]" if row.unit else row.label
    return f"{line:<40} # {note}"


def render() -> str:
    everything = tables()
    required = ", ".join(f"`[{name}]`" for name in REQUIRED_SECTIONS)
    lines = [
        "# Scenario fields",
        "",
        "*Generated by `scripts/fields_doc.py` from the scenario models (`econ/scenario/`); "
        "edit the models' descriptions, not this page, and run "
        "`.venv/bin/python scripts/fields_doc.py`.*",
        "",
        "Every input a scenario file takes: its path, the label the app gives it, its type, unit, "
        "default, the range econ accepts and what it means (with the source of a typical value "
        "where the model cites one). `econ schema` prints the same fields as a JSON schema, for "
        "editors and scripts. Beyond one field's range, econ refuses combinations that cannot "
        "describe a fleet (two fields that say the same thing, a price table beside a price, "
        "a file outside the scenario's folder): [inputs.md](inputs.md) lists what it refuses and "
        "what a null result means; [glossary.md](glossary.md) defines the names.",
        "",
        "## How a scenario file is laid out",
        "",
        "A scenario is a [TOML](https://toml.io) file. A few keys at the top say what the "
        "scenario is and when it starts; every other input sits in a section, a TOML table under "
        "a header such as `[capex]`. A field is named here by its dotted path: "
        "`capex.gpu_price_usd` is the key `gpu_price_usd` under `[capex]`, and the same path "
        "sets a value from the command line (`econ project FILE --set utilization.share=0.8`). "
        "A table inside a section has its own header (`[financing.covenants]`). A list of tables "
        "is written as blocks under a double-bracket header, one per item (`[[financing."
        "tranches]]`), or inline (`steps = [{ month = 5, gain = 0.198 }]`); its fields are "
        "shown as `financing.tranches[].name`. Where a table may be of several kinds (each tranche "
        "of a capital stack, a floating rate's index curve), its `type` or `kind` key says which, "
        "and each kind has its own table below.",
        "",
        f"A file must give the sections {required}; every other section, and every field whose "
        "default is not `required`, may be left out and takes its default, so a file says only "
        "what differs. A field whose default is `not set` may be left out: its description says "
        "what econ does without it. A field on by "
        f'default that takes `"{NONE_WORD}"` is turned off with it (TOML has no null): '
        f'`dscr_floor = "{NONE_WORD}"`.',
        "",
        "Units are in brackets in the models and in the unit column here. Money is nominal US "
        "dollars. A fraction is written as a decimal (0.07 for 7%; the app shows it as a "
        "percentage), `1/year` and `fraction/year` are annual rates written the same way, and "
        "months count from month 0, the purchase month. `[sources]` cites where each value comes "
        "from, keyed by its path.",
        "",
        "## A minimal scenario",
        "",
        "The seed case's fleet, throughput, capex, power, hall and token price "
        "(`models/scenarios/deepseek-r1-gb200-nvl72.toml`), every other field at its default. "
        "Save it as `first.toml`, then run `econ validate first.toml` and "
        "`econ project first.toml`. The costs it leaves out are 0 by default (staff, insurance, "
        "maintenance, SG&A: `[opex]`) and it borrows nothing (`[financing]`), so its results are "
        "before them; the seed case gives them.",
        "",
        "```toml",
        _example(),
        "```",
        "",
        "## Sections",
        "",
    ]
    links: dict[str, str] = {}
    for table in everything:
        links.setdefault(table.path, table.heading)
        if table.depth == 1 and table.path:
            lines.append(f"- [{table.title}](#{_anchor(table.heading)}): `{table.header}`")
    lines.append("")
    for table in everything:
        lines += _table_lines(table, links)
    return "\n".join(lines).rstrip("\n") + "\n"


def _anchor(title: str) -> str:
    """GitHub's anchor of a heading: lower case, spaces to hyphens, punctuation dropped."""
    kept = "".join(c for c in title.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def main(argv: list[str] | None = None) -> int:
    """Write docs/fields.md; with --check, exit 1 instead if the committed page is out of date."""
    args = sys.argv[1:] if argv is None else argv
    text = render()
    if "--check" in args:
        if TARGET.exists() and TARGET.read_text(encoding="utf-8") == text:
            return 0
        print(f"{TARGET.relative_to(ROOT)} is stale: run scripts/fields_doc.py", file=sys.stderr)
        return 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
