"""The memo names the code that made it (econ_code), as the JSON, Parquet and workbook stamps do:
its version alone (0.1.0 at every commit) could not tell two commits' memos apart."""

from __future__ import annotations

import json
import re

import pytest

from econ.cli import main
from econ.memo.render import stamp_json
from econ.sources import code_fingerprint
from tests.conftest import ROOT
from tests.test_memo import _edit_stamp, _edited, _verify

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"


@pytest.fixture(scope="module")
def memo_html(tmp_path_factory):
    out = tmp_path_factory.mktemp("memo") / "memo.html"
    assert main(["memo", str(SEED), "--out", str(out)]) == 0
    return out


def _stamp(text: str) -> dict:
    start = text.index('id="econ-stamp">') + len('id="econ-stamp">')
    return json.loads(text[start : text.index("</script>", start)])


def _restamped(text: str, change) -> str:
    """The memo with its stamp changed and written as econ writes it (render.stamp_json)."""
    stamp = _stamp(text)
    change(stamp)
    start = text.index('id="econ-stamp">') + len('id="econ-stamp">')
    return text[:start] + stamp_json(stamp) + text[text.index("</script>", start) :]


def test_the_stamp_and_the_page_name_the_code(memo_html):
    text = memo_html.read_text(encoding="utf-8")
    code = code_fingerprint()
    assert code is not None and _stamp(text)["econ_code"] == code
    assert f'<th>econ code</th><td><code data-stamp="econ_code">{code}</code>' in text


def test_a_memo_of_other_code_whose_figures_reproduce_passes(memo_html, tmp_path, capsys):
    other = "0.1.0+" + "0" * 40

    def edit(text):
        text = _restamped(text, lambda stamp: stamp.update(econ_code=other))
        return text.replace(
            f'data-stamp="econ_code">{code_fingerprint()}<', f'data-stamp="econ_code">{other}<'
        )

    code, out = _verify(capsys, _edited(memo_html, tmp_path, edit))
    assert code == 0, out


def test_a_memo_written_before_the_code_was_stamped_passes(memo_html, tmp_path, capsys):
    def edit(text):
        text = _restamped(text, lambda stamp: stamp.pop("econ_code"))
        return re.sub(r"\s*<tr><th>econ code</th>.*?</tr>", "", text, count=1)

    code, out = _verify(capsys, _edited(memo_html, tmp_path, edit))
    assert code == 0, out


@pytest.mark.parametrize("forged", ["0.1.0 reviewed and approved by the lender", 7, "0.1.0+abc"])
def test_a_code_not_in_econs_form_is_refused(memo_html, tmp_path, capsys, forged):
    """Shown verbatim, so a sentence riding in it would render again and match."""
    target = _edited(
        memo_html, tmp_path, lambda t: _edit_stamp(t, lambda s: s.update(econ_code=forged))
    )
    code, out = _verify(capsys, target)
    assert code == 3, out
    assert "the econ stamp's econ_code is" in out
    assert "expected null or econ's version and 40 hex digits" in out
