"""The Export page builds the investment memo on request and offers it for download; the HTML it
offers verifies with `econ verify`."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from econ.cli import main
from econ.memo.render import chromium
from tests.test_app import APP, errors, go


@pytest.fixture
def app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    assert not at.exception, at.exception
    return at


def test_export_page_downloads_the_memo(app: AppTest, tmp_path, capsys):
    go(app, "export")
    [button] = [b for b in app.button if b.label == "Prepare the memo"]
    button.click().run()
    assert not app.exception and not errors(app), errors(app)
    helps = {b.label: b.proto.help for b in app.get("download_button")}
    assert helps["Memo (HTML)"].endswith("-memo.html"), helps
    assert ("Memo (PDF)" in helps) == (chromium() is not None)
    from econ.ui import compute

    text = app.session_state["econ.export.memo"][0]
    files = compute.memo_bytes(text, False)
    [(name, data)] = files.items()
    path = tmp_path / name
    path.write_bytes(data)
    assert main(["verify", str(path)]) == 0, capsys.readouterr().out
