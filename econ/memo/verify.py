"""`econ verify`: read a memo (HTML or PDF) or an exported workbook back, recompute its figures from
the scenario it embeds with this econ, and list every figure that differs.

What is checked. A memo: the stamp's econ version, catalog versions and scenario hash (against the
hash of the embedded TOML), the stamped summary and figures, and every figure the document shows
(the HTML's `data-key`/`data-value` elements and their text; a PDF's page text holds each shown
figure's text). A workbook (econ.memo.workbook_check): its stamp, and its Summary and Monthly
sheets against a projection of the scenarios its Notes sheet embeds.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from econ import __version__
from econ.errors import InputError
from econ.memo import render
from econ.memo.build import MEMO_FORMAT, compute, parse_montecarlo
from econ.memo.figures import figure_text
from econ.provenance import catalog_versions, scenario_sha256
from econ.scenario.errors import ScenarioError
from econ.scenario.paths import path_fields

RELATIVE_TOLERANCE = 1e-9
"""Figures agree when within this relative difference (the engine is deterministic; the margin
absorbs summation order of BLAS builds, far below any shown digit)."""


class NotAMemoError(InputError):
    """The file is not an econ memo or workbook (or cannot be read as one)."""


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


class _Text(HTMLParser):
    """The words a reader sees: text outside scripts, styles and charts (SVG)."""

    HIDDEN = ("script", "style", "svg", "title")

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.words: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.HIDDEN:
            self._hidden += 1

    def handle_endtag(self, tag):
        if tag in self.HIDDEN and self._hidden:
            self._hidden -= 1

    def handle_data(self, data):
        if not self._hidden:
            self.words.extend(data.split())


def visible_words(html_text: str) -> list[str]:
    """The words of an HTML document as a reader sees them, in order."""
    parser = _Text()
    parser.feed(html_text)
    parser.close()
    return parser.words


TEXT_DIFFERENCES_SHOWN = 20
"""Passages of text that differ listed one by one; the rest are counted."""


def _compare_text(shown: list[str], expected: list[str], report: Report) -> None:
    """Every word of the document against the memo the embedded scenario gives, in order: a figure,
    an input in Key assumptions, a sentence of the ask or a source edited anywhere (also where the
    same figure stands elsewhere unedited) is a difference, listed with the words before it."""
    import difflib

    report.checked += 1
    matcher = difflib.SequenceMatcher(a=shown, b=expected, autojunk=False)
    passages = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    for _, i1, i2, j1, j2 in passages[:TEXT_DIFFERENCES_SHOWN]:
        before = " ".join(expected[max(0, j1 - 6) : j1])
        report.differences.append(
            f"text after {before!r}: shown {' '.join(shown[i1:i2]) or '(nothing)'!r}, the "
            f"scenario gives {' '.join(expected[j1:j2]) or '(nothing)'!r}"
        )
    if len(passages) > TEXT_DIFFERENCES_SHOWN:
        report.differences.append(
            f"text: {len(passages) - TEXT_DIFFERENCES_SHOWN} more passages differ"
        )


def _load_stamp(text: str | None, file: str) -> dict:
    if text is None:
        raise NotAMemoError(f"{file}: no econ stamp found; expected a memo written by `econ memo`")
    try:
        stamp = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotAMemoError(
            f"{file}: the econ stamp is not valid JSON (line {exc.lineno}, column {exc.colno})"
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
    sha = scenario_sha256(scenario)
    report.checked += 1
    if sha != stamp["scenario_sha256"]:
        out.append(
            f"scenario_sha256: stamped {stamp['scenario_sha256']}, the embedded scenario hashes "
            f"to {sha} (the scenario was changed)"
        )
    try:
        stamped = sorted(stamp["cases"].items(), key=lambda item: int(item[1].get("position", 0)))
        cases = {name: [str(o) for o in c["overrides"]] for name, c in stamped}
        inputs, swing = stamp["tornado"]["inputs"], float(stamp["tornado"]["swing_pct"])
        montecarlo = stamp.get("montecarlo")
        if montecarlo is not None:
            n, seed = montecarlo["n"], int(montecarlo["seed"])
            dists = [f"{p}={text}" for p, text in dict(montecarlo["distributions"]).items()]
    except (AttributeError, KeyError, TypeError, ValueError):
        raise NotAMemoError(
            f"{file}: the stamp's cases or tornado are not as econ memo writes them"
        ) from None
    if montecarlo is not None:  # checked as `econ memo` checks its options (no empirical(FILE))
        try:
            montecarlo = parse_montecarlo(n, dists, seed)
        except InputError as exc:
            raise NotAMemoError(f"{file}: the stamp's Monte Carlo: {exc}") from None
    for name, overrides in cases.items():  # each case as it will be projected
        refuse_files(apply_overrides(scenario_to_dict(scenario), overrides, file=name), file)
    memo = compute(scenario, cases, inputs, swing, montecarlo)
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
        shown = None if value == "" else float(value)
        if not agree(shown, expected):
            report.differences.append(
                f"{key}: shown value {value or 'n/a'}, recomputed {expected!r}"
            )
            return
    if text != expected_text:
        report.differences.append(f"{key}: shown as {text!r}, recomputed {expected_text!r}")


def verify_html(path: Path) -> Report:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise NotAMemoError(f"{path}: not UTF-8 text; expected a memo (.html or .pdf)") from None
    parser = _Figures()
    parser.feed(text)
    stamp = _load_stamp(parser.stamp_text, str(path))
    report = Report(str(path), "memo (HTML)")
    memo = _recompute(stamp, str(path), report)
    figures = memo.figures
    _compare_text(visible_words(text), visible_words(render.html(memo)), report)
    shown = {key for key, _, _ in parser.figures}
    for key, value, shown_text in parser.figures:
        _check_shown(key, shown_text, value, figures, report)
    for key in figures:
        if key not in shown:
            report.differences.append(f"{key}: stamped but not shown in the document")
    return report


def verify_pdf(path: Path) -> Report:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(str(path))
        attachments = reader.attachments
        text = None
        if render.STAMP_FILE in attachments:
            text = attachments[render.STAMP_FILE][0].decode("utf-8")
        elif reader.metadata and render.PDF_STAMP_KEY in reader.metadata:
            text = str(reader.metadata[render.PDF_STAMP_KEY])
        pages = "\n".join(page.extract_text() or "" for page in reader.pages)
    except (PdfReadError, OSError, ValueError, KeyError) as exc:
        raise NotAMemoError(f"{path}: not a readable PDF ({type(exc).__name__})") from None
    stamp = _load_stamp(text, str(path))
    if reader.metadata and render.PDF_STAMP_KEY in reader.metadata:
        if str(reader.metadata[render.PDF_STAMP_KEY]) != text:
            raise_text = "the stamp in the document information differs from the attached stamp"
            report = Report(str(path), "memo (PDF)", differences=[f"stamp: {raise_text}"])
        else:
            report = Report(str(path), "memo (PDF)")
    else:
        report = Report(str(path), "memo (PDF)")
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
    for key, value in memo.figures.items():
        report.checked += 1
        expected = figure_text(key, value)
        if expected not in words:
            report.differences.append(f"{key}: {expected} is not in the document's text")
    return report


def _pdf_text(data: bytes, file: str) -> str:
    import io

    from pypdf import PdfReader

    try:
        return "\n".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(data)).pages)
    except (ValueError, KeyError) as exc:  # (the memo econ printed: not the user's file)
        raise InputError(
            f"{file}: the memo reprinted for comparison is unreadable: {exc}"
        ) from None


def verify(file: str | os.PathLike) -> Report:
    """Verify a memo (.html, .pdf) or workbook (.xlsx); NotAMemoError when it is neither."""
    path = Path(file)
    if not path.is_file():
        raise InputError(f"{path}: no such file; expected a memo (.html, .pdf) or workbook (.xlsx)")
    with path.open("rb") as handle:
        head = handle.read(8)
    if head.startswith(b"%PDF-"):
        return verify_pdf(path)
    if head.startswith(b"PK") and zipfile.is_zipfile(path):
        from econ.memo.workbook_check import verify_workbook

        return verify_workbook(path)
    return verify_html(path)
