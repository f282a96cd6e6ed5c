"""The workbook's check rows and an input price without input tokens (a review's finding, session
31): `market.input_price_usd_per_mtok` and `throughput.input_tokens_per_output_token` are both
live, and econ refuses an input price above 0 beside a ratio blank or 0; typed so, the seed's
workbook showed #VALUE! for the revenue, NPV and IRRs (a blank ratio) or the figures of no input
price (0), with every check row `ok`."""

from __future__ import annotations

import shutil

import pytest

import econ
from econ import workbook
from econ.scenario import ScenarioError
from tests.test_workbook import SEED
from tests.test_workbook_live import _summary, exported_changed_recalculated

CHECK = "check.input_tokens_for_input_price"
PRICE, RATIO = "market.input_price_usd_per_mtok", "throughput.input_tokens_per_output_token"


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) is not installed; `make test` installs it")
    cases = {
        "blank_ratio": (SEED, {}, {RATIO: None, PRICE: 0.1}),
        "zero_ratio": (SEED, {}, {RATIO: 0, PRICE: 0.1}),
        "priced": (SEED, {}, {PRICE: 0.1}),
    }
    return exported_changed_recalculated(tmp_path_factory.mktemp("tokens"), cases)


def test_econ_refuses_an_input_price_without_input_tokens():
    with pytest.raises(ScenarioError, match="input_tokens_per_output_token is 0"):
        econ.load_scenario(SEED, {RATIO: 0, PRICE: 0.1})


@pytest.mark.parametrize("case", ["blank_ratio", "zero_ratio"])
def test_an_input_price_without_input_tokens_is_flagged(books, case):
    written, _, recalculated = books[case]
    assert _summary(written)[CHECK] == workbook.CHECK_OK
    assert _summary(recalculated)[CHECK].startswith("econ refuses these inputs: an input price")


def test_an_input_price_with_input_tokens_is_ok(books):
    _, _, recalculated = books["priced"]
    summary = _summary(recalculated)
    assert summary[CHECK] == workbook.CHECK_OK
    expected = econ.project(econ.load_scenario(SEED, {PRICE: 0.1}))
    assert summary["revenue_usd_total"] == pytest.approx(
        expected.metrics["revenue_usd_total"][0], rel=1e-9
    )
