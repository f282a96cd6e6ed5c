"""`econ verify` against forged and malformed documents (a security review's findings).

An HTML memo verifies only if it is, character for character, the memo econ renders from its own
stamp: a style rule, a script, a chart's text, an image or any element econ does not write can
show a reader figures other than the text `verify` reads, so each is a difference (exit 1, naming
the markup). A stamp or document not in the form econ writes (a field of the wrong type, a case
name econ refuses, a data-value that is not a number, an unreadable PDF, a workbook's Notes sheet
without its columns) exits 3, naming the file and what was expected, with no traceback.
"""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path

import pytest

from econ.cli import main
from econ.files import size_text
from econ.memo.build import MAX_CASES, TORNADO_CANDIDATES
from econ.memo.verify import MAX_MEMO_BYTES

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "models" / "scenarios"
SEED = SCENARIOS / "deepseek-r1-gb200-nvl72.toml"
STACK = SCENARIOS / "deepseek-r1-gb200-nvl72-capital-stack.toml"
STAMP = re.compile(r'(<script type="application/json" id="econ-stamp">)(.*?)(</script>)', re.S)


@pytest.fixture(scope="module")
def memo_html(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("memo") / "memo.html"
    assert main(["memo", str(SEED), "--out", str(out)]) == 0
    return out


def _verify(capsys, path: Path) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", str(path)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _write(tmp_path: Path, text: str, name: str = "edited.html") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def _with_stamp_text(text: str, stamp_text: str) -> str:
    match = STAMP.search(text)
    return text[: match.start(2)] + stamp_text + text[match.end(2) :]


def _with_stamp(text: str, change) -> str:
    stamp = json.loads(STAMP.search(text).group(2))
    change(stamp)
    return _with_stamp_text(text, json.dumps(stamp).replace("<", "\\u003c"))


def test_genuine_memos_verify_also_with_crlf_line_ends(memo_html, tmp_path, capsys):
    code, out = _verify(capsys, memo_html)
    assert code == 0, out
    # a browser reads CR LF as LF: an editor's line ends change nothing a reader sees
    text = memo_html.read_text(encoding="utf-8").replace("\n", "\r\n")
    code, out = _verify(capsys, _write(tmp_path, text, "crlf.html"))
    assert code == 0, out
    stack = tmp_path / "stack.html"
    assert main(["memo", str(STACK), "--out", str(stack)]) == 0
    code, out = _verify(capsys, stack)
    assert code == 0, out


NPV = '[data-key="base.npv_usd"]'
FORGED = {
    # the reviewer's three: each draws NPV as +4,836,738 while the text verify read is true
    "css": (
        "</style>",
        f'.figure{NPV} {{ font-size: 0; }} .figure{NPV}::after {{ content: "+4,836,738"; }}'
        "</style>",
    ),
    "script": (
        "</body>",
        '<script>document.addEventListener("DOMContentLoaded", () => {document.querySelector('
        f"'{NPV}').textContent = \"+4,836,738\"}})</script></body>",
    ),
    "svg": (
        '<div class="chart">',
        '<div class="chart"><svg width="400" height="30"><text x="0" y="20">NPV +4,836,738 USD'
        "</text></svg>",
    ),
    # and the rest of what can draw over or hide the figures econ writes
    "event handler": ("<body>", "<body onload=\"document.body.innerHTML = 'approved'\">"),
    "img": ("<h2>The ask</h2>", '<h2>The ask</h2><img src="data:image/png;base64,AAAA">'),
    "link": ("</head>", '<link rel="stylesheet" href="https://example.com/forged.css"></head>'),
    "iframe": ("</body>", '<iframe srcdoc="NPV +4,836,738"></iframe></body>'),
    "object": ("</body>", '<object data="forged.html"></object></body>'),
    "hidden warning": ('<li class="note">', '<li class="note" style="display: none">'),
    "comment": ("</body>", "<!-- approved by the committee --></body>"),
    "title": ("<title>Investment memo:", "<title>Approved investment memo:"),
}


@pytest.mark.parametrize("name", list(FORGED))
def test_a_forged_html_memo_fails_naming_the_markup(memo_html, tmp_path, capsys, name):
    """The document is a memo (its stamp is econ's and reproduces), and what it shows differs
    from what econ renders: exit 1 (figures differ), as for an edited figure, naming the markup
    that is not econ's."""
    old, new = FORGED[name]
    text = memo_html.read_text(encoding="utf-8")
    assert old in text
    code, out = _verify(capsys, _write(tmp_path, text.replace(old, new, 1)))
    assert code == 1, out
    assert "markup after" in out and "Traceback" not in out
    shown = re.search(r"shown '(.*?)', econ renders", out).group(1)
    assert shown.split()[0] in new, out


def test_markup_written_otherwise_and_a_stamp_rewritten_fail(memo_html, tmp_path, capsys):
    text = memo_html.read_text(encoding="utf-8")
    # the same tokens spaced otherwise: named by line and column
    code, out = _verify(capsys, _write(tmp_path, text.replace("</body>", "</body >", 1)))
    assert code == 1 and "is not as econ writes the memo" in out, out
    # the stamp's JSON written otherwise (its values the same): the stamp is named
    stamp = json.loads(STAMP.search(text).group(2))
    rewritten = _with_stamp_text(text, json.dumps(stamp, indent=1).replace("<", "\\u003c"))
    code, out = _verify(capsys, _write(tmp_path, rewritten))
    assert code == 1 and "stamp: its JSON text is not as econ writes it" in out, out


MALFORMED_STAMPS = {
    # (change to the stamp's values, words the message must hold)
    "scenario_toml an int": (lambda s: s.update(scenario_toml=5), "scenario_toml is 5"),
    "scenario_toml an object": (lambda s: s.update(scenario_toml={"a": 1}), "scenario_toml is"),
    "tornado inputs an int": (
        lambda s: s["tornado"].update(inputs=5),
        "tornado inputs is 5; expected a list of field paths",
    ),
    "tornado input not a field": (
        lambda s: s["tornado"].update(inputs=["../../etc/passwd"]),
        "'../../etc/passwd' is not a field",
    ),
    "swing a text": (lambda s: s["tornado"].update(swing_pct="nan"), "swing_pct is 'nan'"),
    "swing too large": (
        lambda s: s["tornado"].update(swing_pct=1e305),
        "expected a number >= 0",
    ),
    "catalogs a text": (lambda s: s.update(catalogs="x"), "catalogs is 'x'"),
    "case named a.b": (
        lambda s: s["cases"].update({"a.b": {"overrides": [], "position": 9}}),
        "case name is 'a.b'",
    ),
    "case overrides an int": (
        lambda s: s["cases"]["downside"].update(overrides=7),
        "case downside overrides is 7",
    ),
    "case override malformed": (
        lambda s: s["cases"]["downside"].update(overrides=["x"]),
        "(case downside): x: expected an override of the form path=value",
    ),
    "case position a float": (
        lambda s: s["cases"]["downside"].update(position=1e300),
        "case downside position is 1e+300",
    ),
    "cases a list": (lambda s: s.update(cases=[1, 2]), "cases is [1, 2]"),
    "summary a list": (lambda s: s.update(summary=[1]), "summary is [1]"),
    "figures null": (lambda s: s.update(figures=None), "figures is None"),
    "draws a text": (
        lambda s: s.update(
            montecarlo={"n": "abc", "seed": 1, "distributions": {"utilization.share": "u"}}
        ),
        "montecarlo n is 'abc'",
    ),
    "draws not whole": (
        lambda s: s.update(
            montecarlo={"n": 10.5, "seed": 1, "distributions": {"utilization.share": "u"}}
        ),
        "montecarlo n is 10.5; expected a whole number",
    ),
    "no distributions": (
        lambda s: s.update(montecarlo={"n": 10, "seed": 1, "distributions": {}}),
        "expected an object of at least one PATH: DIST text",
    ),
    "negative seed": (
        lambda s: s.update(
            montecarlo={
                "n": 10,
                "seed": -1,
                "distributions": {"utilization.share": "uniform(0.5,0.8)"},
            }
        ),
        "seed = -1: expected a non-negative integer",
    ),
    # texts the memo shows verbatim: a sentence in them re-renders identically, so it must be
    # refused by its form (found by review: "CORRECTION: NPV restated to $912.4M" in the time)
    "created_utc with a sentence": (
        lambda s: s.update(created_utc=s["created_utc"] + " CORRECTION: NPV restated to $912.4M"),
        "expected a UTC time as econ writes it",
    ),
    "scenario_sha256 with a sentence": (
        lambda s: s.update(scenario_sha256="see the corrected figures below"),
        "expected a SHA-256 in 64 lower-case hex digits",
    ),
    "econ_version with a sentence": (
        lambda s: s.update(econ_version="0.1.0 (figures restated)"),
        "expected a version number",
    ),
    "nested too deep": (
        lambda s: s.update(extra=json.loads("[" * 100 + "]" * 100)),
        "nested more than 16 levels",
    ),
    # each case and tornado input is projected again: no more than `econ memo` writes (found by
    # review: 3,000 injected cases took a minute)
    "more cases than econ memo writes": (
        lambda s: s.update(
            cases={
                f"case{i}": {"overrides": ["utilization.share=0.6"], "position": i}
                for i in range(MAX_CASES + 1)
            }
        ),
        f"has {MAX_CASES + 1} cases; `econ memo` writes at most {MAX_CASES}",
    ),
    "a case with more overrides than --case takes": (
        lambda s: s.update(
            cases={"big": {"overrides": ["utilization.share=0.6"] * 5000, "position": 0}}
        ),
        "the econ stamp's case 'big' has 5,000 overrides; a case holds at most",
    ),
    "more tornado inputs than econ memo swings": (
        lambda s: s["tornado"].update(inputs=[*TORNADO_CANDIDATES, "utilization.share"]),
        f"tornado has {len(TORNADO_CANDIDATES) + 1} inputs; `econ memo` swings at most "
        f"{len(TORNADO_CANDIDATES)}",
    ),
}


@pytest.mark.parametrize("name", list(MALFORMED_STAMPS))
def test_a_malformed_stamp_exits_3_naming_the_file(memo_html, tmp_path, capsys, name):
    change, message = MALFORMED_STAMPS[name]
    text = _with_stamp(memo_html.read_text(encoding="utf-8"), change)
    path = _write(tmp_path, text)
    code, out = _verify(capsys, path)
    assert code == 3, out
    assert out.startswith(f"error: {path}") and message in out, out
    assert "Traceback" not in out


@pytest.mark.parametrize(
    "token, message",
    [
        ("NaN", "holds 'NaN'; expected strict JSON"),
        ("Infinity", "holds 'Infinity'; expected strict JSON"),
        ("1e400", "holds '1e400'; expected strict JSON"),
        ("1" * 5000, "holds an integer too long to read"),
    ],
)
def test_a_stamp_that_is_not_strict_json_exits_3(memo_html, tmp_path, capsys, token, message):
    text = memo_html.read_text(encoding="utf-8")
    stamp_text = STAMP.search(text).group(2)
    swing = re.search(r'"swing_pct":\s*[0-9.]+', stamp_text)
    assert swing
    forged = stamp_text[: swing.start()] + f'"swing_pct": {token}' + stamp_text[swing.end() :]
    path = _write(tmp_path, _with_stamp_text(text, forged))
    code, out = _verify(capsys, path)
    assert code == 3 and str(path) in out and message in out, out
    assert "--pct" not in out and "Traceback" not in out


@pytest.mark.parametrize("value", ["abc", "1,5", "0x10"])
def test_a_data_value_that_is_not_a_number_exits_3(memo_html, tmp_path, capsys, value):
    text = memo_html.read_text(encoding="utf-8")
    forged = re.sub(
        r'data-key="base.npv_usd" data-value="[^"]*"',
        f'data-key="base.npv_usd" data-value="{value}"',
        text,
        count=1,
    )
    path = _write(tmp_path, forged)
    code, out = _verify(capsys, path)
    assert code == 3, out
    assert f"{path}: the figure 'base.npv_usd' has data-value '{value}'; expected a number" in out
    assert "Traceback" not in out


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF of these objects (numbered from 1, the first the catalog), with its xref table."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\n" % (len(objects) + 1)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def test_a_pdf_whose_stamp_is_a_decompression_bomb_exits_3(tmp_path, capsys):
    # The attached stamp inflates past pypdf's limit (75 MB): its LimitReachedError is refused.
    packer = zlib.compressobj(9)
    chunk = b" " * 1_000_000
    bomb = b"".join(packer.compress(chunk) for _ in range(80)) + packer.flush()
    path = tmp_path / "bomb.pdf"
    path.write_bytes(
        _pdf(
            [
                b"<< /Type /Catalog /Pages 2 0 R /Names << /EmbeddedFiles 4 0 R >> >>",
                b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >>",
                b"<< /Names [(econ-stamp.json) 5 0 R] >>",
                b"<< /Type /Filespec /F (econ-stamp.json) /EF << /F 6 0 R >> >>",
                b"<< /Type /EmbeddedFile /Filter /FlateDecode /Length %d >>\nstream\n" % len(bomb)
                + bomb
                + b"\nendstream",
            ]
        )
    )
    code, out = _verify(capsys, path)
    assert code == 3, out
    assert f"{path}: not a readable PDF" in out and "Traceback" not in out


def test_a_workbook_whose_notes_lack_a_column_exits_3(tmp_path, capsys):
    import zipfile

    from econ.workbook import sheet_parts

    book = tmp_path / "projection.xlsx"
    assert main(["project", str(SEED), "--out", str(book)]) == 0
    with zipfile.ZipFile(book) as archive:
        part = sheet_parts(archive)["Notes"]
    for column in ("section", "text"):
        edited = tmp_path / f"no-{column}.xlsx"
        header = f"<t>{column}</t>".encode()
        with zipfile.ZipFile(book) as old, zipfile.ZipFile(edited, "w") as new:
            for item in old.infolist():
                data = old.read(item.filename)
                if item.filename == part:  # (the header cell's text, as a spreadsheet saves it)
                    assert data.count(header) == 1
                    data = data.replace(header, f"<t>{column}X</t>".encode())
                new.writestr(item, data)
        code, out = _verify(capsys, edited)
        assert code == 3, out
        assert f"{edited}: the Notes sheet has no '{column}' column" in out
        assert "Traceback" not in out


@pytest.mark.parametrize("head", [None, b"%PDF-1.7\n"])
def test_a_memo_larger_than_econ_writes_exits_3_unread(memo_html, tmp_path, capsys, head):
    """A memo (HTML, or PDF) past MAX_MEMO_BYTES is refused by its size, before it is read."""
    path = tmp_path / ("large.html" if head is None else "large.pdf")
    path.write_bytes(memo_html.read_bytes() if head is None else head)
    with path.open("r+b") as handle:
        handle.truncate(MAX_MEMO_BYTES + 1)  # (a sparse file: nothing is written to disk)
    code, out = _verify(capsys, path)
    assert code == 3, out
    assert f"{path}: larger than {size_text(MAX_MEMO_BYTES)}; expected a memo" in out, out
    assert "Traceback" not in out


@pytest.mark.parametrize("section", ["<![foo[ x ]]>", "<![ x"])
def test_html_the_parser_cannot_read_exits_3(memo_html, tmp_path, capsys, section):
    text = memo_html.read_text(encoding="utf-8").replace("</body>", f"{section}</body>", 1)
    path = _write(tmp_path, text)
    code, out = _verify(capsys, path)
    assert code == 3 and f"{path}: not HTML as econ writes a memo" in out, out
    assert "Traceback" not in out


def test_a_fifo_an_empty_pdf_and_a_damaged_pdf_are_named_in_one_plain_line(tmp_path, capsys):
    """They said "expected expected a memo", "(EmptyFileError)", "(PdfStreamError)", and pypdf
    printed a stray "EOF marker not found" line."""
    import os

    fifo = tmp_path / "pipe.xlsx"
    os.mkfifo(fifo)
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    damaged = b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n" * 20
    cut_xlsx, cut_pdf = tmp_path / "cut.xlsx", tmp_path / "cut.pdf"
    cut_xlsx.write_bytes(damaged)
    cut_pdf.write_bytes(damaged)
    readable = "not a readable PDF: damaged or not a PDF; expected a memo written by `econ memo`"
    cases = {
        fifo: "not a regular file but a FIFO (named pipe); expected a memo (.html, .pdf) or "
        "workbook (.xlsx), a regular file of at most",
        empty: "an empty file; expected a memo written by `econ memo`",
        cut_xlsx: readable,
        cut_pdf: readable,
    }
    for path, message in cases.items():
        code, out = _verify(capsys, path)
        assert code == 3, out
        assert out.startswith(f"error: {path}: {message}") and out.count("\n") == 1, out
        assert "Error" not in out and "EOF marker" not in out and "expected expected" not in out
