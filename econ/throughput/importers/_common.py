"""What every importer shares: reading a file, its hash, JSON/JSONL records, unit checks, and
turning parsed records into a validated `Curve`.

Importers parse their tool's layout into *records*: plain dicts holding Curve columns in SI units
(seconds, tokens/s) plus the labels `workload` and `config`; `finish_curve` then derives what the
file implies (totals, per-GPU and per-user rates), refuses silent zeros, NaN, negative values and
duplicate load levels, checks that the latencies are in the unit the file claims, and stamps
provenance (tool, version, file, SHA-256, model, hardware, precision) on every point.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import math
import re
import string
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from econ.bounds import MAX_GPU_COUNT
from econ.catalog import catalog_cache
from econ.errors import InputError
from econ.files import ReadError, check_regular, inside_folders, read_failure, read_regular
from econ.labels import counted
from econ.strict_json import EXPECTED_FINITE, OverlongNumberError, integer_shown, load_json
from econ.throughput.curve import Curve, with_all_columns

MS_PER_S = 1000.0
NS_PER_S = 1e9
US_PER_S = 1e6

# Plausible ranges used to detect a latency unit that is off by 1000. TPOT outside
# [100 us, 30 s] means a per-user speed above 10,000 or below 0.03 tokens/s, which no LLM server
# produces: the fastest per-user speeds published (wafer-scale and SRAM accelerators, 2025) are
# 2,000-3,000 tokens/s, GPU servers a few hundred (the samples: at most 177). The lower bound is
# the only unit check of a request-rate run (no concurrency for Little's law), where seconds
# written into `*_ms` keys read as TPOTs of tens of microseconds. A TTFT holds an HTTP round
# trip, tokenization, a scheduler step and a prefill forward pass of every layer: below 1 ms is
# not a served LLM (the fastest in the samples, a median on OPT-125M, is 45 ms), and it is the
# bound that tells a unit-less 0.5 (s) from 0.5 ms; above a day is not a run.
TPOT_S_MIN, TPOT_S_MAX = 1e-4, 30.0
TTFT_S_MIN, TTFT_S_MAX = 1e-3, 86_400.0
# A system cannot emit more than (requests in flight) / TPOT tokens/s; allow 5x for the gap
# between mean(1/TPOT) and 1/mean(TPOT) and for bursts.
LITTLE_RATIO_MAX = 5.0

LATENCY_PREFIXES = ("ttft_s_", "tpot_s_", "e2e_s_")
LATENCY_STATS_ALL = ("mean", "p50", "p90", "p95", "p99")


class CurveError(InputError):
    """A throughput file that cannot be turned into a curve; the message names the file."""


class ImplausibleValueError(CurveError):
    """A value no measurement can have: above the speed of light, negative, out of order."""


class LatencyUnitError(CurveError):
    """Latencies whose values contradict the unit the file states (typically ms read as s)."""


@dataclass(frozen=True)
class SourceFile:
    """One input file: where it is, its text and its SHA-256, and the folders an importer may
    open other files in beside it (`within`, checked by `companion_refusal`; `read_source` gives
    `result_reach(path)` unless told otherwise)."""

    path: Path
    text: str
    sha256: str
    within: tuple[Path, ...] = ()

    @property
    def name(self) -> str:
        return self.path.name

    def error(self, message: str) -> CurveError:
        return CurveError(f"{self.path}: {message}")


MAX_SOURCE_BYTES = 256 * 1024 * 1024
"""Bytes of a benchmark result file an importer reads: summaries are kilobytes, per-request
exports of long runs tens of megabytes; a device or a runaway file stops here."""


MAX_POINTS_PER_FILE = 10_000
"""Most points (CSV rows, JSON records) one result file may hold: a benchmark sweep has tens
to thousands of load levels (MLPerf Endpoints caps a curve at 32 points); more is a per-request
or generated table, refused before it is parsed (a 47 MB CSV of 1.3 million rows took minutes
and gigabytes to read)."""


def too_many_points(src: SourceFile, what: str, where: str) -> CurveError:
    """The refusal of a file holding more than MAX_POINTS_PER_FILE `what` ("data rows",
    "records"), counted up to `where` (the first one over), without reading on."""
    return src.error(
        f"more than {MAX_POINTS_PER_FILE:,} {what} (counted to {where}); expected a curve of at "
        f"most {MAX_POINTS_PER_FILE:,} points, one per load level (a benchmark sweep has tens to "
        "thousands): import the sweep's summary, or split the file"
    )


def lines_in(text: str) -> int:
    """How many lines `text` has (a last line without its line end counts)."""
    return text.count("\n") + (bool(text) and not text.endswith("\n"))


_LINE_ENDS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_LINE = re.compile(f"([^{_LINE_ENDS}]*)(\r\n|[{_LINE_ENDS}]|\\Z)")
_FILE_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def lines_of(text: str) -> Iterator[str]:
    """The lines of `text` one at a time, as `str.splitlines()` gives them, without making the
    list of them all: a count that stops at a limit reads no further (the list of 21 million
    lines of an 84 MB file took 1.1 GB)."""
    for match in _LINE.finditer(text):
        if not match.group(2) and not match.group(1):  # the end, after the last line
            return
        yield match.group(1)


def file_lines(text: str) -> Iterator[str]:
    """The lines of `text` with their line ends, cut at "\n" only (as a file open in text mode
    with newline="" reads them, and io.StringIO(text)), one at a time: for csv.reader."""
    return (match.group() for match in _FILE_LINE.finditer(text))


SOURCE_EXPECTED = "a benchmark result file"
"""What a result file an importer reads is expected to be, in its refusals."""


def opened(path: str | Path, limit: int, expected: str, read: bool = True) -> bytes:
    """The bytes of `path` (`econ.files.read_regular`), or CurveError naming it: a NUL byte in its
    name, missing, a folder, a FIFO or a device, over `limit`, unreadable. `read=False` checks
    all that without reading (econ.files.check_regular) and gives no bytes."""
    if "\x00" in str(path):
        shown = str(path).replace("\x00", "\\0")
        raise CurveError(f"{shown}: a file name may not contain a NUL byte")
    try:
        if not read:
            check_regular(path, limit, expected)
            return b""
        return read_regular(path, limit, expected)
    except (ReadError, OSError) as exc:
        raise CurveError(read_failure(path, exc, expected)) from None


def check_source(path: str | Path) -> None:
    """CurveError when `read_source` could not read `path` (not its content): without reading."""
    opened(Path(path), MAX_SOURCE_BYTES, SOURCE_EXPECTED, read=False)


def read_source(
    path: str | Path,
    *,
    within: Iterable[str | Path] | None = None,
    limit: int | None = None,
    expected: str = SOURCE_EXPECTED,
) -> SourceFile:
    """Read a file as UTF-8 text and hash its bytes; an empty or binary file is an error, and so
    is anything but a regular file of at most `limit` bytes (default MAX_SOURCE_BYTES; a FIFO, a
    device, a folder).

    `within`: the folders an importer may open other files in beside this one (default:
    `result_reach(path)`, the reach of a file its user named)."""
    # opened before Path(): Path("") is the current folder, and "" is refused by name
    raw = opened(path, MAX_SOURCE_BYTES if limit is None else limit, expected)
    path = Path(path)
    if not raw or raw.isspace():  # (strip() would copy the whole file)
        raise CurveError(f"{path}: the file is empty; expected a benchmark result")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CurveError(
            f"{path}: not a UTF-8 text file (byte {exc.start}); expected JSON, CSV or a text report"
        ) from None
    if not text or text.isspace():
        raise CurveError(
            f"{path}: the file is empty (a byte-order mark and nothing else); expected a "
            "benchmark result"
        )
    if "\x00" in text:
        raise CurveError(f"{path}: binary content; expected JSON, CSV or a text report")
    reach = result_reach(path) if within is None else tuple(Path(f) for f in within)
    return SourceFile(path, text, hashlib.sha256(raw).hexdigest(), reach)


def results_folder_index(parts: tuple[str, ...]) -> int:
    """Index in a path's `parts` of the innermost `results` folder followed by at least three more
    parts (an MLPerf submission's `results/<Platform>/<benchmark>/<scenario>/...`), or -1."""
    for i in range(len(parts) - 4, 0, -1):
        if parts[i] == "results":
            return i
    return -1


def result_reach(path: str | Path) -> tuple[Path, ...]:
    """Where an importer may open files beside a result file its user named (`econ throughput
    import FILE`, `import_file` in Python): the submission folder that holds the `results/`
    folder the path runs through (whose `systems/<Platform>.json` describes the system), else
    the file's own folder. A scenario's curve reaches less: `econ.throughput.resolve`."""
    parts = Path(path).absolute().parts
    i = results_folder_index(parts)
    return (Path(*parts[:i]) if i > 0 else Path(path).absolute().parent,)


NOT_READ = "system description not read"
"""How a warning begins that names a system description an importer did not open, and why."""


def companion_refusal(src: SourceFile, path: Path) -> str:
    """Why an importer does not open `path`, a file it would read beside the result `src` (a
    system description), or "" where it may: `path` must lie inside `src.within`, as written and
    with links resolved, and not be a symbolic link. A path outside is not looked at at all, so
    the answer says nothing of what lies there (`econ.files.inside_folders`)."""
    outside = (
        f"{path} lies outside {', '.join(map(str, src.within))}, where econ reads files "
        f"beside {src.path.name}: not opened (a scenario's curve reaches its own folder and the "
        "folders of econ --allow-paths DIR)"
        if src.within
        else f"{path}: not opened (econ reads no file beside {src.path.name} here)"
    )
    if not inside_folders(path, src.within, resolved=False):
        return outside
    try:
        link = path.is_symlink()
    except OSError:
        link = False
    if link:
        return f"{path} is a symbolic link: not followed (econ follows no link beside a result)"
    return "" if inside_folders(path, src.within) else outside


def require_line_end(src: SourceFile, what: str, separator: str = ":") -> None:
    """Refuse a text report or CSV whose last line has no line end: the tools end every line, so
    a file that stops mid-line was cut, and a number cut to its first digits still parses (a
    per-GPU rate of 11 for 11,076.77). `separator` splits the last line into field and value for
    the message (":" for `label: value` reports, "," for CSV rows)."""
    if src.text.endswith(("\n", "\r")):
        return
    lines = src.text.splitlines()
    last = lines[-1]
    if separator == ",":
        cells = next(csv.reader([last]), [""])
        field, value = cells[0].strip(), cells[-1].strip()
    else:
        field, _, value = (p.strip() for p in last.rpartition(separator))
    where = (
        f"line {len(lines)} (field {_shown(field, 80)}, value {_shown(value)})"
        if field
        else f"line {len(lines)} (value {_shown(value)})"
    )
    raise src.error(
        f"{where} ends without a line break: the file looks cut off in the middle of that line; "
        f"expected a complete {what}, whose every line ends with a line break (add one if "
        "the file is complete)"
    )


def _loads(src: SourceFile, text: str, where: str = ""):
    """json.loads, with nesting too deep for the parser and integers of more digits than Python
    reads refused as input errors (naming the record, the field and the number's size); `where`
    is the line of a JSON Lines file ("line 3")."""
    try:
        return load_json(text)
    except OverlongNumberError as exc:
        record = re.match(r"\[(\d+)\]\.?", exc.field)
        field = exc.field[record.end() :] if record and not where else exc.field
        if record and not where:
            where = f"record {int(record[1]) + 1}"
        place = ", ".join(p for p in (where, f"field {field!r}" if field else "") if p)
        raise src.error(f"{place or 'a value'} is {exc.value}; {EXPECTED_FINITE}") from None
    except RecursionError:
        raise src.error(f"{too_deep(text)}; expected benchmark result objects") from None


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


def nesting_depth(text: str) -> int:
    """How many levels of objects and lists a JSON text opens at most (brackets inside strings
    not counted), at array speed: read only for a refusal, on texts of any size."""
    codes = np.frombuffer(_JSON_STRING.sub("", text).encode(), dtype=np.uint8)
    opens = (codes == ord("{")) | (codes == ord("["))
    closes = (codes == ord("}")) | (codes == ord("]"))
    return int(np.cumsum(opens.astype(np.int64) - closes).max(initial=0))


def too_deep(text: str) -> str:
    """Why a JSON text the parser gave up on (RecursionError) is refused: its real depth and
    the parser's limit, Python's recursion limit less the calls already under way."""
    return (
        f"the JSON is nested too deeply to parse: {nesting_depth(text):,} levels of objects and "
        f"lists, and the parser stops short of {sys.getrecursionlimit():,} levels (Python's "
        "recursion limit); a benchmark result nests fewer than 10"
    )


def json_kind(value) -> str:
    """What a JSON value is, in words, without its content: 'a number', 'a string of 3
    characters', 'null', 'a boolean', 'a list', 'an object'."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return f"a string of {len(value):,} characters"
    return "a list" if isinstance(value, list) else "an object"


class Records(list):
    """The JSON objects of a file, with the 1-based file line of each when the file is JSON Lines
    (`lines`; None for one object or a list), so messages point at the line a user opens."""

    lines: list[int] | None = None

    def where(self, index: int) -> str:
        """'line 4' (JSON Lines) or 'record 2' (1-based position in a JSON list)."""
        if self.lines is not None:
            return f"line {self.lines[index]}"
        return f"record {index + 1}"

    def labels(self) -> list[str]:
        """Point labels for messages: where each record is, or "the run" for a single object."""
        if len(self) == 1:
            return ["the run"]
        return [self.where(i) for i in range(len(self))]


def json_records(src: SourceFile) -> Records:
    """The JSON objects in a file: one object, a list of objects, or JSON Lines.

    Python's json accepts the bare `Infinity` and `NaN` tokens SGLang writes.
    """
    text = src.text.strip()
    lead = src.text[: len(src.text) - len(src.text.lstrip())].count("\n")  # blank lines stripped
    lines: list[int] | None = None
    over = _item_over_cap(text)
    if over is not None:
        start = over + len(src.text) - len(src.text.lstrip())
        where = (
            f"record {MAX_POINTS_PER_FILE + 1:,}, at character {start + 1:,} of the file's "
            f"{len(src.text):,}"
        )
        raise too_many_points(src, "records in the JSON list", where)
    try:
        data = _loads(src, text)
    except json.JSONDecodeError as whole_error:
        records, lines = [], []
        for number, line in enumerate(lines_of(text), start=lead + 1):
            if not line.strip():
                continue
            try:
                records.append(_loads(src, line, f"line {number}"))
            except json.JSONDecodeError as line_error:
                # a first line that is not JSON by itself: report the document's own error
                exc = whole_error if number == lead + 1 else line_error
                where = (
                    f"line {exc.lineno + lead} column {exc.colno}"
                    if exc is whole_error
                    else f"line {number} column {exc.colno}"
                )
                raise src.error(
                    f"invalid or truncated JSON at {where}: {exc.msg}; "
                    "expected one JSON object, a list of objects or JSON Lines"
                ) from None
            lines.append(number)
            if len(records) > MAX_POINTS_PER_FILE:
                where = f"line {number:,} of the file's {lines_in(src.text):,}"
                raise too_many_points(src, "JSON Lines records", where) from None
        data = records
    if not isinstance(data, list | dict):
        raise src.error(scalar_json(data))
    items = Records(data if isinstance(data, list) else [data])
    items.lines = lines
    if not items:
        raise src.error("the JSON holds an empty list; expected benchmark result objects")
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise src.error(
                f"{items.where(index)} is {json_kind(item)}, expected an object of results"
            )
    return items


_BLANK = re.compile(r"[ \t\n\r]*")
_SKIM = json.JSONDecoder(parse_int=len, parse_float=len, parse_constant=len)
"""A parser that reads a JSON value through without converting its numbers (`_item_over_cap`)."""


def _item_over_cap(text: str) -> int | None:
    """Where the item after the first MAX_POINTS_PER_FILE of the JSON list `text` starts (its
    index in `text`), or None: for a list of at most that many items, and for a text that is no
    list, or not a well-formed one, whose parse says why. Items are read one at a time, each
    dropped once read: a list of 60 million empty objects is refused at its 10,001st, where
    parsed whole it took 4.7 GB."""
    if not text.startswith("["):
        return None
    index, count = _BLANK.match(text, 1).end(), 0
    if text.startswith("]", index):
        return None
    try:
        while True:
            if count == MAX_POINTS_PER_FILE:
                return index
            index = _BLANK.match(text, _SKIM.raw_decode(text, index)[1]).end()
            count += 1
            if not text.startswith(",", index):
                return None  # the list's end, or not JSON there: the parse says which
            index = _BLANK.match(text, index + 1).end()
    except (ValueError, RecursionError):  # the parse names what is wrong where
        return None


def scalar_json(value) -> str:
    """The refusal of a file that is valid JSON holding a single value, not objects."""
    return (
        f"JSON, but {json_kind(value)} where an object or a list of results was expected "
        "(a benchmark result file holds one JSON object, a list of them or JSON Lines)"
    )


MISSING_MARKERS = ("", "null", "none", "n/a", "na", "nan", "-")
"""Text a tool writes for a value it did not measure; read as missing (NaN)."""
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")


class NotANumberError(CurveError):
    """A field that is present but does not hold a number ("abc", true, "8,2")."""


class BeyondFloatError(NotANumberError):
    """A number too large for a float (a double): "1e400", an integer of 400 digits."""


_INFINITY_WORDS = re.compile(r"[+-]?(inf|infinity)", re.I)
"""How a value that means infinity is written (what float() reads as one on purpose)."""


def _shown(value, width: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def number(value, *, allow_inf: bool = False, allow_nan: bool = True, field: str = "") -> float:
    """A JSON/text value as float. None and the MISSING_MARKERS are NaN (not measured).

    Anything else that is not a number raises NotANumberError naming `field`: booleans, lists,
    objects, words, and commas other than thousands separators between groups of three digits
    ("5,494.07" is 5494.07; "8,2" is refused: a decimal comma is never guessed). Infinity is
    refused unless `allow_inf` (a request rate of "all at once"); NaN, a JSON NaN or the text
    "NaN" (not null, a missing key or another of the MISSING_MARKERS), unless `allow_nan`: where
    Infinity is a broken measurement, so is NaN.
    """
    where = f"field {field!r}" if field else "a value"
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise NotANumberError(
            f"{where} is {_shown(value)} ({type(value).__name__}); expected a number"
        )
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in MISSING_MARKERS and (allow_nan or text.lower() != "nan"):
            return math.nan
        if "," in text:
            if not _THOUSANDS.match(text):
                raise NotANumberError(
                    f"{where} is {_shown(value)}, not a number (a comma is read only as a "
                    "thousands separator, as in 5,494.07); expected a number with a decimal point"
                )
            text = text.replace(",", "")
        try:
            out = float(text)
        except ValueError:
            raise NotANumberError(f"{where} is {_shown(value)}; expected a number") from None
        if math.isinf(out) and not _INFINITY_WORDS.fullmatch(text):  # "1e400" overflows
            raise BeyondFloatError(f"{where} is {_shown(value)}, {TOO_LARGE}")
    else:
        try:
            out = float(value)
        except OverflowError:
            raise BeyondFloatError(f"{where} is {integer_shown(value)}, {TOO_LARGE}") from None
    if math.isinf(out) and not allow_inf:
        raise NotANumberError(f"{where} is {_shown(value)} (infinite); expected a finite number")
    if math.isnan(out) and not allow_nan:
        raise NotANumberError(
            f"{where} is NaN (not a number); expected a finite number (null or no key when not "
            "measured)"
        )
    return out


TOO_LARGE = f"too large for a float (beyond the largest a double holds); {EXPECTED_FINITE}"
"""Why a number beyond the float range is refused, after the value: "'1e400' is ..."."""


def first_number(record: Mapping, keys: Iterable[str], scale: float = 1.0, **kw) -> float:
    """The first key present with a numeric value, divided by `scale`; NaN when none is."""
    for key in keys:
        if key in record:
            value = number(record[key], field=key, **kw)
            if not math.isnan(value):
                return value / scale
    return math.nan


_CPU_WORDS = ("epyc", "xeon", "grace", "vera", "cpu", "core", "neoverse")
_MULTI_NODE = re.compile(
    r"(?<![a-z0-9.])(\d{1,4})\s*x\s*(\d{1,4})\s*x\s*(?=([a-z][a-z0-9]*))", re.I
)
_GPU_X_N = "a '<GPU>x<N>' pattern"
_COUNT_PATTERNS = (
    (re.compile(r"(?<![a-z0-9.])(\d{1,5})\s*x\s*(?=([a-z][a-z0-9]*))", re.I), "a '<N>x<GPU>' pattern"),
    (re.compile(r"(?<![a-z0-9.])(\d{1,5})x[_-](?=([a-z]+\d[a-z0-9]*))", re.I), "a '<N>x<GPU>' pattern"),
    (re.compile(r"(?<=[a-z0-9])x(\d{1,5})(?![0-9]|b(?![a-z]))", re.I), _GPU_X_N),
    (re.compile(r"(?<![a-z])gpus?[_-]?(\d{1,5})(?![0-9])", re.I), "a 'gpus_<N>' pattern"),
    (re.compile(r"(?<![a-z0-9.])(\d{1,5})[_-]?gpus?(?![a-z])", re.I), "a '<N>gpu' pattern"),
)  # fmt: skip
MAX_COUNT_TEXT_CHARS = 256
"""Characters of a name or metadata text read for a GPU count [characters]."""


def _is_cpu(match: re.Match) -> bool:
    word = match.group(match.lastindex) if match.lastindex and match.lastindex > 1 else ""
    return word.lower().startswith(_CPU_WORDS)


_LETTERS = frozenset(string.ascii_letters)
_NAME_CHARACTERS = _LETTERS | frozenset(string.digits)


def _after_a_number(match: re.Match) -> bool:
    """Whether the name before a '<GPU>x<N>' match's x is a bare number: a model's size
    (mixtral-8x7b, 8x22b: experts x billions of parameters), where a GPU's name holds a letter
    (H100x8, 141GBx8).

    Read backwards from the x to the first letter or the name's start, character by character:
    the characters read for all matches of a text are at most its length (each stretch ends at
    the previous match's x, a letter), where splitting the whole text before each match took
    quadratic time."""
    text, i = match.string, match.start()
    while i > 0 and text[i - 1] in _NAME_CHARACTERS:
        i -= 1
        if text[i] in _LETTERS:
            return False
    return True


def gpu_count_from_text(text: str) -> tuple[float, str]:
    """A GPU count written in a name: '4xNVIDIA_L40S', '2x-h100', 'H200-SXM-141GBx8', 'gpus_16',
    '8gpu', or a multi-node platform '9x8xMI355X_2xEPYC_9575F' (9 nodes x 8 GPUs = 72; CPU counts
    such as '2xEPYC' are skipped). A model's size is not a GPU count: in 'mixtral-8x7b' and
    'mixtral-8x22b' neither 8 nor 7 nor 22 counts GPUs ('<N>x<M>' after a bare number or followed
    by b, billions of parameters).

    Only the first MAX_COUNT_TEXT_CHARS characters are read (a file name is at most 255 bytes,
    the `gpu` metadata and platform names of the samples a few dozen characters).

    Returns (count, how it was found), or (NaN, "") when the text names no count.
    """
    text = text[:MAX_COUNT_TEXT_CHARS]
    for match in _MULTI_NODE.finditer(text):
        if not _is_cpu(match):
            nodes, per_node = int(match.group(1)), int(match.group(2))
            if 0 < nodes * per_node <= MAX_GPU_COUNT:
                return float(nodes * per_node), "a '<nodes>x<N>x<GPU>' pattern"
    for pattern, how in _COUNT_PATTERNS:
        for match in pattern.finditer(text):
            if _is_cpu(match) or (how == _GPU_X_N and _after_a_number(match)):
                continue
            if 0 < int(match.group(1)) <= MAX_GPU_COUNT:
                return float(match.group(1)), how
    return math.nan, ""


PER_GPU_TOLERANCE = 0.01
"""Relative gap allowed between per-GPU x GPU count and the system rate (printed rounding)."""


def count_from_ratio(system: float, per_gpu: float) -> float:
    """The GPU count a file implies as system rate / per-GPU rate, when that is an integer within
    1% (the two rates are printed rounded); NaN otherwise."""
    if not (system > 0 and per_gpu > 0):
        return math.nan
    ratio = system / per_gpu
    count = round(ratio)
    return (
        float(count)
        if 1 <= count <= MAX_GPU_COUNT and abs(ratio - count) <= 0.01 * count
        else math.nan
    )


@dataclass
class Provenance:
    """What a file says about itself; importers fill what they find and leave the rest ""."""

    tool: str
    tool_version: str = ""
    model: str = ""
    hardware: str = ""
    precision: str = ""
    gpu_count_basis: str = ""
    latency_unit: str = ""
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def apply_gpu_count(
    records: list[dict],
    src: SourceFile,
    prov: Provenance,
    gpu_count: float | None,
) -> None:
    """Fill `gpu_count`: the caller's value first, then the file's, then a count in the file name.

    A caller's count that differs from one the file states (records already holding a count, how
    in `prov.gpu_count_basis`) replaces it with a warning naming both. With a caller's count the
    system output rate is the measured figure (the file's, or its per-GPU rate x its own count)
    and the per-GPU rate is that / the caller's count, whatever per-GPU figure the file gives; a
    per-GPU rate is kept only when the file gives neither a system rate nor a count."""
    if gpu_count is not None:
        if not (
            isinstance(gpu_count, int | float)
            and not isinstance(gpu_count, bool)
            and math.isfinite(gpu_count)
            and float(gpu_count).is_integer()
            and 1 <= gpu_count <= MAX_GPU_COUNT
        ):
            raise ImplausibleValueError(
                f"{src.path}: GPU count (--gpus) is {gpu_count!r}; expected a whole number of GPUs "
                f"from 1 to {MAX_GPU_COUNT:,}"
            )
        stated = sorted(
            {r["gpu_count"] for r in records if not math.isnan(r.get("gpu_count", math.nan))}
            - {float(gpu_count)}
        )
        recomputed = _per_gpu_from_system(records, float(gpu_count))
        if stated:
            counts = " and ".join(f"{c:g}" for c in stated)
            basis = f", from {prov.gpu_count_basis}" if prov.gpu_count_basis else ""
            prov.warnings.append(
                f"the GPU count (--gpus) {gpu_count:g} overrides the file's {counts} "
                f"GPU{'s' if stated != [1.0] else ''}{basis}; the per-GPU rates are the system "
                f"output rates divided by {gpu_count:g}"
            )
        if recomputed:
            prov.warnings.append(
                f"the file's output_tokens_per_s_per_gpu of {counted(recomputed, 'point')} is not "
                f"its system output rate / the GPU count (--gpus) {gpu_count:g}; the per-GPU "
                f"rates are the system output rates divided by {gpu_count:g}"
            )
        prov.gpu_count_basis = "given by the user"
        return
    if all(not math.isnan(r.get("gpu_count", math.nan)) for r in records):
        return
    count, how = gpu_count_from_text(src.name)
    if not math.isnan(count):
        for record in records:
            if math.isnan(record.get("gpu_count", math.nan)):
                record["gpu_count"] = count
        prov.gpu_count_basis = f"file name ({how} in '{src.name}')"
        prov.warnings.append(
            f"GPU count {count:g} taken from the file name '{src.name}', not from the file; "
            "pass the GPU count explicitly (--gpus) if that is wrong"
        )
        return
    prov.gpu_count_basis = "unknown"
    if all(r.get("output_tokens_per_s_per_gpu", math.nan) > 0 for r in records):
        prov.warnings.append(  # (the per-GPU rate is what a scenario reads: nothing is missing)
            "the file gives the output rate per GPU but not how many GPUs served the run: the "
            "system's total rate is unknown (pass --gpus N to have it)"
        )
        return
    prov.warnings.append(
        "the file does not say how many GPUs served the run: per-GPU throughput is unknown "
        "(pass --gpus N)"
    )


def _per_gpu_from_system(records: list[dict], gpu_count: float) -> int:
    """Set every record's GPU count to the caller's and its per-GPU output rate to the system
    rate / that count: the system rate is what the run measured (a file with a per-GPU rate and
    a count of its own gives it as their product). Returns how many records held a per-GPU rate
    the file's count did not explain and that was so replaced (the file implied another count)."""
    unexplained = 0
    for record in records:
        system = record.get("output_tokens_per_s", math.nan)
        per_gpu = record.get("output_tokens_per_s_per_gpu", math.nan)
        own = record.get("gpu_count", math.nan)
        if not system > 0 and per_gpu > 0 and own > 0:
            record["output_tokens_per_s"] = per_gpu * own
        elif system > 0 and per_gpu > 0 and not own > 0:
            unexplained += abs(system / gpu_count - per_gpu) > PER_GPU_TOLERANCE * per_gpu
        if record.get("output_tokens_per_s", math.nan) > 0:
            record["output_tokens_per_s_per_gpu"] = math.nan  # derived from the system rate
        record["gpu_count"] = gpu_count
    return unexplained


def description_not_used(exc: Exception) -> str:
    """The warning for a system description that cannot be read beside a GPU count given: the
    count is not taken from it, so it is only said, not fatal."""
    return f"{exc}; the system description is not used: the GPU count is the one given (--gpus)"


def _derive(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame
    total, output, inp = (
        out["total_tokens_per_s"],
        out["output_tokens_per_s"],
        out["input_tokens_per_s"],
    )
    out["total_tokens_per_s"] = total.where(total.notna(), output + inp)
    out["input_tokens_per_s"] = inp.where(inp.notna(), out["total_tokens_per_s"] - output)
    per_gpu = out["output_tokens_per_s_per_gpu"]
    out["output_tokens_per_s_per_gpu"] = per_gpu.where(per_gpu.notna(), output / out["gpu_count"])
    out["output_tokens_per_s"] = output.where(
        output.notna(), out["output_tokens_per_s_per_gpu"] * out["gpu_count"]
    )
    return out


def _check_total_covers_output(
    frame: pd.DataFrame, input_derived: np.ndarray, src: SourceFile, labels: list[str]
) -> None:
    """Refuse a total token rate below the output rate, naming both: the input rate derived from
    them (total - output) would otherwise be refused as a negative input_tokens_per_s, a figure
    the file does not hold."""
    total, output = frame["total_tokens_per_s"], frame["output_tokens_per_s"]
    below = input_derived & (total < output).to_numpy()
    if below.any():
        i = int(np.flatnonzero(below)[0])
        raise ImplausibleValueError(
            f"{src.path}: {labels[i]}: total_tokens_per_s is {total.iloc[i]:.6g}, below "
            f"output_tokens_per_s {output.iloc[i]:.6g}; expected the total (input + output "
            "tokens/s) to be at least the output rate"
        )


def _check_values(frame: pd.DataFrame, src: SourceFile, labels: list[str]) -> None:
    """Refuse negative, infinite or zero measurements: a zero is a failed run, not a data point."""
    numeric = [
        c for c in frame.columns if c not in ("workload", "config") and frame[c].dtype.kind in "fi"
    ]
    for column in numeric:
        values = frame[column].to_numpy(dtype=float)
        bad_inf = np.isinf(values) & (column != "request_rate_per_s")
        negative = values < 0
        zero = (values == 0) & (
            column.startswith(LATENCY_PREFIXES)
            or column
            in (
                "output_tokens_per_s",
                "output_tokens_per_s_per_gpu",
                "tokens_per_s_per_user",
                "gpu_count",
                "duration_s",
                "concurrency",
                "request_rate_per_s",
                "output_tokens_mean",
            )
        )
        for mask, what in ((bad_inf, "infinite"), (negative, "negative"), (zero, "zero")):
            if mask.any():
                i = int(np.flatnonzero(mask)[0])
                hint = (
                    " (a run in which no request succeeded reports zeros; it is not a measurement)"
                    if what == "zero"
                    else ""
                )
                raise src.error(
                    f"{labels[i]}: {column} is {what} ({float(values[i])!r}); expected a positive "
                    f"measured value{hint}"
                )
    missing = frame["output_tokens_per_s"].isna() & frame["output_tokens_per_s_per_gpu"].isna()
    if missing.any():
        i = int(np.flatnonzero(missing.to_numpy())[0])
        raise src.error(
            f"{labels[i]}: no output-token throughput (missing or NaN); every point needs output "
            "tokens/s for the system or per GPU"
        )


UNKNOWN_HARDWARE_CEILING_TOKENS_PER_S_PER_GPU = 1e7
"""Output tokens/s per GPU no measurement can exceed when the hardware or model is not in the
catalogs: 2 FLOPs per parameter per token for a 100M-parameter model at 2 PFLOP/s dense FP8 (an
H100) is 1e7 tokens/s [tokens/s/GPU]."""
UNUSUAL_SHARE_OF_CEILING = 0.5
UNUSUAL_TOKENS_PER_S_PER_GPU = 1e5
"""Above this (or half the catalog speed of light) a per-GPU output rate is possible but unusual."""
MAX_LATENCY_S = 1e6
"""No benchmark request waits 11.6 days for a token: a latency above this is not a measurement [s]."""
MAX_TOKENS_PER_S_PER_USER = 1e6
"""A per-user speed above this means a TPOT below 1 microsecond [tokens/s]."""
INPUT_CEILING_FACTOR = 10.0
"""Prefill runs up to ~10x faster than decode per GPU; input and total rates get this headroom."""
PERCENTILE_ORDER = ("p50", "p90", "p95", "p99")
PERCENTILE_TOLERANCE = 1e-6
"""Relative slack in the percentile-order check for statistics printed rounded."""
_SPEED_OF_LIGHT_LENGTHS = tuple((i, o) for i in (1, 128, 1024) for o in (128, 1024, 4096, 16384))
_SPEED_OF_LIGHT_DRAFTS = ((0, 1.0), (7, 8.0))
_HARDWARE_NAMES = (
    (re.compile(r"(?:(?<![a-z0-9])|(?<=\dx))gb300(?![0-9])", re.I), "gb300-nvl72"),
    (re.compile(r"(?:(?<![a-z0-9])|(?<=\dx))gb200(?![0-9])", re.I), "gb200-nvl72"),
    (re.compile(r"(?:(?<![a-z0-9])|(?<=\dx))b300(?![0-9])", re.I), "b300-sxm"),
    (re.compile(r"(?:(?<![a-z0-9])|(?<=\dx))b200(?![0-9])", re.I), "b200-sxm"),
    (re.compile(r"(?:(?<![a-z0-9])|(?<=\dx))h200(?![0-9])", re.I), "h200-sxm"),
    (re.compile(r"(?:(?<![a-z0-9])|(?<=\dx))h100(?![0-9])", re.I), "h100-sxm"),
    (re.compile(r"(?:(?<![a-z0-9])|(?<=\dx))mi355x?(?![0-9])", re.I), "mi355x"),
    (re.compile(r"(?:(?<![a-z0-9])|(?<=\dx))mi325x?(?![0-9])", re.I), "mi325x"),
    (re.compile(r"(?:(?<![a-z0-9])|(?<=\dx))mi300x(?![0-9])", re.I), "mi300x"),
)
"""Catalog hardware a name refers to; a PCIe or NVL variant maps to the faster SXM part, so the
ceiling stays an upper bound."""
_MODEL_DECORATIONS = {
    "instruct", "chat", "hf", "fp8", "fp4", "nvfp4", "mxfp4", "bf16", "fp16", "int4", "int8",
    "awq", "gptq", "meta", "99", "99.9", "it", "base", "dynamic", "w4a16", "w8a8", "interactive",
}  # fmt: skip


def _norm_name(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def catalog_hardware(text: str) -> str:
    """The hardware catalog key a free-text hardware name refers to, or ""."""
    for pattern, key in _HARDWARE_NAMES:
        if pattern.search(text or ""):
            return key
    return ""


def catalog_model(text: str) -> str:
    """The LLM catalog key a model name refers to, or "": the name's last path part with
    decorations (instruct, chat, fp8, 99, dates) dropped must equal a catalog key exactly, so a
    distilled or resized variant never borrows a bigger model's ceiling."""
    from econ.llms import load_llm_catalog

    base = (text or "").strip().split("/")[-1]
    tokens = [
        t
        for t in re.split(r"[-_ ]+", base.lower())
        if t and t not in _MODEL_DECORATIONS and not re.fullmatch(r"\d{4}", t)
    ]
    name = _norm_name("".join(tokens))
    for key in load_llm_catalog():
        if name and _norm_name(key) == name:
            return key
    return ""


@catalog_cache(maxsize=64)
def catalog_ceiling(hardware_key: str, model_key: str) -> float:
    """The largest speed of light of a catalog hardware/model pair over short to long requests,
    with and without ideal speculative decoding (7 drafts, all accepted) [tokens/s/GPU].

    The ceiling is taken over lengths because files rarely state them reliably; it is the
    simulator's physics with every efficiency at 1 (econ.throughput.simulator.speed_of_light)."""
    from econ.hardware import get_hardware
    from econ.throughput.simulator import speed_of_light

    hw = get_hardware(hardware_key)
    best = 0.0
    for input_tokens, output_tokens in _SPEED_OF_LIGHT_LENGTHS:
        for drafts, accepted in _SPEED_OF_LIGHT_DRAFTS:
            try:
                value = speed_of_light(
                    hw,
                    model_key,
                    hw.default_precision,
                    input_tokens=input_tokens,
                    output_tokens=output_tokens,
                    draft_tokens=drafts,
                    accepted_tokens=accepted,
                )
            except InputError:  # the model does not fit this length: no bound from it
                continue
            best = max(best, float(value))
    return best


def ceiling_for(hardware: str, model: str) -> tuple[float, str]:
    """Per-GPU output ceiling for a point and where it comes from."""
    hw_key, model_key = catalog_hardware(hardware), catalog_model(model)
    if hw_key and model_key:
        value = catalog_ceiling(hw_key, model_key)
        if value > 0:
            return value, f"the speed of light of {model_key} on {hw_key}"
    return (
        UNKNOWN_HARDWARE_CEILING_TOKENS_PER_S_PER_GPU,
        "the ceiling for hardware or a model not in the catalogs",
    )


def check_plausible(frame: pd.DataFrame, src: SourceFile, labels: list[str]) -> list[str]:
    """Refuse what cannot be a measurement (ImplausibleValueError naming the point, the field and
    the value); return warnings for values that are possible but unusual.

    Refused: GPU counts that are not whole numbers from 1 to MAX_GPU_COUNT; fewer than one
    completed request (or a fractional count); percentiles out of order (p50 <= p90 <= p95 <= p99);
    latencies above MAX_LATENCY_S; per-user speeds above MAX_TOKENS_PER_S_PER_USER; per-GPU output
    above the speed of light of the hardware and model (catalog) or, when either is unknown,
    UNKNOWN_HARDWARE_CEILING_TOKENS_PER_S_PER_GPU; a system output rate that would need more than
    MAX_GPU_COUNT GPUs at that ceiling; input or total rates above INPUT_CEILING_FACTOR x it.
    """
    warnings: list[str] = []

    def refuse(i: int, column: str, value: float, expected: str) -> ImplausibleValueError:
        return ImplausibleValueError(
            f"{src.path}: {labels[i]}: {column} is {value:.6g}; {expected}; not a measurement"
        )

    def values(column: str) -> np.ndarray:
        return frame[column].to_numpy(dtype=float)

    def first(mask: np.ndarray) -> int | None:
        return int(np.flatnonzero(mask)[0]) if mask.any() else None

    gpus = values("gpu_count")
    whole = np.isnan(gpus) | ((gpus == np.floor(gpus)) & (gpus >= 1) & (gpus <= MAX_GPU_COUNT))
    if (i := first(~whole)) is not None:
        raise refuse(
            i, "gpu_count", gpus[i], f"expected a whole number of GPUs from 1 to {MAX_GPU_COUNT:,}"
        )
    completed = values("completed_requests")
    counted_ok = np.isnan(completed) | (
        np.isfinite(completed) & (completed >= 1) & (completed == np.floor(completed))
    )
    if (i := first(~counted_ok)) is not None:
        raise refuse(
            i, "completed_requests", completed[i], "expected a whole number of at least 1 request"
        )
    for i in np.flatnonzero((completed >= 1) & (completed < 10)):
        warnings.append(
            f"{labels[i]}: only {completed[i]:g} completed requests; the statistics are noisy"
        )
    for metric in ("ttft_s", "tpot_s", "e2e_s"):
        for stat in LATENCY_STATS_ALL:
            column = f"{metric}_{stat}"
            if column not in frame:
                continue
            latency = values(column)
            if (i := first(latency > MAX_LATENCY_S)) is not None:
                raise refuse(i, column, latency[i], f"expected a latency below {MAX_LATENCY_S:g} s")
        if metric == "e2e_s":
            continue
        for low, high in itertools.combinations(PERCENTILE_ORDER, 2):
            a, b = values(f"{metric}_{low}"), values(f"{metric}_{high}")
            for i in np.flatnonzero(a > b * (1 + PERCENTILE_TOLERANCE)):
                raise ImplausibleValueError(
                    f"{src.path}: {labels[i]}: {metric}_{high} ({b[i]:.6g} s) is below "
                    f"{metric}_{low} ({a[i]:.6g} s); percentiles must not decrease "
                    "(p50 <= p90 <= p95 <= p99)"
                )
    user = values("tokens_per_s_per_user")
    if (i := first(user > MAX_TOKENS_PER_S_PER_USER)) is not None:
        raise refuse(
            i,
            "tokens_per_s_per_user",
            user[i],
            f"expected at most {MAX_TOKENS_PER_S_PER_USER:g} tokens/s (TPOT of 1 us)",
        )
    per_gpu, system = values("output_tokens_per_s_per_gpu"), values("output_tokens_per_s")
    ceilings, bases = _ceilings(frame)
    count_or_most = np.where(gpus >= 1, gpus, MAX_GPU_COUNT)
    bounds = INPUT_CEILING_FACTOR * ceilings * count_or_most
    inputs, totals = values("input_tokens_per_s"), values("total_tokens_per_s")
    over = (
        (per_gpu > ceilings)
        | (np.isnan(per_gpu) & (system > ceilings * MAX_GPU_COUNT))
        | (inputs > bounds)
        | (totals > bounds)
    )
    if over.any():  # the first point out of bounds, with the first bound it breaks
        i = int(np.flatnonzero(over)[0])
        ceiling, basis, bound = ceilings[i], bases[i], bounds[i]
        if per_gpu[i] > ceiling:
            raise refuse(
                i,
                "output_tokens_per_s_per_gpu",
                per_gpu[i],
                f"expected at most {ceiling:,.0f} tokens/s per GPU ({basis})",
            )
        if math.isnan(per_gpu[i]) and system[i] > ceiling * MAX_GPU_COUNT:
            raise refuse(
                i,
                "output_tokens_per_s",
                system[i],
                f"even {MAX_GPU_COUNT:,} GPUs at {ceiling:,.0f} tokens/s each ({basis}) cannot "
                "produce it",
            )
        column, v = (
            ("input_tokens_per_s", inputs[i])
            if inputs[i] > bound
            else ("total_tokens_per_s", totals[i])
        )
        raise refuse(
            i, column, v, f"expected at most {bound:.3g} tokens/s ({basis}, x10 for prefill)"
        )
    unusual = np.minimum(UNUSUAL_TOKENS_PER_S_PER_GPU, UNUSUAL_SHARE_OF_CEILING * ceilings)
    high, large = per_gpu > unusual, gpus > 10_000
    for i in np.flatnonzero(high | large):
        if high[i]:
            warnings.append(
                f"{labels[i]}: {per_gpu[i]:,.0f} output tokens/s per GPU is unusually high (above "
                f"{unusual[i]:,.0f}; ceiling {ceilings[i]:,.0f} from {bases[i]}); check the GPU "
                "count"
            )
        if large[i]:
            warnings.append(f"{labels[i]}: {gpus[i]:,.0f} GPUs is an unusually large system")
    ttft, tpot = values("ttft_s_mean"), values("tpot_s_mean")
    for i in np.flatnonzero((ttft > 600) | (tpot > 5)):
        if ttft[i] > 600:
            warnings.append(f"{labels[i]}: mean TTFT {ttft[i]:.4g} s is unusually long")
        if tpot[i] > 5:
            warnings.append(f"{labels[i]}: mean TPOT {tpot[i]:.4g} s is unusually long")
    return warnings


def _ceilings(frame: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Each point's per-GPU output ceiling and its basis (`ceiling_for`), looked up once per
    distinct hardware and model pair: a file's points share one or a few."""
    pairs = list(zip(frame["hardware"].astype(str), frame["model"].astype(str), strict=True))
    found = {pair: ceiling_for(*pair) for pair in dict.fromkeys(pairs)}
    return (
        np.array([found[pair][0] for pair in pairs], dtype=float),
        [found[pair][1] for pair in pairs],
    )


def _check_duplicates(
    frame: pd.DataFrame, src: SourceFile, labels: list[str], repeats: str
) -> list[str]:
    """Points at one load level (same workload, configuration, concurrency and request rate).

    Identical copies are always an error. Differing ones are repeat runs: kept with a warning
    when `repeats` is "warn" (appended benchmark logs), an error when "error" (hand-made tables).
    """
    key = frame[["workload", "config"]].copy()
    key["concurrency"] = frame["concurrency"].fillna(-1.0)
    key["rate"] = frame["request_rate_per_s"].fillna(-1.0)
    has_load = (frame["concurrency"].notna() | frame["request_rate_per_s"].notna()).to_numpy()
    dup = key.duplicated(keep=False).to_numpy() & has_load
    warnings = []
    seen: set[int] = set()
    for first in np.flatnonzero(dup):
        if first in seen:
            continue
        same = [j for j in np.flatnonzero(dup) if (key.iloc[j] == key.iloc[first]).all()]
        seen.update(same)
        names = ", ".join(labels[j] for j in same)
        level = describe_load(
            frame["concurrency"].iloc[first], frame["request_rate_per_s"].iloc[first]
        )
        measured = frame.iloc[same][["output_tokens_per_s", "ttft_s_mean", "tpot_s_mean"]]
        if repeats != "warn" or measured.duplicated().any():
            raise src.error(
                f"duplicate load level: {names} share {level} with the same workload and "
                "configuration; expected one measurement per load level (label repeat runs "
                "in a config column, or split them into separate files)"
            )
        warnings.append(
            f"{names} measure the same load level ({level}): kept as repeat runs, each a point"
        )
    return warnings


def describe_load(concurrency: float, rate_per_s: float) -> str:
    """'concurrency 64, request rate inf/s' with unknown parts said in words."""
    conc = "no concurrency limit" if math.isnan(concurrency) else f"concurrency {concurrency:g}"
    if math.isnan(rate_per_s):
        return conc
    rate = "all requests at once" if math.isinf(rate_per_s) else f"request rate {rate_per_s:g}/s"
    return f"{conc}, {rate}"


_STAT_WORDS = {"mean": "mean", "p50": "median", "p90": "p90", "p95": "p95", "p99": "p99"}


def latency_unit_findings(points: pd.DataFrame) -> list[tuple[int, str, float]]:
    """Points whose latencies look off by 1000: (row, what is wrong, factor that would fix it).

    factor 1e3 means the values look like milliseconds stored as seconds (divide by 1000);
    1e-3 the reverse. Checks, on every TPOT and TTFT statistic present (mean, median, p90, p95,
    p99: a file may give percentiles only): TPOT and TTFT within physical ranges, and the system
    output rate at most LITTLE_RATIO_MAX x concurrency / TPOT (Little's law: each request in
    flight emits at most 1/TPOT tokens/s; Little 1961, doi:10.1287/opre.9.3.383), with the
    smallest TPOT statistic present, the loosest bound (a tail percentile is above the mean; on
    the samples, output x p99 TPOT / concurrency is at most 2.3).
    """
    findings = []

    def present(metric: str) -> list[tuple[str, np.ndarray]]:
        return [
            (_STAT_WORDS[stat], points[f"{metric}_{stat}"].to_numpy(dtype=float))
            for stat in LATENCY_STATS_ALL
            if f"{metric}_{stat}" in points
        ]

    tpots, ttfts = present("tpot_s"), present("ttft_s")
    output = points["output_tokens_per_s"].to_numpy(dtype=float)
    conc = points["concurrency"].to_numpy(dtype=float)
    # The rows that may hold a finding, at array speed (the Little bound with a margin for the
    # rounding of another order of operations); only those are then read one by one
    candidate = np.zeros(len(points), dtype=bool)
    smallest = np.full(len(points), np.nan)
    for _, t in tpots:
        candidate |= (t < TPOT_S_MIN) | (t > TPOT_S_MAX)
        smallest = np.fmin(smallest, np.where(t > 0, t, np.nan))
    for _, f in ttfts:
        candidate |= (f < TTFT_S_MIN) | (f > TTFT_S_MAX)
    with np.errstate(divide="ignore", invalid="ignore"):
        candidate |= output * smallest / conc > LITTLE_RATIO_MAX * (1 - 1e-9)
    for i in np.flatnonzero(candidate):
        found = _range_finding(
            [(word, v[i]) for word, v in tpots], [(word, v[i]) for word, v in ttfts]
        )
        if found is None:
            found = _little_finding(output[i], conc[i], [(word, v[i]) for word, v in tpots])
        if found is not None:
            findings.append((int(i), *found))
    return findings


def _range_finding(tpots, ttfts) -> tuple[str, float] | None:
    """The first TPOT or TTFT statistic outside its physical range that the factor 1000 would
    bring inside: (what is wrong, factor)."""
    for word, t in tpots:
        if t < TPOT_S_MIN and TPOT_S_MIN <= t * 1e3 <= TPOT_S_MAX:
            return (
                f"{word} TPOT {t:.3g} s ({1 / t:,.0f} tokens/s per user) is below "
                f"{TPOT_S_MIN:g} s ({1 / TPOT_S_MIN:,.0f} tokens/s per user, several times the "
                "fastest published serving speed)",
                1e-3,
            )
        if t > TPOT_S_MAX and TPOT_S_MIN <= t / 1e3 <= TPOT_S_MAX:
            return f"{word} TPOT {t:.3g} s is above {TPOT_S_MAX:g} s", 1e3
    for word, f in ttfts:
        if f < TTFT_S_MIN and f * 1e3 >= TTFT_S_MIN:
            return f"{word} TTFT {f:.3g} s is below {TTFT_S_MIN:g} s", 1e-3
        if f > TTFT_S_MAX:
            return f"{word} TTFT {f:.3g} s is above a day", 1e3
    return None


def _little_finding(output: float, conc: float, tpots) -> tuple[str, float] | None:
    """Little's law with the smallest TPOT statistic present: (what is wrong, 1e3) or None."""
    known = [(t, word) for word, t in tpots if t > 0]
    if not known:
        return None
    t, word = min(known)
    bound = conc / t
    ratio = output / bound
    if ratio > LITTLE_RATIO_MAX and ratio / 1e3 <= LITTLE_RATIO_MAX:
        return (
            f"output {output:.4g} tokens/s exceeds concurrency {conc:g} / {word} TPOT "
            f"{t:.3g} s = {bound:.4g} tokens/s by {ratio:.0f}x",
            1e3,
        )
    return None


_UNIT_WORDS = {"ns": "nanoseconds", "us": "microseconds", "ms": "milliseconds", "s": "seconds"}
_UNIT_ORDER = ("ns", "us", "ms", "s")


def stated_unit(source: str) -> str:
    """The one latency unit a provenance `latency_unit` text states ('ms (stated by the _ms key
    suffix)' -> 'ms', 'stated in the headers (s)' -> 's'), or "" when it states several or none."""
    found = re.match(r"^(ns|us|ms|s)\b", source) or re.search(
        r"stated in the headers \((ns|us|ms|s)\)$", source
    )
    return found.group(1) if found else ""


def check_latency_units(frame: pd.DataFrame, src: SourceFile, labels: list[str], unit: str) -> None:
    """Raise LatencyUnitError when the file's latencies contradict its stated unit.

    `unit` is the provenance text saying where the unit came from (`Provenance.latency_unit`)."""
    findings = latency_unit_findings(frame)
    if not findings:
        return
    i, what, factor = findings[0]
    stated = stated_unit(unit)
    step = 1 if factor < 1 else -1  # too small: the values are in the next coarser unit
    index = _UNIT_ORDER.index(stated) + step if stated else -1
    if 0 <= index < len(_UNIT_ORDER):
        looks = (
            f"the latencies look like {_UNIT_WORDS[_UNIT_ORDER[index]]} while the file states "
            f"{_UNIT_WORDS[stated]}"
        )
    else:
        size = "small" if factor < 1 else "large"
        looks = f"the latencies look 1000 times too {size} for the unit the file states ({unit})"
    raise LatencyUnitError(
        f"{src.path}: {labels[i]}: {what}, which is not physically plausible; {looks}. Expected "
        "latencies in the stated unit; fix the unit in the file (or its column names) and "
        "import again" + (f" ({len(findings)} points affected)" if len(findings) > 1 else "")
    )


def finish_curve(
    records: list[dict],
    src: SourceFile,
    prov: Provenance,
    *,
    labels: list[str] | None = None,
    check_units: bool = True,
    repeats: str = "error",
    keep_point_provenance: bool = False,
) -> Curve:
    """Validate parsed records and return the file's Curve with provenance on every point.

    `keep_point_provenance` keeps tool, version, source file and hash already on the points (a
    curve CSV written by econ) and fills only the blanks with this file's.
    """
    if not records:
        raise src.error("no benchmark results found in the file")
    labels = labels or (
        [f"record {i}" for i in range(1, len(records) + 1)] if len(records) > 1 else ["the run"]
    )
    frame = with_all_columns(pd.DataFrame.from_records(records))
    input_derived = frame["input_tokens_per_s"].isna().to_numpy()
    frame = _derive(frame)
    user = frame["tokens_per_s_per_user"]
    tpot = frame["tpot_s_mean"].where(frame["tpot_s_mean"].notna(), frame["tpot_s_p50"])
    frame["tokens_per_s_per_user"] = user.where(user.notna(), 1.0 / tpot.where(tpot > 0))
    from_median = user.isna() & frame["tpot_s_mean"].isna() & frame["tpot_s_p50"].notna()
    if from_median.any():
        prov.warnings.append(
            "no mean TPOT in the file: tokens/s per user is 1 / median TPOT, which is not the "
            "mean per-user speed"
        )
    for column in ("model", "hardware", "precision"):
        frame[column] = frame[column].where(frame[column] != "", getattr(prov, column))
    prov.warnings.extend(check_plausible(frame, src, labels))
    _check_total_covers_output(frame, input_derived, src, labels)
    _check_values(frame, src, labels)
    if check_units:
        check_latency_units(frame, src, labels, prov.latency_unit or "seconds")
    prov.warnings.extend(_check_duplicates(frame, src, labels, repeats))

    warnings = list(dict.fromkeys(prov.warnings))
    for column, value in (
        ("tool", prov.tool),
        ("tool_version", prov.tool_version),
        ("source_file", src.name),
        ("file_sha256", src.sha256),
    ):
        keep = (frame[column] != "") & keep_point_provenance
        frame[column] = frame[column].where(keep, value)
    _check_name_lengths(frame, src, labels)
    point_warnings = frame["warnings"].fillna("")
    frame["warnings"] = _point_warnings(point_warnings, warnings, labels)
    provenance = {
        "tool": prov.tool,
        "tool_version": prov.tool_version,
        "file": str(src.path),
        "file_sha256": src.sha256,
        "model": prov.model or _single(frame["model"]),
        "hardware": prov.hardware or _single(frame["hardware"]),
        "precision": prov.precision or _single(frame["precision"]),
        "gpu_count_basis": prov.gpu_count_basis or "file",
        "latency_unit": prov.latency_unit,
        "notes": list(prov.notes),
    }
    carried = {w for ws in point_warnings for w in ws.split(POINT_WARNING_SEPARATOR) if w}
    return Curve(
        points=frame,
        provenance=provenance,
        warnings=tuple(dict.fromkeys(warnings + sorted(carried))),
    )


MAX_NAME_CHARS = 1_000
"""Longest model, hardware, precision, tool or version name a file may give [characters]: a
Hugging Face model id is at most 96, MLPerf platform names a few dozen. As the MLPerf Endpoints
descriptors' names and the generic CSV's headers, a longer one is refused, not cut."""
NAME_COLUMNS = ("model", "hardware", "precision", "tool", "tool_version")


def _check_name_lengths(frame: pd.DataFrame, src: SourceFile, labels: list[str]) -> None:
    """Refuse a point whose name (NAME_COLUMNS) is longer than MAX_NAME_CHARS."""
    for column in NAME_COLUMNS:
        lengths = frame[column].str.len().to_numpy()
        over = np.flatnonzero(lengths > MAX_NAME_CHARS)
        if over.size:
            i = int(over[0])
            raise src.error(
                f"{labels[i]}: the {column} name is {int(lengths[i]):,} characters long; "
                f"expected at most {MAX_NAME_CHARS:,} (a Hugging Face model id is at most 96)"
            )


POINT_WARNING_SEPARATOR = " | "
"""Joins the warnings of one point in the `warnings` column."""


def _point_warnings(cells: pd.Series, warnings: list[str], labels: list[str]) -> list[str]:
    """Each point's own warnings: those it already carried (a curve CSV re-imported) and those of
    `warnings` that name it (`line 7: only 3 completed requests`). The file's other warnings stay
    on the curve (`Curve.warnings`), once: copied into every point they made a file of n runs
    hold n^2 warnings."""
    index = {label: i for i, label in enumerate(labels)}
    own = [[w for w in cell.split(POINT_WARNING_SEPARATOR) if w] for cell in cells]
    for warning in warnings:
        i = index.get(warning.split(": ", 1)[0])
        if i is not None:
            own[i].append(warning)
    return [POINT_WARNING_SEPARATOR.join(dict.fromkeys(ws)) for ws in own]


def _single(values: pd.Series) -> str:
    distinct = sorted({v for v in values if v})
    return "; ".join(distinct)


def label_pairs(pairs: Iterable[tuple[str, object]]) -> str:
    """'k=v, k=v' for the pairs whose value is set, to label a workload or configuration."""
    parts = []
    for key, value in pairs:
        if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        parts.append(f"{key}={value}")
    return ", ".join(parts)
