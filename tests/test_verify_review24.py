"""A security review of `econ verify`'s paint-order check of PDF memos (review 24): forms drawing
forms many times, a page of many runs and paintings, a content stream decoding to many MB each
cost minutes and GB before; each is now refused past a document-wide budget (exit 3). Text drawn
off the page, clipped away or a thousandth of its size is listed; a workbook's conditional
format range is quoted printable and cut, and a row numbered below 1 is refused."""

from __future__ import annotations

import io
import zlib
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from econ.cli import main
from econ.memo import render, verify
from econ.memo.build import build_memo
from econ.scenario import load_scenario
from tests.test_memo_workbook import _rewrite, _sheet_part, _verify

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "models" / "scenarios" / "llama2-70b-h200.toml"


def _pdf(content: bytes, forms: dict[int, tuple[bytes, bytes]] | None = None) -> bytes:
    """A one-page PDF (as the review's mkpdf.py): the page draws `content` with form 10 named
    /X; forms: object number -> (its resources, its content)."""
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources %s >>"
        % (b"<< /XObject << /X 10 0 R >> >>" if forms else b"<< >>"),
    }
    packed = zlib.compress(content)
    objects[4] = b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (
        len(packed),
        packed,
    )
    for number, (resources, body) in (forms or {}).items():
        objects[number] = (
            b"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources %s /Length %d >>"
            b"\nstream\n%s\nendstream" % (resources, len(body), body)
        )
    out = bytearray(b"%PDF-1.7\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n%s\nendobj\n" % (number, objects[number])
    xref, size = len(out), max(objects) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for number in range(1, size):
        out += (
            b"%010d 00000 n \n" % offsets[number] if number in offsets else b"0000000000 65535 f \n"
        )
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref)
    return bytes(out)


def _fan(fanout: int, levels: int) -> bytes:
    """The page draws form 10 `fanout` times, each form the next `fanout` times, `levels` deep:
    fanout ** levels drawings of the last, from a PDF of a few hundred bytes."""
    forms = {}
    for k in range(levels):
        if k < levels - 1:
            forms[10 + k] = (b"<< /XObject << /X %d 0 R >> >>" % (11 + k), b"q /X Do Q\n" * fanout)
        else:
            forms[10 + k] = (b"<< >>", b"BT /F1 12 Tf 10 10 Td (1) Tj ET\n")
    return _pdf(b"q /X Do Q\n" * fanout, forms)


def _additions(data: bytes) -> list[str]:
    return verify._page_additions(PdfReader(io.BytesIO(data)))


@pytest.fixture(scope="module")
def stamp_text() -> str:
    memo = build_memo(load_scenario(SEED), created="2026-01-01T00:00:00Z")
    return render.stamp_json(memo.stamp)


def _stamped(data: bytes, stamp_text: str, path: Path) -> Path:
    """The PDF with a memo's stamp, as econ writes it (attached and in the information)."""
    writer = PdfWriter(clone_from=io.BytesIO(data))
    writer.add_attachment(render.STAMP_FILE, stamp_text.encode("utf-8"))
    writer.add_metadata({render.PDF_STAMP_KEY: stamp_text})
    with path.open("wb") as handle:
        writer.write(handle)
    return path


# 1. Forms drawing forms: each form parsed once, the drawings counted document-wide


def test_forms_drawing_forms_are_counted_and_each_parsed_once(monkeypatch):
    # 3 + 9 + 27 = 39 forms drawn (the page's 3 of form 10, each drawing 3 of form 11, ...)
    parsed = []
    operations = verify._Budget.operations

    def counted(self, stream, reference):
        parsed.append(reference) if reference not in self.parsed else None
        return operations(self, stream, reference)

    monkeypatch.setattr(verify._Budget, "operations", counted)
    assert _additions(_fan(3, 3)) == []
    assert len(parsed) == 1 + 3  # the page and each of the 3 forms, once
    monkeypatch.setattr(verify, "MAX_FORMS_DRAWN", 38)
    with pytest.raises(verify._TooMuch, match=r"more than 38 forms drawn"):
        _additions(_fan(3, 3))


def test_a_fan_of_forms_with_a_memo_stamp_exits_3(tmp_path, capsys, stamp_text):
    # 4 ** 6 = 4,096 drawings of the last form (the review's 4 ** 8 walked for 101 s)
    path = _stamped(_fan(4, 6), stamp_text, tmp_path / "fan.pdf")
    code, out = _verify(capsys, path)
    assert code == 3, out
    assert "more than 1,000 forms drawn (econ.memo.verify.MAX_FORMS_DRAWN)" in out
    assert "expected a memo written by `econ memo`" in out and "Traceback" not in out


def test_a_file_without_a_stamp_is_refused_before_its_pages_are_walked(
    tmp_path, capsys, monkeypatch
):
    def walked(reader):
        raise AssertionError("the pages were walked")

    monkeypatch.setattr(verify, "_page_additions", walked)
    path = tmp_path / "fan.pdf"
    path.write_bytes(_fan(4, 8))
    code, out = _verify(capsys, path)
    assert code == 3, out
    assert "no econ stamp found" in out


# 2. Paintings tested against the runs of text near them, not against all before them


def _flat(n: int, fill: bytes) -> bytes:
    """n runs of text at one spot of the page (as the review's gen4.py), each followed by `fill`."""
    return _pdf(b"BT /F1 1 Tf 500 700 Td " + (b"(1) Tj " + fill + b"\n") * n + b"ET")


def test_paintings_away_from_the_text_test_no_point():
    budget = verify._Budget()
    cover = verify._Cover(budget)
    reader = PdfReader(io.BytesIO(_flat(2_000, b"0 0 1 1 re f")))
    cover.walk(budget.operations(reader.pages[0].get_contents(), "page"), None, verify._IDENTITY, 8)
    assert cover.runs == 2_000 and cover.covered == 0
    assert budget.checks == 0  # (the whole scan tested 3 x 2,000 x 2,000 / 2 = 6 million points)


def test_paintings_near_many_runs_stop_at_the_checks_budget(monkeypatch):
    # boxes among the runs (500.1 to 500.3, 700.1 to 700.6), missing their points: each tests
    # every point before it
    data = _flat(2_000, b"500.2 700.2 0.02 0.02 re f")
    with pytest.raises(verify._TooMuch, match=r"MAX_PAINT_CHECKS"):
        _additions(data)
    monkeypatch.setattr(verify, "MAX_PAINT_CHECKS", 10**9)
    out = _additions(data)  # (no run is covered: the boxes miss its points; 1 pt text is tiny)
    assert out == ["page 1: 2,000 runs of text drawn smaller than 2 pt" + out[0][50:]], out


def test_a_box_over_text_is_still_found_through_the_grid():
    data = _pdf(b"BT /F1 10 Tf 100 100 Td (1) Tj ET 1 g 90 90 40 40 re f")
    (line,) = _additions(data)
    assert line.startswith("page 1: a filled shape painted over a run of text"), line


@pytest.mark.parametrize(
    ("name", "limit"),
    [("MAX_TEXT_RUNS", 1_999), ("MAX_OPERATORS", 3_999), ("MAX_CONTENT_TOKENS", 5_999)],
)
def test_runs_operators_and_tokens_are_counted_document_wide(monkeypatch, name, limit):
    # 2,000 runs: BT, Tf, Td, ET and 2,000 x (Tj, re, f) = 6,004 operators, more operands
    data = _flat(2_000, b"0 0 1 1 re f")
    monkeypatch.setattr(verify, name, limit)
    with pytest.raises(verify._TooMuch, match=name):
        _additions(data)


# 3. Content streams decoding to many MB


def test_a_content_stream_decoding_past_the_limit_is_not_decoded_further(monkeypatch):
    data = _pdf(b"BT /F1 12 Tf 10 10 Td (1) Tj ET\n%" + b" " * 200_000 + b"\n")
    assert _additions(data) == []
    monkeypatch.setattr(verify, "MAX_CONTENT_BYTES", 50_000)
    with pytest.raises(verify._TooMuch, match=r"more than 50,000 bytes of content streams"):
        _additions(data)


def test_a_stream_bomb_with_a_memo_stamp_exits_3(tmp_path, capsys, stamp_text, monkeypatch):
    monkeypatch.setattr(verify, "MAX_CONTENT_BYTES", 100_000)
    data = _pdf(b"BT /F1 12 Tf 10 10 Td (1) Tj ET\n%" + b" " * 1_000_000 + b"\n")
    code, out = _verify(capsys, _stamped(data, stamp_text, tmp_path / "bomb.pdf"))
    assert code == 3, out
    assert "more than 100,000 bytes of content streams decoded" in out


# 4. Text a reader cannot see for where or how it is drawn


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"BT /F1 10 Tf 100 100 Td (1) Tj ET", None),
        (b"q 1 0 0 1 5000 0 cm BT /F1 10 Tf 100 100 Td (1) Tj ET Q", "outside the page"),
        (b"q 0 0 1 1 re W n BT /F1 10 Tf 100 100 Td (1) Tj ET Q", "outside the clipping path"),
        (b"q 0.001 0 0 0.001 0 0 cm BT /F1 10 Tf 100 100 Td (1) Tj ET Q", "smaller than 2 pt"),
        # a glyph reaching past the clip's edge (Chromium clips text so): not listed
        (b"q 0 0 101.5 800 re W n BT /F1 10 Tf 100 100 Td (1) Tj ET Q", None),
        # the font size and leading are the graphics state's: Q restores 12 pt and 14 pt
        (b"BT /F1 12 Tf ET q BT /F1 1 Tf ET Q BT 100 500 Td (1) Tj ET", None),
        (b"BT /F1 12 Tf 14 TL ET q BT 10000 TL ET Q BT 100 500 Td T* (1) Tj ET", None),
        (b"BT /F1 12 Tf ET q BT /F1 1 Tf ET Q q BT /F1 1 Tf 100 500 Td (1) Tj ET Q", "smaller"),
    ],
)
def test_text_off_the_page_clipped_away_or_tiny_is_listed(content, message):
    out = _additions(_pdf(content))
    if message is None:
        assert out == []
    else:
        (line,) = out
        assert f"page 1: a run of text drawn {message}" in line, line


# 5, 6. A workbook's conditional format range, a row numbered below 1


@pytest.fixture(scope="module")
def book(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("book") / "projection.xlsx"
    assert main(["project", str(SEED), "--out", str(path)]) == 0
    return path


def test_a_conditional_format_range_is_quoted_printable_and_cut(book, tmp_path, capsys):
    summary = _sheet_part(book, "Summary")
    evil = "\u009b2J\u202eC1:C2 " + "A1 " * 30_000
    rule = (
        f'<conditionalFormatting sqref="{evil}"><cfRule type="expression" priority="9" '
        'dxfId="0"><formula>TRUE</formula></cfRule></conditionalFormatting>'
    ).encode()

    def edit(name: str, data: bytes) -> bytes:
        return (
            data.replace(b"<conditionalFormatting", rule + b"<conditionalFormatting", 1)
            if name == summary
            else data
        )

    target = tmp_path / "sqref.xlsx"
    _rewrite(book, target, edit)
    code, out = _verify(capsys, target)
    assert code == 1, out
    (line,) = [x for x in out.splitlines() if "TRUE" in x]
    assert "\u009b" not in out and "\u202e" not in out
    assert "(90,009 characters)" in line and len(line) < 400, line


def test_a_row_numbered_below_1_is_refused(book, tmp_path, capsys):
    summary = _sheet_part(book, "Summary")

    def edit(name: str, data: bytes) -> bytes:
        row = b'<row r="-5" hidden="1"/></sheetData>'
        return data.replace(b"</sheetData>", row, 1) if name == summary else data

    target = tmp_path / "row.xlsx"
    _rewrite(book, target, edit)
    code, out = _verify(capsys, target)
    assert code == 3, out
    assert "has a row numbered '-5'; expected 1, 2, ..." in out
