"""`econ verify`: read a memo (HTML or PDF) or an exported workbook back, recompute its figures from
the scenario it embeds with this econ, and list every figure that differs.

What is checked. A memo: the stamp's econ version, catalog versions and scenario hash (against the
hash of the embedded TOML), the stamped summary and figures, and every figure the document shows
(the HTML's `data-key`/`data-value` elements and their text; a PDF's page text holds each shown
figure's text). An HTML memo must moreover be, character for character, the memo this econ renders
from its stamp: a reader sees what the browser draws, and a style rule, a script, a chart's text,
an image or a frame can draw a figure other than the text beside it, so anything econ does not
write is a difference (listed by the tokens that differ: tags, words, styles, scripts, chart text).
A PDF memo's pages must hold nothing drawn beyond their text that econ's print never holds (an
annotation, a second content stream, an image, a shape drawn over text already drawn, text drawn
invisible: `_page_additions`). A workbook
(econ.memo.workbook_check): its stamp, its Summary and Monthly sheets against a projection of the
scenarios its Notes sheet embeds, and everything else (labels, units, headers, the other sheets,
each cell's formula and number format) against the workbook econ writes again from them.

A file that is not what econ writes in form (a stamp field of the wrong type, a figure's data-value
that is not a number, a PDF or workbook that cannot be read) is NotAMemoError: exit 3, naming the
file and what was expected; a memo in the right form whose figures or text differ is exit 1.
So is a file larger than econ writes (MAX_MEMO_BYTES; a workbook: econ.memo.workbook_check), or
a stamp with more cases or tornado inputs than `econ memo` writes: each is projected again, and
the file is refused before that work; and a PDF whose pages cost more to walk than any memo
econ prints (`_Budget`: forms drawing forms, content streams decoding to many MB), read after
its stamp.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from econ import __version__
from econ.errors import InputError
from econ.files import ReadError, read_regular, reason
from econ.memo import render
from econ.memo.build import (
    MAX_CASES,
    MEMO_FORMAT,
    TORNADO_CANDIDATES,
    case_name_problem,
    case_too_large,
    compute,
    parse_montecarlo,
    repeated_path,
)
from econ.memo.figures import TORNADO_OUTPUT, figure_text
from econ.provenance import catalog_versions, scenario_sha256
from econ.scenario.errors import ScenarioError
from econ.scenario.io import MAX_FILE_BYTES
from econ.scenario.paths import path_fields
from econ.sources import HASH_CHARS
from econ.text import clipped

RELATIVE_TOLERANCE = 1e-9
"""Figures agree when within this relative difference (the engine is deterministic; the margin
absorbs summation order of BLAS builds, far below any shown digit)."""


MAX_MEMO_BYTES = MAX_FILE_BYTES
"""Bytes of a memo (HTML or PDF) read: a scenario file's limit (econ.scenario.io). A memo is
about 130 kB and the scenario it embeds (the largest ready-made one is under 20 kB)."""


class NotAMemoError(InputError):
    """The file is not an econ memo or workbook (or cannot be read as one)."""


def read_bounded(path: Path, limit: int, expected: str) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (econ.files.read_regular), or
    NotAMemoError naming the file and the limit (a FIFO or a device, a larger file)."""
    try:
        return read_regular(path, limit, expected)
    except ReadError as exc:
        raise NotAMemoError(str(exc)) from None
    except OSError as exc:
        raise NotAMemoError(
            f"{path}: cannot be read ({exc.strerror}); expected {expected}"
        ) from None


@dataclass
class Report:
    """The outcome of a verification: what was checked and what differs."""

    file: str
    kind: str
    checked: int = 0
    differences: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences


def agree(a, b) -> bool:
    """Same figure: both undefined, equal text, or numbers within RELATIVE_TOLERANCE."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        try:
            a, b = float(a), float(b)
        except OverflowError:  # (an integer beyond any float: a stamp's, never econ's figure)
            return a == b
        if not (math.isfinite(a) and math.isfinite(b)):
            return a == b
        return abs(a - b) <= RELATIVE_TOLERANCE * max(abs(a), abs(b), 1e-12)
    return a == b


def _compare(prefix: str, stamped, recomputed, out: list[str]) -> int:
    """Compare nested figures; returns how many leaves were checked."""
    if isinstance(stamped, dict) and isinstance(recomputed, dict):
        n = 0
        for key in sorted(set(stamped) | set(recomputed)):
            n += _compare(
                f"{prefix}.{key}" if prefix else key, stamped.get(key), recomputed.get(key), out
            )
        return n
    if isinstance(stamped, list) and isinstance(recomputed, list):
        if stamped != recomputed:
            out.append(f"{prefix}: stamped {stamped!r}, recomputed {recomputed!r}")
        return 1
    if not agree(stamped, recomputed):
        out.append(f"{prefix}: stamped {stamped!r}, recomputed {recomputed!r}")
    return 1


class _Figures(HTMLParser):
    """Collects the stamp script and the elements carrying data-key."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stamp_text: str | None = None
        self.figures: list[tuple[str, str, str]] = []  # key, data-value, text
        self._in_stamp = False
        self._open: list[list] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script" and attrs.get("id") == render.STAMP_ID:
            self._in_stamp, self.stamp_text = True, ""
        elif "data-key" in attrs:
            self._open.append([tag, attrs["data-key"], attrs.get("data-value", ""), ""])

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_stamp = False
        elif self._open and self._open[-1][0] == tag:
            _tag, key, value, text = self._open.pop()
            self.figures.append((key, value, text.strip()))

    def handle_data(self, data):
        if self._in_stamp:
            self.stamp_text += data
        elif self._open:
            self._open[-1][3] += data


class _Tokens(HTMLParser):
    """A document as tokens, to say where it differs from the memo econ renders: each word a
    reader sees (text outside scripts, styles, charts and the title) as ("word", text), and
    everything else as ("markup", text as written): a tag, a comment, a declaration, and each line
    of the text of a style, a script, a chart or the title. The stamp's JSON is one token: its
    values are checked one by one (`_recompute`)."""

    HIDDEN = ("script", "style", "svg", "title")

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tokens: list[tuple[str, str]] = []
        self._hidden = 0
        self._in_stamp = False

    def _markup(self, text: str) -> None:
        self.tokens.append(("markup", text))

    def handle_starttag(self, tag, attrs):
        self._markup(self.get_starttag_text() or f"<{tag}>")
        if tag == "script" and dict(attrs).get("id") == render.STAMP_ID:
            self._in_stamp = True
            self._markup("(the econ stamp)")
        if tag in self.HIDDEN:
            self._hidden += 1

    def handle_startendtag(self, tag, attrs):
        self._markup(self.get_starttag_text() or f"<{tag}/>")

    def handle_endtag(self, tag):
        self._markup(f"</{tag}>")
        if tag == "script":
            self._in_stamp = False
        if tag in self.HIDDEN and self._hidden:
            self._hidden -= 1

    def handle_data(self, data):
        if self._in_stamp:
            return
        if self._hidden:
            lines = (line.strip() for line in data.splitlines())
            self.tokens.extend(("markup", line) for line in lines if line)
        else:
            self.tokens.extend(("word", word) for word in data.split())

    def handle_comment(self, data):
        self._markup(f"<!--{data}-->")

    def handle_decl(self, decl):
        self._markup(f"<!{decl}>")

    def unknown_decl(self, data):
        self._markup(f"<![{data}]>")

    def handle_pi(self, data):
        self._markup(f"<?{data}>")


def _tokens(html_text: str) -> list[tuple[str, str]]:
    parser = _Tokens()
    parser.feed(html_text)
    parser.close()
    return parser.tokens


RECOMPUTED = "the memo recomputed from its stamp reads"
"""What a passage of text is compared with: the memo rendered again from the stamp, its figures
from the embedded scenario and its other texts (the creation time, the cases) from the stamp."""

TEXT_DIFFERENCES_SHOWN = 20
"""Passages of text that differ listed one by one; the rest are counted."""


def _compare_text(shown: list[str], expected: list[str], report: Report) -> None:
    """Every word of a PDF's text against the memo its stamp gives, in order: a figure,
    an input in Key assumptions, a sentence of the ask or a source edited anywhere (also where the
    same figure stands elsewhere unedited) is a difference, listed with the words before it."""
    import difflib

    report.checked += 1
    matcher = difflib.SequenceMatcher(a=shown, b=expected, autojunk=False)
    passages = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    for _, i1, i2, j1, j2 in passages[:TEXT_DIFFERENCES_SHOWN]:
        before = " ".join(expected[max(0, j1 - 6) : j1])
        report.differences.append(
            f"text after {before!r}: shown {' '.join(shown[i1:i2]) or '(nothing)'!r}, "
            f"{RECOMPUTED} {' '.join(expected[j1:j2]) or '(nothing)'!r}"
        )
    if len(passages) > TEXT_DIFFERENCES_SHOWN:
        report.differences.append(
            f"text: {len(passages) - TEXT_DIFFERENCES_SHOWN} more passages differ"
        )


DIFF_TOKENS_MAX = 20_000_000
"""Largest product of the differing tokens' counts diffed token by token (a few seconds); past
it the differing stretch is listed as one passage."""
PASSAGE_CHARS = 200
"""A passage listed is cut to this many characters."""


def _passage(tokens: list[tuple[str, str]]) -> str:
    text = " ".join(text for _, text in tokens)
    if len(text) > PASSAGE_CHARS:
        text = f"{text[:PASSAGE_CHARS]}... ({len(text) - PASSAGE_CHARS} more characters)"
    return text or "(nothing)"


def _differing(a: list, b: list) -> list[tuple[int, int, int, int]]:
    """The stretches (i1, i2, j1, j2) where a[i1:i2] differs from b[j1:j2]."""
    import difflib

    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    a_end, b_end = len(a) - tail, len(b) - tail
    if a_end == head and b_end == head:
        return []
    if (a_end - head) * (b_end - head) > DIFF_TOKENS_MAX:
        return [(head, a_end, head, b_end)]
    matcher = difflib.SequenceMatcher(a=a[head:a_end], b=b[head:b_end], autojunk=False)
    return [
        (head + i1, head + i2, head + j1, head + j2)
        for op, i1, i2, j1, j2 in matcher.get_opcodes()
        if op != "equal"
    ]


def _compare_document(shown: str, expected: str, stamp_as_written: bool, report: Report) -> None:
    """The whole HTML document against the memo econ renders from its stamp: equal, character for
    character (lines end as the file's own: a browser reads CR LF as LF too), or each passage that
    differs is listed: the words a reader sees ("text after ...") and any markup, style, script
    or chart text that is not econ's ("markup after ...")."""
    report.checked += 1
    if shown == expected:
        return
    a, b = _tokens(shown), _tokens(expected)
    passages = _differing(a, b)
    for i1, i2, j1, j2 in passages[:TEXT_DIFFERENCES_SHOWN]:
        words = [text for kind, text in b[max(0, j1 - 40) : j1] if kind == "word"]
        before = " ".join(words[-6:]) if words else _passage(b[max(0, j1 - 1) : j1])
        words_only = all(kind == "word" for kind, _ in a[i1:i2] + b[j1:j2])
        if words_only:  # (as the PDF's text is compared)
            report.differences.append(
                f"text after {before!r}: shown {_passage(a[i1:i2])!r}, {RECOMPUTED} "
                f"{_passage(b[j1:j2])!r}"
            )
        else:
            report.differences.append(
                f"markup after {before!r}: shown {_passage(a[i1:i2])!r}, econ renders "
                f"{_passage(b[j1:j2])!r} (a style, script, chart or element econ does not "
                "write can show a reader other figures)"
            )
    if len(passages) > TEXT_DIFFERENCES_SHOWN:
        report.differences.append(
            f"text: {len(passages) - TEXT_DIFFERENCES_SHOWN} more passages differ"
        )
    if not passages and not stamp_as_written:
        report.differences.append(
            "stamp: its JSON text is not as econ writes it (econ.memo.render.stamp_json: keys "
            "sorted, <, > and & escaped); its values are checked one by one"
        )
    elif not passages:  # the same tokens, written otherwise (spacing, quoting)
        k = next(
            (k for k, (x, y) in enumerate(zip(shown, expected, strict=False)) if x != y),
            min(len(shown), len(expected)),
        )
        line = shown.count("\n", 0, k) + 1
        column = k - shown.rfind("\n", 0, k)
        report.differences.append(
            f"document: line {line}, column {column} is not as econ writes the memo: shown "
            f"{shown[k : k + 60]!r}, econ renders {expected[k : k + 60]!r}"
        )


class _NotStrict(ValueError):
    """A NaN, an infinity or a number beyond any float in a stamp: econ writes strict JSON."""


def _refuse_constant(text: str):
    raise _NotStrict(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotStrict(text)
    return value


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:60]}..."


STAMP_DEPTH_MAX = 16
"""Deepest nesting of a memo stamp read, counting its values (econ writes 4 levels)."""

STAMP_TEXT_FORMS = (
    (
        "created_utc",
        re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z"),
        "a UTC time as econ writes it, e.g. 2026-12-05T11:34:02Z",
    ),
    ("scenario_sha256", re.compile(r"[0-9a-f]{64}"), "a SHA-256 in 64 lower-case hex digits"),
    ("econ_version", re.compile(r"[0-9A-Za-z.+!-]{1,64}"), "a version number such as 0.1.0"),
)
"""Stamp texts the memo shows verbatim, and the forms econ writes them in (`fullmatch`)."""
ECON_CODE_FORM = re.compile(rf"[0-9A-Za-z.!-]{{1,64}}\+[0-9a-f]{{{HASH_CHARS}}}")
"""The form of the stamp's econ_code (econ.sources.code_fingerprint), shown verbatim too; null
where the code was unknown, absent from memos written before econ stamped it. It is not compared
with the code that verifies the memo: the figures are what is checked."""


def _check_stamp(stamp: dict, file: str) -> None:
    """Each field of a memo stamp has the type `econ memo` writes (econ.memo.build.build_memo):
    NotAMemoError naming the field, the value and what was expected otherwise."""

    def expect(ok: bool, where: str, value, expected: str) -> None:
        if not ok:
            raise NotAMemoError(
                f"{file}: the econ stamp's {where} is {_shown(value)}; expected {expected}"
            )

    def integer(value) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    def positive(value) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        try:
            return 0 < float(value) < math.inf
        except OverflowError:
            return False

    nodes = [(stamp, 1)]
    while nodes:  # (deeper than econ writes would exhaust the comparison's stack)
        node, level = nodes.pop()
        if level > STAMP_DEPTH_MAX:
            raise NotAMemoError(
                f"{file}: the econ stamp is nested more than {STAMP_DEPTH_MAX} levels deep; "
                "expected a memo's stamp (4 levels)"
            )
        if isinstance(node, dict):
            nodes.extend((child, level + 1) for child in node.values())
        elif isinstance(node, list):
            nodes.extend((child, level + 1) for child in node)

    for key in ("econ_version", "scenario_name", "scenario_sha256", "created_utc"):
        expect(isinstance(stamp.get(key), str), key, stamp.get(key), "text")
    # Texts the memo shows as they stand in the stamp: each must have the form econ writes, so
    # that no sentence can ride in them (a re-rendering would show it again and match).
    for key, form, expected in STAMP_TEXT_FORMS:
        expect(form.fullmatch(stamp[key]) is not None, key, stamp[key], expected)
    code = stamp.get("econ_code")
    expect(
        code is None or (isinstance(code, str) and ECON_CODE_FORM.fullmatch(code) is not None),
        "econ_code",
        code,
        "null or econ's version and 40 hex digits of its source files' SHA-256, e.g. 0.1.0+3f2a...",
    )
    expect(
        isinstance(stamp["scenario_toml"], str),
        "scenario_toml",
        stamp["scenario_toml"],
        "the scenario as TOML text",
    )
    catalogs = stamp.get("catalogs")
    expect(
        isinstance(catalogs, dict) and all(isinstance(v, str) for v in catalogs.values()),
        "catalogs",
        catalogs,
        "an object of catalog names and version texts",
    )
    for key in ("summary", "figures"):
        expect(isinstance(stamp[key], dict), key, stamp[key], "an object of figures by name")
    cases = stamp["cases"]
    expect(isinstance(cases, dict), "cases", cases, "an object of cases by name")
    if len(cases) > MAX_CASES:  # (each is projected again: refused before any is)
        raise NotAMemoError(
            f"{file}: the econ stamp has {len(cases):,} cases; `econ memo` writes at most "
            f"{MAX_CASES} (econ.memo.build.MAX_CASES)"
        )
    for name, case in cases.items():
        expect(
            case_name_problem(name) is None,
            "case name",
            name,
            "ASCII letters, digits, - and _, starting with a letter or digit, other than 'base' "
            "in any case, as `econ memo --case` takes",
        )
        expect(isinstance(case, dict), f"case {name}", case, "an object with overrides")
        overrides = case.get("overrides")
        expect(
            isinstance(overrides, list) and all(isinstance(o, str) for o in overrides),
            f"case {name} overrides",
            overrides,
            "a list of PATH=VALUE texts",
        )
        too_large = case_too_large(name, overrides)
        if too_large:  # (as --case refuses it, before any case is projected again)
            raise NotAMemoError(f"{file}: the econ stamp's {too_large}")
        repeated = repeated_path(overrides)
        if repeated:  # (as --case refuses it: only the last would count)
            raise NotAMemoError(
                f"{file}: the econ stamp's case {name} gives {repeated} twice; expected each "
                "path once in a case, as `econ memo --case` takes"
            )
        expect(
            integer(case.get("position", 0)),
            f"case {name} position",
            case.get("position"),
            "a whole number",
        )
    tornado = stamp["tornado"]
    expect(isinstance(tornado, dict), "tornado", tornado, "an object with inputs and swing_pct")
    inputs = tornado.get("inputs")
    expect(
        isinstance(inputs, list) and all(isinstance(i, str) for i in inputs),
        "tornado inputs",
        inputs,
        "a list of field paths",
    )
    if len(inputs) > len(TORNADO_CANDIDATES):  # (each is projected twice)
        raise NotAMemoError(
            f"{file}: the econ stamp's tornado has {len(inputs):,} inputs; `econ memo` swings at "
            f"most {len(TORNADO_CANDIDATES)} (econ.memo.build.TORNADO_CANDIDATES)"
        )
    expect(
        tornado.get("output") == TORNADO_OUTPUT,
        "tornado output",
        tornado.get("output"),
        repr(TORNADO_OUTPUT),
    )
    swing = tornado.get("swing_pct")
    expect(
        positive(swing),
        "tornado swing_pct",
        swing,
        "a percentage above 0",
    )
    montecarlo = stamp.get("montecarlo")
    if montecarlo is None:
        return
    expect(
        isinstance(montecarlo, dict),
        "montecarlo",
        montecarlo,
        "null or an object with n, seed and distributions",
    )
    for key in ("n", "seed"):
        expect(
            integer(montecarlo.get(key)), f"montecarlo {key}", montecarlo.get(key), "a whole number"
        )
    dists = montecarlo.get("distributions")
    expect(
        isinstance(dists, dict) and dists and all(isinstance(d, str) for d in dists.values()),
        "montecarlo distributions",
        dists,
        "an object of at least one PATH: DIST text",
    )


def _load_stamp(text: str | None, file: str) -> dict:
    if text is None:
        raise NotAMemoError(f"{file}: no econ stamp found; expected a memo written by `econ memo`")
    try:
        stamp = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise NotAMemoError(
            f"{file}: the econ stamp is not valid JSON (line {exc.lineno}, column {exc.colno})"
        ) from None
    except _NotStrict as exc:
        raise NotAMemoError(
            f"{file}: the econ stamp holds {_shown(str(exc))}; expected strict JSON, every number "
            "finite, as econ writes it"
        ) from None
    except ValueError:  # (an integer of more digits than Python reads)
        raise NotAMemoError(
            f"{file}: the econ stamp holds an integer too long to read; expected a memo's stamp"
        ) from None
    except RecursionError:
        raise NotAMemoError(f"{file}: the econ stamp is nested too deeply to be a memo's") from None
    if not isinstance(stamp, dict) or stamp.get("kind") != "econ-memo":
        raise NotAMemoError(f"{file}: the econ stamp is not a memo stamp (kind econ-memo)")
    if stamp.get("memo_format") != MEMO_FORMAT:
        raise NotAMemoError(
            f"{file}: memo_format {stamp.get('memo_format')!r}; this econ reads {MEMO_FORMAT}"
        )
    for key in ("scenario_toml", "summary", "figures", "cases", "tornado", "scenario_sha256"):
        if key not in stamp:
            raise NotAMemoError(f"{file}: the econ stamp has no '{key}'")
    _check_stamp(stamp, file)
    return stamp


def _recompute(stamp: dict, file: str, report: Report):
    """Check version, catalogs and hash; return the memo recomputed from the embedded scenario
    (econ.memo.build.Memo, stamped with the document's own stamp, so that it renders as the
    document should read)."""
    from econ.scenario.io import apply_overrides, loads, scenario_to_dict

    out = report.differences
    if stamp.get("econ_version") != __version__:
        out.append(
            f"econ_version: made by econ {stamp.get('econ_version')}, this is econ {__version__}"
        )
    current = catalog_versions()
    report.checked += _compare("catalogs", stamp.get("catalogs", {}), current, out)
    try:
        scenario = loads(stamp["scenario_toml"], file=f"{file} (embedded scenario)")
        refuse_files(scenario_to_dict(scenario), file)
    except ScenarioError as exc:
        raise InputError(
            f"{file}: the embedded scenario no longer validates with econ {__version__}: {exc}"
        ) from None
    report.checked += _compare("scenario_name", stamp["scenario_name"], scenario.name, out)
    sha = scenario_sha256(scenario)
    report.checked += 1
    if sha != stamp["scenario_sha256"]:
        out.append(
            f"scenario_sha256: stamped {stamp['scenario_sha256']}, the embedded scenario hashes "
            f"to {sha} (the scenario was changed)"
        )
    # (the stamp's fields have the types econ writes: _check_stamp)
    stamped = sorted(stamp["cases"].items(), key=lambda item: item[1].get("position", 0))
    cases = {name: list(c["overrides"]) for name, c in stamped}
    inputs, swing = stamp["tornado"]["inputs"], float(stamp["tornado"]["swing_pct"])
    montecarlo = stamp.get("montecarlo")
    if montecarlo is not None:  # checked as `econ memo` checks its options (no empirical(FILE))
        dists = [f"{p}={text}" for p, text in montecarlo["distributions"].items()]
        try:
            montecarlo = parse_montecarlo(montecarlo["n"], dists, montecarlo["seed"])
        except InputError as exc:
            raise NotAMemoError(f"{file}: the stamp's Monte Carlo: {exc}") from None
    try:
        for name, overrides in cases.items():  # each case as it will be projected
            where = f"{file} (case {name})"
            refuse_files(apply_overrides(scenario_to_dict(scenario), overrides, file=where), file)
        memo = compute(scenario, cases, inputs, swing, montecarlo)
    except NotAMemoError:
        raise
    except InputError as exc:  # a case, tornado input, swing or seed econ memo would refuse
        message = str(exc)
        raise NotAMemoError(
            message if message.startswith(file) else f"{file}: the stamp: {message}"
        ) from None
    report.checked += _compare("summary", stamp["summary"], memo.summary, out)
    report.checked += _compare("figures", stamp["figures"], memo.figures, out)
    memo.stamp = stamp
    return memo


def refuse_files(data: dict, file: str) -> None:
    """A memo or workbook is recomputed from what it embeds alone: a scenario or case in it that
    names a file (a measured throughput curve) would make `econ verify` open a file of this
    machine chosen by whoever wrote the document. Refused without opening it (whether or not the
    file exists), as a library scenario is refused."""
    for where, table, key in path_fields(data):
        if table[key]:
            raise NotAMemoError(
                f"{file}: an embedded scenario or case names a file ({where}); a memo or "
                "workbook is recomputed from what it embeds and opens no file: expected "
                "throughput from the MLPerf catalog (catalog_id) or a fixed tokens_per_s_per_gpu"
            )


def _check_shown(key: str, text: str, value: str | None, figures: dict, report: Report):
    report.checked += 1
    if key not in figures:
        report.differences.append(f"{key}: shown, but this econ computes no such figure")
        return
    expected = figures[key]
    expected_text = figure_text(key, expected)
    if value is not None:
        shown = None if value == "" else float(value)  # (a number: verify_html checked)
        if not agree(shown, expected):
            report.differences.append(
                f"{key}: shown value {value or 'n/a'}, recomputed {expected!r}"
            )
            return
    if text != expected_text:
        report.differences.append(f"{key}: shown as {text!r}, recomputed {expected_text!r}")


def verify_html(path: Path) -> Report:
    data = read_bounded(path, MAX_MEMO_BYTES, "a memo written by `econ memo` (.html or .pdf)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotAMemoError(f"{path}: not UTF-8 text; expected a memo (.html or .pdf)") from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # (as a text-mode read, a browser)
    parser = _Figures()
    try:
        parser.feed(text)
        parser.close()
    except AssertionError as exc:  # (html.parser's for a marked section it cannot read)
        raise NotAMemoError(f"{path}: not HTML as econ writes a memo ({exc})") from None
    stamp = _load_stamp(parser.stamp_text, str(path))
    for key, value, _ in parser.figures:  # econ writes a float's repr, or nothing for n/a
        try:
            if value != "":
                float(value)
        except (TypeError, ValueError):
            raise NotAMemoError(
                f"{path}: the figure {_shown(key)} has data-value {_shown(value)}; expected a "
                "number (or nothing, for n/a) as econ memo writes it"
            ) from None
    report = Report(str(path), "memo (HTML)")
    memo = _recompute(stamp, str(path), report)
    figures = memo.figures
    as_written = parser.stamp_text == render.stamp_json(stamp)
    _compare_document(text, render.html(memo), as_written, report)
    shown = {key for key, _, _ in parser.figures}
    for key, value, shown_text in parser.figures:
        _check_shown(key, shown_text, value, figures, report)
    for key in figures:
        if key not in shown:
            report.differences.append(f"{key}: stamped but not shown in the document")
    return report


def verify_pdf(path: Path) -> Report:
    import logging

    from pypdf import PdfReader

    data = read_bounded(path, MAX_MEMO_BYTES, "a memo written by `econ memo` (.html or .pdf)")
    if not data:
        raise NotAMemoError(f"{path}: an empty file; expected a memo written by `econ memo`")
    # pypdf logs what it finds damaged ("EOF marker not found") to stderr as well as raising it:
    # the message below says it once
    pypdf_log = logging.getLogger("pypdf")  # (its modules' loggers take its level)
    level = pypdf_log.level
    pypdf_log.setLevel(logging.CRITICAL + 1)
    damaged = (
        f"{path}: not a readable PDF: damaged or not a PDF; expected a memo written by `econ memo`"
    )
    try:
        reader = PdfReader(io.BytesIO(data))
        attachments = reader.attachments
        metadata = reader.metadata
        info = None
        if metadata and render.PDF_STAMP_KEY in metadata:
            info = str(metadata[render.PDF_STAMP_KEY])
        text = info
        if render.STAMP_FILE in attachments:
            text = attachments[render.STAMP_FILE][0].decode("utf-8")
    except Exception:  # pypdf raises many types (and its limits') for a damaged file
        pypdf_log.setLevel(level)
        raise NotAMemoError(damaged) from None
    try:  # (a file without econ's stamp is refused before its pages are read)
        stamp = _load_stamp(text, str(path))
        additions = _page_additions(reader)  # (bounded: before pypdf's text walks the pages)
        pages = "\n".join(page.extract_text() or "" for page in reader.pages)
    except NotAMemoError:
        raise
    except _TooMuch as exc:
        raise NotAMemoError(
            f"{path}: its pages hold {exc}; a memo econ prints holds far less: expected a memo "
            "written by `econ memo`"
        ) from None
    except Exception:
        raise NotAMemoError(damaged) from None
    finally:
        pypdf_log.setLevel(level)
    report = Report(str(path), "memo (PDF)")
    if info is not None and info != text:
        report.differences.append(
            "stamp: the stamp in the document information differs from the attached stamp"
        )
    report.checked += 1
    report.differences.extend(additions)
    memo = _recompute(stamp, str(path), report)
    if render.chromium() is not None:  # print the memo as it should read, and compare the text
        expected = _pdf_text(render.pdf(render.html(memo), stamp), str(path))
        _compare_text(pages.split(), expected.split(), report)
        return report
    report.notes.append(
        "Chromium is not installed: each figure was looked for in the text, not checked where "
        "it stands, and the rest of the text was not compared (install Debian's chromium)"
    )
    words = set(pages.split())
    running = f" {' '.join(pages.split())} "  # a figure of several words ("55.10 trillion")
    for key, value in memo.figures.items():
        report.checked += 1
        expected = figure_text(key, value)
        if expected not in words and f" {expected} " not in running:
            report.differences.append(f"{key}: {expected} is not in the document's text")
    return report


MAX_FORM_DEPTH = 8
"""Levels of forms within forms searched for an image (Chromium draws a memo's chart as one)."""
ADDITIONS_SHOWN = 20
"""Additions to pages (`_page_additions`) listed one by one; the rest are counted."""


def _page_additions(reader) -> list[str]:
    """What the pages draw beyond their text that Chromium's print of a memo never holds, a line
    for each kind on each page (the first ADDITIONS_SHOWN, then a count): annotations (a
    FreeText box, a stamp, a link, a form field: each draws over the page, and its text is not
    the page's), more than one content stream (one appended draws over the page), an image (a
    picture of a figure pasted over it; the memo's charts are vectors, forms without images),
    a shape, image or shading painted over text already drawn (a white box over a figure:
    `_Cover`), text drawn invisible. The page text compared does not see them."""
    budget = _Budget()
    out = []
    for n, page in enumerate(reader.pages, start=1):
        box = _numbers(page.mediabox, 4)  # (its corners in either order)
        cover = _Cover(budget, _box([box[:2], box[2:]]) if box else _NOWHERE)
        content = budget.decoded(page.get_contents)
        operations = [] if content is None else budget.operations(content, ("page", n))
        cover.walk(operations, page.get("/Resources"), _IDENTITY, MAX_FORM_DEPTH)
        if cover.covered:
            runs = "a run" if cover.covered == 1 else f"{cover.covered:,} runs"
            what, (x0, y0, x1, y1) = cover.first
            out.append(
                f"page {n}: {what} painted over {runs} of text drawn before it (the first at x "
                f"{x0:,.0f} to {x1:,.0f}, y {y0:,.0f} to {y1:,.0f} pt from the page's lower left "
                "corner): the text compared is there, out of a reader's sight; a memo econ "
                "prints paints nothing over its text"
            )
        hidden = (
            (
                cover.invisible,
                "drawn invisible (text render mode 3 or 7: neither filled nor stroked)",
            ),
            (cover.off_page, "drawn outside the page (its media box)"),
            (cover.clipped, "drawn outside the clipping path"),
            (cover.tiny, f"drawn smaller than {MIN_TEXT_PT:g} pt"),
        )
        for count, how in hidden:
            if count:
                runs = "a run" if count == 1 else f"{count:,} runs"
                out.append(
                    f"page {n}: {runs} of text {how}: a reader does not see the text "
                    "compared; a memo econ prints draws all its text where it can be read"
                )
        annotations = _resolved(page.get("/Annots")) or []
        if annotations:
            kinds = sorted({str(_resolved(a).get("/Subtype", "?")) for a in annotations})
            count = (
                "an annotation" if len(annotations) == 1 else f"{len(annotations):,} annotations"
            )
            out.append(
                f"page {n}: {count} ({clipped(', '.join(kinds))}) drawn over the page; a memo "
                "econ prints has none, and the text compared does not hold what it shows"
            )
        contents = _resolved(page.get("/Contents"))
        if isinstance(contents, list) and len(contents) > 1:
            out.append(
                f"page {n}: {len(contents)} content streams; a memo econ prints (Chromium) has "
                "one a page: another draws over it"
            )
        if _has_image(page.get("/Resources"), MAX_FORM_DEPTH, set()):
            out.append(
                f"page {n}: an image; a memo econ prints has none (its charts are vectors), "
                "and the text compared does not hold what it shows"
            )
    if len(out) > ADDITIONS_SHOWN:
        return [*out[:ADDITIONS_SHOWN], f"{len(out) - ADDITIONS_SHOWN:,} more additions to pages"]
    return out


_IDENTITY = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
"""A PDF matrix [a b c d e f] (ISO 32000-1, 8.3.4): (x, y) -> (a x + c y + e, b x + d y + f)."""
_NOWHERE = (-math.inf, -math.inf, math.inf, math.inf)
"""A clip box (x0, y0, x1, y1) that clips nothing."""
_UNIT = ((0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0))
"""The unit square an image fills (ISO 32000-1, 8.9.4)."""
TEXT_POINTS = ((0.1, 0.1), (0.3, 0.3), (0.25, 0.6))
"""Points of a run of text, in units of its font size from where it starts (along the baseline,
up from it), that nothing painted after it may cover: inside the body of its first glyph (a
digit is about 0.55 of the font size wide and 0.7 high). Chromium places each glyph or short run
on its own, so each digit of a figure is a run."""
_FILLS = frozenset((b"f", b"F", b"f*", b"B", b"B*", b"b", b"b*"))
_STROKES = frozenset((b"S", b"s", b"B", b"B*", b"b", b"b*"))
_SHOWS = frozenset((b"Tj", b"TJ", b"'", b'"'))
_INVISIBLE_MODES = (3, 7)
"""Text render modes that neither fill nor stroke the glyphs (ISO 32000-1, 9.3.6)."""
_PAINTED = {
    "fill": "a filled shape",
    "stroke": "a stroked line",
    b"sh": "a shading",
    b"Do": "an image",
    b"INLINE IMAGE": "an inline image",
}


def _times(m, n):
    """The matrix m then n (m x n, as PDF concatenates them: a point goes through m first)."""
    a0, a1, a2, a3, a4, a5 = m
    b0, b1, b2, b3, b4, b5 = n
    return (
        a0 * b0 + a1 * b2,
        a0 * b1 + a1 * b3,
        a2 * b0 + a3 * b2,
        a2 * b1 + a3 * b3,
        a4 * b0 + a5 * b2 + b4,
        a4 * b1 + a5 * b3 + b5,
    )


def _at(m, x: float, y: float) -> tuple[float, float]:
    return (m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5])


def _numbers(args, n: int) -> tuple[float, ...] | None:
    """An operator's first n operands as finite numbers, None if they are not (a damaged
    stream: the operator is passed over, as a viewer passes it)."""
    try:
        values = tuple(float(a) for a in list(args)[:n])
    except (TypeError, ValueError):
        return None
    return values if len(values) == n and all(map(math.isfinite, values)) else None


def _box(points) -> tuple[float, float, float, float]:
    xs, ys = zip(*points, strict=True)
    return (min(xs), min(ys), max(xs), max(ys))


def _within(box, clip) -> tuple[float, float, float, float]:
    return (max(box[0], clip[0]), max(box[1], clip[1]), min(box[2], clip[2]), min(box[3], clip[3]))


# The limits of walking a PDF memo's pages (`_Budget`): past one the file is refused, not a memo
# econ writes. The memos of the ready-made scenarios (4 to 6 pages, measured when these were
# set) decode to at most 0.7 MB of content holding 127,000 operators and operands, draw 1 form,
# walk 46,000 operators and 17,600 runs of text, and test 1,800 points against what is painted:
# each limit is several times that.
MAX_CONTENT_BYTES = 4 * 2**20
"""Bytes the content streams of a PDF memo's pages and forms decode to, all together (a stream
of 1 MB of spaces compresses to 1 kB)."""
MAX_CONTENT_TOKENS = 500_000
"""Operators and operands parsed from those streams, all together (pypdf's
stream_parsing_work_maximum_count, given what is left of it for each stream)."""
MAX_FORMS_DRAWN = 1_000
"""Forms drawn in a document, counting a form each time it is drawn (also from within another
form)."""
MAX_OPERATORS = 400_000
"""Operators walked in a document, counting a form's each time it is drawn."""
MAX_TEXT_RUNS = 100_000
"""Runs of text shown in a document."""
MAX_PAINT_CHECKS = 2_000_000
"""Points of text tested against what is painted after them (`_Cover._paint`), all together,
counting each square of GRID_PT looked in as one."""
GRID_PT = 16.0
"""Side, in points of the page, of the squares the points of text are filed under: a painting
is tested against the points in the squares it touches, not against all."""
_BUDGET = {
    "content_bytes": ("MAX_CONTENT_BYTES", "bytes of content streams decoded"),
    "tokens": ("MAX_CONTENT_TOKENS", "operators and operands in content streams"),
    "forms": ("MAX_FORMS_DRAWN", "forms drawn"),
    "operators": ("MAX_OPERATORS", "drawing operators"),
    "runs": ("MAX_TEXT_RUNS", "runs of text"),
    "checks": ("MAX_PAINT_CHECKS", "points of text tested against what is painted over them"),
}


class _TooMuch(Exception):
    """A document's pages cost more to walk than any memo econ prints (_Budget)."""


@dataclass
class _Budget:
    """What walking a document's pages has cost so far, and the forms' operators, each form
    parsed once (by object number). Past a limit (_BUDGET): _TooMuch, saying which. Forms drawn
    within forms multiply (a form drawing the next 4 times, 8 levels deep, is drawn 4^8 times;
    its PDF is 2 kB), and so does testing each painting against every run of text before it:
    Chromium prints a memo with few forms, one level deep, and a few thousand runs."""

    content_bytes: int = 0
    tokens: int = 0
    forms: int = 0
    operators: int = 0
    runs: int = 0
    checks: int = 0
    parsed: dict = field(default_factory=dict)

    def spend(self, what: str, amount: int = 1) -> None:
        spent = getattr(self, what) + amount
        setattr(self, what, spent)
        name, text = _BUDGET[what]
        limit = globals()[name]
        if spent > limit:
            raise _TooMuch(f"more than {limit:,} {text} (econ.memo.verify.{name})")

    def decoded(self, decode):
        """decode(), a stream decoded by pypdf, its output held to what is left of
        MAX_CONTENT_BYTES (pypdf's own limit is 75 MB a stream)."""
        from pypdf import apply_configuration
        from pypdf.errors import LimitReachedError

        left = max(1, MAX_CONTENT_BYTES - self.content_bytes)
        try:
            with apply_configuration(zlib_maximum_output_length=left):
                return decode()
        except LimitReachedError:
            self.spend("content_bytes", left + 1)
            raise

    def operations(self, stream, reference) -> list:
        """A content stream's operators (a page's, or a form's by `reference`), decoded and
        parsed once for the document."""
        if reference not in self.parsed:
            from pypdf import apply_configuration
            from pypdf.errors import LimitReachedError
            from pypdf.generic import ContentStream

            content = stream
            if not isinstance(stream, ContentStream):
                content = self.decoded(lambda: ContentStream(stream, None))
            self.spend("content_bytes", len(content.get_data()))
            left = max(0, MAX_CONTENT_TOKENS - self.tokens)
            try:
                with apply_configuration(stream_parsing_work_maximum_count=left):
                    operations = content.operations
            except LimitReachedError:
                self.spend("tokens", left + 1)
            self.spend("tokens", sum(len(args) + 1 for args, _ in operations))
            self.parsed[reference] = operations
        return self.parsed[reference]


MIN_TEXT_PT = 2.0
"""Smallest height and width, in points of the page, of a run's font size (through its text and
current matrices) a reader can see; the smallest a memo prints is 4.5 pt (a table of 12 cases)."""


class _Cover:
    """A page's content (and the forms it draws) walked in the order it is painted: where each
    run of text stands (TEXT_POINTS on the page), and whether anything painted after it (a
    filled or stroked path, an image, a shading, within its bounding box and the clip's) covers
    one of its points. Chromium paints each element's background before its text and nothing
    over it (no memo of a ready-made scenario does: tests/test_memo.py); a box painted over a
    figure hides it from a reader while its text stays in the page text compared. A bounding
    box overstates a curve's or a slanted shape's area, never understates it. Also counted, runs
    a reader cannot see for where or how they are drawn: invisible (render mode 3 or 7), with no
    point on the page (`page_box`) or in the clip (its bounding box), or smaller than
    MIN_TEXT_PT. Not seen: text in the colour of what lies under it, a glyph drawn as another
    (a font's own), text under a shape drawn before it in a colour of its own."""

    def __init__(self, budget: _Budget, page_box=_NOWHERE):
        self.budget = budget
        self.page_box = page_box
        self.runs = 0
        self.covered = 0  # runs with a point under something painted after them
        self.first: tuple[str, tuple] | None = None  # what covered the first run, its box
        self.invisible = 0  # runs drawn in an invisible render mode
        self.off_page = 0  # runs drawn outside the page
        self.clipped = 0  # runs drawn outside the clip
        self.tiny = 0  # runs drawn too small to read
        self._hit: set[int] = set()
        self._cells: dict[tuple[int, int], list] = {}  # square -> [(x, y, run)], not yet hit
        self._extent = (math.inf, math.inf, -math.inf, -math.inf)  # of the points filed

    def _show(self, glyphs, mode: int, clip) -> None:
        """A run of text drawn through `glyphs` (its font size, text and current matrices)."""
        self.budget.spend("runs")
        self.runs += 1
        points = [_at(glyphs, x, y) for x, y in TEXT_POINTS]
        if mode in _INVISIBLE_MODES:
            self.invisible += 1
        elif not any(_inside(p, self.page_box) for p in points):
            self.off_page += 1
        elif not any(_inside(p, clip) for p in points):  # (Chromium clips a glyph at an edge)
            self.clipped += 1
        elif min(math.hypot(glyphs[0], glyphs[1]), math.hypot(glyphs[2], glyphs[3])) < (
            MIN_TEXT_PT
        ):
            self.tiny += 1
        for x, y in points:
            if math.isfinite(x) and math.isfinite(y):
                key = (math.floor(x / GRID_PT), math.floor(y / GRID_PT))
                self._cells.setdefault(key, []).append((x, y, self.runs))
                e = self._extent
                self._extent = (min(e[0], x), min(e[1], y), max(e[2], x), max(e[3], y))

    def _paint(self, what: str, box) -> None:
        x0, y0, x1, y1 = _within(box, self._extent)
        if x0 > x1 or y0 > y1:  # (nothing filed, or nothing filed there)
            return
        i0, i1 = math.floor(x0 / GRID_PT), math.floor(x1 / GRID_PT)
        j0, j1 = math.floor(y0 / GRID_PT), math.floor(y1 / GRID_PT)
        cells = self._cells
        if (i1 - i0 + 1) * (j1 - j0 + 1) <= len(cells):
            self.budget.spend("checks", (i1 - i0 + 1) * (j1 - j0 + 1))
            keys = [(i, j) for i in range(i0, i1 + 1) for j in range(j0, j1 + 1)]
            keys = [key for key in keys if key in cells]
        else:
            self.budget.spend("checks", len(cells))
            keys = [key for key in cells if i0 <= key[0] <= i1 and j0 <= key[1] <= j1]
        runs = set()
        for key in keys:  # (a point covered once is taken out: its run is counted)
            points = cells[key]
            self.budget.spend("checks", len(points))
            kept = [p for p in points if not (x0 <= p[0] <= x1 and y0 <= p[1] <= y1)]
            if len(kept) < len(points):
                runs.update(p[2] for p in points if x0 <= p[0] <= x1 and y0 <= p[1] <= y1)
                if kept:
                    cells[key] = kept
                else:
                    del cells[key]
        runs -= self._hit
        if runs:
            self._hit |= runs
            self.covered += len(runs)
            if self.first is None:
                self.first = (what, box)

    def walk(self, operations, resources, ctm, depth: int, seen: frozenset = frozenset()) -> None:
        """Walk a content stream's operators painted through `ctm`, forms within it `depth`
        levels deep (`seen`: the forms being walked, by object number: a form drawing itself is
        not)."""
        self.budget.spend("operators", len(operations))
        stack = []
        width, clip, mode = 1.0, _NOWHERE, 0
        text = line = _IDENTITY
        size = leading = 0.0
        path: list[tuple[float, float]] = []
        clipping = False
        for args, op in operations:
            # (the text state's font size, leading and render mode are the graphics state's)
            if op == b"q":
                stack.append((ctm, width, clip, mode, size, leading))
            elif op == b"Q" and stack:
                ctm, width, clip, mode, size, leading = stack.pop()
            elif op == b"cm" and (m := _numbers(args, 6)):
                ctm = _times(m, ctm)
            elif op == b"w" and (v := _numbers(args, 1)):
                width = v[0]
            elif op == b"Tr" and (v := _numbers(args, 1)):
                mode = int(v[0])
            elif op == b"Tf" and (v := _numbers(list(args)[1:], 1)):
                size = v[0]
            elif op == b"TL" and (v := _numbers(args, 1)):
                leading = v[0]
            elif op == b"BT":
                text = line = _IDENTITY
            elif op == b"Tm" and (m := _numbers(args, 6)):
                text = line = m
            elif op in (b"Td", b"TD") and (v := _numbers(args, 2)):
                text = line = _times((1.0, 0.0, 0.0, 1.0, v[0], v[1]), line)
                leading = -v[1] if op == b"TD" else leading
            elif op in (b"T*", b"'", b'"'):
                text = line = _times((1.0, 0.0, 0.0, 1.0, 0.0, -leading), line)
            if op in _SHOWS:
                self._show(_times(_times((size, 0.0, 0.0, size, 0.0, 0.0), text), ctm), mode, clip)
            elif op in (b"m", b"l") and (v := _numbers(args, 2)):
                path.append(_at(ctm, *v))
            elif op in (b"c", b"v", b"y") and (v := _numbers(args, 6 if op == b"c" else 4)):
                path.extend(_at(ctm, v[k], v[k + 1]) for k in range(0, len(v), 2))
            elif op == b"re" and (v := _numbers(args, 4)):
                x, y, w, h = v
                path.extend(_at(ctm, *p) for p in ((x, y), (x + w, y), (x, y + h), (x + w, y + h)))
            elif op in (b"W", b"W*"):
                clipping = True
            elif op in _FILLS or op in _STROKES or op == b"n":
                if path and op != b"n":
                    box = _box(path)
                    if op in _STROKES:  # half the line's width, at the CTM's largest scale
                        half = width / 2 * max(abs(ctm[0]) + abs(ctm[2]), abs(ctm[1]) + abs(ctm[3]))
                        box = (box[0] - half, box[1] - half, box[2] + half, box[3] + half)
                    kind = "fill" if op in _FILLS else "stroke"
                    self._paint(_PAINTED[kind], _within(box, clip))
                if path and clipping:  # (a clip applies from after the path is painted)
                    clip = _within(_box(path), clip)
                path, clipping = [], False
            elif op == b"sh":
                self._paint(_PAINTED[op], clip)
            elif op == b"INLINE IMAGE":
                self._paint(_PAINTED[op], _within(_box(_at(ctm, *p) for p in _UNIT), clip))
            elif op == b"Do" and args:
                self._draw(args[0], resources, ctm, clip, depth, seen)

    def _draw(self, name, resources, ctm, clip, depth: int, seen: frozenset) -> None:
        """An XObject: an image covers the unit square through the CTM; a form is walked
        (through its /Matrix, with its resources or else the page's)."""
        objects = _resolved(_resolved(resources).get("/XObject")) if resources is not None else None
        item = (objects or {}).get(name)
        target = _resolved(item)
        if target is None:
            return
        subtype = target.get("/Subtype")
        if subtype == "/Image":
            self._paint(_PAINTED[b"Do"], _within(_box(_at(ctm, *p) for p in _UNIT), clip))
            return
        reference = (item.idnum, item.generation) if hasattr(item, "idnum") else id(target)
        if subtype != "/Form" or depth <= 0 or reference in seen:
            return
        self.budget.spend("forms")
        matrix = _numbers(target.get("/Matrix", _IDENTITY), 6) or _IDENTITY
        self.walk(
            self.budget.operations(target, reference),
            target.get("/Resources", resources),
            _times(matrix, ctm),
            depth - 1,
            seen | {reference},
        )


def _inside(point, box) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def _resolved(item):
    """A PDF object, its reference followed."""
    return item.get_object() if item is not None and hasattr(item, "get_object") else item


def _has_image(resources, depth: int, seen: set) -> bool:
    """Whether the resources draw an image, directly or in a form (`depth` levels of forms;
    `seen`: the forms searched, by object number)."""
    objects = _resolved(_resolved(resources).get("/XObject")) if resources is not None else None
    for item in (objects or {}).values():
        reference = (item.idnum, item.generation) if hasattr(item, "idnum") else None
        if reference in seen:  # (a form drawn twice, or drawing itself)
            continue
        if reference:
            seen.add(reference)
        target = _resolved(item)
        subtype = target.get("/Subtype")
        if subtype == "/Image" or (
            subtype == "/Form"
            and depth > 0
            and _has_image(target.get("/Resources"), depth - 1, seen)
        ):
            return True
    return False


def _pdf_text(data: bytes, file: str) -> str:
    from pypdf import PdfReader

    try:
        return "\n".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(data)).pages)
    except (ValueError, KeyError) as exc:  # (the memo econ printed: not the user's file)
        raise InputError(
            f"{file}: the memo reprinted for comparison is unreadable: {exc}"
        ) from None


WORKBOOK_SUFFIXES = (".xlsx", ".xlsm")
"""Suffixes of a workbook: a file so named is read as one, whatever its first bytes (a damaged
workbook is called a damaged workbook)."""
MEMO_OR_WORKBOOK = "a memo (.html, .pdf) or workbook (.xlsx)"
EXPECTED_FILE = f"expected {MEMO_OR_WORKBOOK}"


def verify(file: str | os.PathLike) -> Report:
    """Verify a memo (.html, .pdf) or workbook (.xlsx); NotAMemoError when it is neither.

    The kind is read from the first bytes (a PDF's `%PDF-`, a zip package's `PK`), else from the
    suffix (.pdf, .xlsx), else HTML; a folder, a missing file and an empty one are said so."""
    if not os.fspath(file):  # pathlib reads "" as the current folder
        raise NotAMemoError(f"'': an empty path; {EXPECTED_FILE} file")
    path = Path(file)
    try:
        if path.is_dir():
            raise NotAMemoError(f"{path}: a folder; {EXPECTED_FILE} file")
        if not path.exists():
            raise InputError(f"{path}: no such file; {EXPECTED_FILE}")
        if not path.is_file():  # (a FIFO, a device: read_regular says which, without opening it)
            read_bounded(path, MAX_MEMO_BYTES, MEMO_OR_WORKBOOK)
        with path.open("rb") as handle:
            head = handle.read(8)
    except OSError as exc:  # (a name too long, permission denied: a traceback and exit 1 before)
        raise NotAMemoError(f"{path}: cannot be read: {reason(exc)}; {EXPECTED_FILE}") from None
    suffix = path.suffix.lower()
    if head.startswith(b"PK") or (suffix in WORKBOOK_SUFFIXES and not head.startswith(b"%PDF-")):
        from econ.memo.workbook_check import verify_workbook

        return verify_workbook(path)
    if head.startswith(b"%PDF-") or suffix == ".pdf":
        return verify_pdf(path)
    if not head:
        raise NotAMemoError(f"{path}: an empty file; {EXPECTED_FILE}")
    return verify_html(path)
