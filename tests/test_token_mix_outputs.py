"""The token mix in the outputs: the Excel workbook (input and cached input revenue and the
all-tokens LCOT as live formulas that reproduce the engine, recalculated by LibreOffice) and the
investment memo (its rows shown, and verified, where a scenario bills input tokens)."""

from __future__ import annotations

import json
import shutil

import pytest

import econ
from econ.cli import main
from econ.memo.figures import TOKEN_MIX_KEYS
from econ.memo.verify import _Figures
from econ.workbook import formula_report
from tests.conftest import ROOT
from tests.test_token_mix import ONE_MTOK_A_MONTH, SEED, scenario
from tests.test_workbook import build, compare_with_engine, compare_with_written, recalculate

TOKEN_LINES = (
    "input_tokens",
    "output_token_revenue_usd",
    "input_token_revenue_usd",
    "cached_input_token_revenue_usd",
    "token_revenue_usd",
    "revenue_usd",
)
TOKEN_METRICS = (
    "lcot_usd_per_mtok_all_tokens",
    "input_tokens_total",
    "output_token_revenue_usd_total",
    "input_token_revenue_usd_total",
    "cached_input_token_revenue_usd_total",
)

OWN_DECLINES = {
    "market.price_decline_annual": 0.4,
    "market.input_price_decline_annual": 0.2,
    "market.cached_input_price_decline_annual": 0.6,
}


def cases():
    return [
        scenario(ONE_MTOK_A_MONTH),
        scenario(ONE_MTOK_A_MONTH, **OWN_DECLINES),
        scenario(
            ONE_MTOK_A_MONTH,
            **{"market.cached_input_price_usd_per_mtok": None, "market.cache_hit_share": 0.0},
        ),
        scenario(SEED, **{"throughput.input_tokens_per_output_token": None}),
    ]


@pytest.mark.parametrize("index", range(4))
def test_token_mix_lines_are_formulas(index):
    s = cases()[index]
    report = formula_report(econ.project(s), [s])[0]
    assert report["values"] == []
    assert set(TOKEN_LINES) | set(TOKEN_METRICS) <= set(report["formulas"])


def test_libreoffice_recalculates_the_token_mix(tmp_path):
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) is not installed; `make test` installs it")
    scenarios = [s.model_copy(update={"name": f"mix{i}"}) for i, s in enumerate(cases())]
    written = tmp_path / "mix.xlsx"
    build(scenarios, written)
    out = tmp_path / "recalculated"
    out.mkdir()
    recalculate([written], out)
    assert compare_with_engine(written, out / written.name, scenarios) > 500
    assert compare_with_written(written, out / written.name) > 500


SEED_FILE = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
MIX = (
    "market.input_price_usd_per_mtok=0.1",
    "market.cached_input_price_usd_per_mtok=0.01",
    "market.cache_hit_share=0.5",
)


def _memo_figures(path):
    parser = _Figures()
    parser.feed(path.read_text(encoding="utf-8"))
    return {key: value for key, value, _ in parser.figures}


def test_memo_shows_and_verifies_the_token_mix(tmp_path, capsys):
    out = tmp_path / "mix.html"
    sets = [arg for pair in MIX for arg in ("--set", pair)]
    assert main(["memo", str(SEED_FILE), *sets, "--out", str(out)]) == 0
    figures = _memo_figures(out)
    assert {f"base.{key}" for key in TOKEN_MIX_KEYS} <= set(figures)
    assert any(k.startswith("tornado.market.input_price_usd_per_mtok.") for k in figures)
    assert main(["project", str(SEED_FILE), *sets, "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)["scenarios"][0]["summary"]
    for key in TOKEN_MIX_KEYS:
        assert float(figures[f"base.{key}"]) == summary[key], key
    assert main(["verify", str(out)]) == 0
    plain = tmp_path / "plain.html"
    assert main(["memo", str(SEED_FILE), "--out", str(plain)]) == 0
    assert not any(k.removeprefix("base.") in TOKEN_MIX_KEYS for k in _memo_figures(plain))
