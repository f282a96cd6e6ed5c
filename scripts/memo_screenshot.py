"""Screenshot of the investment memo's first page for docs/memo.md, in Debian's headless Chromium.

.venv/bin/python scripts/memo_screenshot.py [SCENARIO] [OUT_PNG]

Writes the memo of SCENARIO (default: the seed case) as HTML to a temporary folder and shoots its
top at A4 width (default OUT_PNG: docs/memo.png).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from econ.memo import render
from econ.memo.build import build_memo
from econ.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
A4_PIXELS = (794, 1123)  # 210 x 297 mm at 96 px per inch


def main(argv: list[str]) -> int:
    scenario = Path(argv[0]) if argv else SEED
    target = Path(argv[1]) if len(argv) > 1 else ROOT / "docs" / "memo.png"
    html = render.html(build_memo(load_scenario(scenario)))
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as p:
        page_file = Path(folder) / "memo.html"
        page_file.write_text(html, encoding="utf-8")
        browser = p.chromium.launch(
            executable_path=render.chromium(), args=[*render.BROWSER_ARGS, "--no-pdf-header-footer"]
        )
        page = browser.new_page(
            viewport={"width": A4_PIXELS[0], "height": A4_PIXELS[1]},
            device_scale_factor=1.25,
        )
        page.emulate_media(media="print")
        page.goto(page_file.as_uri())
        page.screenshot(path=str(target))
        browser.close()
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
