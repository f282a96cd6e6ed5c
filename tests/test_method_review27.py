"""A lender's model auditor on docs/methodology.md against the code (review 27).

1. The sizing warning blamed a term longer than the book life for every loan the LTV limit left
   at 0 on book value: the seed tested against a 20% price drop is written down to a book value
   of 0 in month 50, within its 6-year life, and its 60-month loan got nothing "because its term
   is longer than the book life".
2. The covenant warning rounded the floor to 2 decimals and the ratio to 3, so a DSCR of
   1.363797 below a 1.3638 floor read "below its 1.36x floor ... at 1.364x".
3. Figures of the methodology that no longer reproduced (the owned hall resized to 68 racks, the
   raw break-even root) or said more than the projection does (the sculpted DSCR in tax months,
   the equity flows of the null-IRR example, llama2's NPVs without its debt).
"""

from __future__ import annotations

import numpy as np
import pytest

import econ.engine as engine
from econ import financing, load_scenario, project
from tests.conftest import ROOT

SCENARIOS = ROOT / "models" / "scenarios"
SEED = SCENARIOS / "deepseek-r1-gb200-nvl72.toml"
METHODOLOGY = (ROOT / "docs" / "methodology.md").read_text()


def warning_with(result, words: str) -> str:
    (found,) = [w for w in result.warnings[0] if words in w]
    return found


# --- 1. the no-debt warning names the impairment that empties the collateral --------------------


def test_ltv_binding_month_is_the_first_month_the_collateral_allows_no_debt():
    balance = np.array([[1.0, 0.8, 0.6, 0.4, 0.0], [1.0, 0.8, 0.6, 0.4, 0.0]])
    value = np.array([[100.0, 90.0, 0.0, 0.0, 0.0], [100.0, 90.0, 70.0, 30.0, 0.0]])
    # row 0: worth nothing in month 2 with 0.6 owed; row 1: 0.7 x 30 / 0.4 = 52.5 in month 3
    months = financing.ltv_binding_month(balance, value, np.array([0.7, 0.7]))
    assert months.tolist() == [2.0, 3.0]
    debt, code = financing.size_debt(
        np.full((2, 5), 1e9), balance, balance, np.nan, np.array([1e9, 1e9]), 1, value, 0.7
    )
    assert debt == pytest.approx([0.0, 0.7 * 30 / 0.4]) and code.tolist() == [3, 3]
    # no limit, or no balance owed: no month binds
    assert np.isnan(financing.ltv_binding_month(balance, value, np.array([np.nan, 0.7]))[0])
    assert np.isnan(financing.ltv_binding_month(np.zeros((1, 5)), value[:1], 0.7)).all()


def test_the_no_debt_warning_names_the_write_downs_that_empty_the_book_value():
    result = project(load_scenario(SEED, {"depreciation.impairment.price_drop_threshold": 0.2}))
    m = result.monthly.reset_index(drop=True)
    book = (m.capex_usd - m.depreciation_usd - m.impairment_usd).cumsum()
    month = int(np.argmax(book.to_numpy() < 0.005))
    written = m.impairment_usd.iloc[: month + 1]
    assert month == 50 and result.summary.debt_usd.iloc[0] == 0
    # the 60-month loan is within the 6-year book life: the write-downs, not the term, end it
    assert load_scenario(SEED).financing.debt_term_months == 60 < 72
    said = warning_with(result, "debt sized to")
    assert "its term is longer than the book life" not in said
    assert (
        "no debt because impairment write-downs bring the GPUs' book value to 0 in month 50 "
        f"while the loan would still be outstanding ({written.sum():,.0f} USD written down in "
        f"{(written > 0).sum()} months from month {int(np.argmax(written.to_numpy() > 0))}); a "
        "loan repaid by month 50 (financing.debt_term_months), or resale values as collateral "
        "(market.resale_*), allow debt; "
    ) in said
    assert f"{written.sum():,.0f}" == "2,341,689" and (written > 0).sum() == 29
    # what it says allows debt does
    repaid = load_scenario(
        SEED,
        {"depreciation.impairment.price_drop_threshold": 0.2, "financing.debt_term_months": 50},
    )
    assert project(repaid, monthly=False).summary.debt_usd.iloc[0] > 0


def test_a_term_longer_than_the_book_life_keeps_its_own_words_written_down_or_not():
    # A 4-year life ends before the 60-month loan: the book value reaches 0 as the depreciation
    # ends (month 48), with or without write-downs before.
    for threshold in (None, 0.2):
        scenario = load_scenario(
            SEED,
            {
                "depreciation.life_years": 4.0,
                "depreciation.impairment.price_drop_threshold": threshold,
            },
        )
        said = warning_with(project(scenario, monthly=False), "debt sized to")
        assert "(its term is longer than the book life)" in said
        assert "impairment write-downs" not in said


def test_the_financing_page_gives_the_written_down_case():
    page = (ROOT / "docs" / "financing.md").read_text()
    assert "2,341,689 USD in all, to a book value of 0 in month 50" in page


# --- 2. the covenant warning shows the breach --------------------------------------------------


@pytest.mark.parametrize("name", ["dscr", "llcr"])
def test_a_ratio_just_below_its_floor_reads_below_it(name):
    floor = 1.3638
    result = project(load_scenario(SEED, {f"financing.covenants.{name}_floor": floor}))
    said = warning_with(result, "covenant breached")
    label = name.upper()
    assert f"{label} below its 1.3638x floor" in said
    ratio = result.monthly[f"{name}_test" if name == "dscr" else name].to_numpy()
    first = int(said.split("(first in month ")[1].split(",")[0])
    shown = said.split(f"(first in month {first}, at ")[1].split("x)")[0]
    assert shown == f"{ratio[first]:.6f}" == "1.363797" and float(shown) < floor


def test_a_ratio_well_below_its_floor_keeps_three_decimals():
    result = project(load_scenario(SEED, {"financing.covenants.dscr_floor": 1.5}))
    said = warning_with(result, "covenant breached")
    assert "DSCR below its 1.5x floor over the 12-month test window" in said
    assert "(first in month 1, at 1.364x)" in said


def test_ratio_below_takes_the_decimals_the_breach_needs():
    assert engine._ratio_below(1.149, 1.2) == "1.149"
    assert engine._ratio_below(1.363797, 1.3638) == "1.363797"
    assert engine._ratio_below(1.2999999999, 1.3) == "1.2999999999"
    assert engine._ratio_below(-np.inf, 1.2) == "-inf"


# --- 3. the methodology's figures --------------------------------------------------------------

OWNED_HALL = {
    "facility.mode": "owned",
    "facility.colo_usd_per_kw_month": 0.0,
    "fleet.service_start_month": 2,
    "financing.repayment": "level_payment",
    "financing.size_to_min_dscr": None,
    "financing.max_ltv": None,
    "facility.maintenance_share_of_capex_annual": 0.02,
    "fleet.deployment_ramp_months": 0,
    "utilization.ramp_months": 0,
}


def test_the_owned_hall_figures_reproduce_from_the_ready_made_file():
    file = SCENARIOS / "hall-10mw-gb300-nvl72-liquid.toml"
    assert load_scenario(file).fleet.racks == 68
    s = project(load_scenario(file, OWNED_HALL), monthly=False).summary.iloc[0]
    assert s.debt_usd == pytest.approx(0.6 * s.capex_usd_total, rel=1e-12)
    figures = (round(s.debt_usd), round(s.capex_usd_total), round(s.npv_usd))
    assert figures == (211_918_561, 353_197_602, 35_686_067)
    assert (
        f"borrows {figures[0]:,} USD, 60% of the {figures[1]:,} USD of GPUs and hall, for an NPV "
        f"of\n{figures[2]:,} USD"
    ) in METHODOLOGY
    assert "223.8 M" not in METHODOLOGY
    # the page's command is these settings
    command = METHODOLOGY.split("    econ project models/scenarios/hall-10mw-gb300")[1]
    command = command.split("\n\n")[0]
    for path in OWNED_HALL:
        assert f"--set {path}=" in command or f"--set '{path}=" in command, path


def test_the_raw_break_even_root_of_llama2_is_the_pages(monkeypatch):
    roots = []
    original = engine._breakeven

    def kept(*args, **kwargs):
        roots.append(original(*args, **kwargs))
        return roots[-1]

    monkeypatch.setattr(engine, "_breakeven", kept)
    result = project(load_scenario(SCENARIOS / "llama2-70b-h200.toml"), monthly=False)
    (root,) = roots[0]
    assert np.isnan(result.metrics["breakeven_price_usd_per_mtok"][0])
    assert f"is −{-root:.4f} USD/Mtok;" in METHODOLOGY and f"{root:.4f}" == "-0.2762"


def test_the_sculpted_dscr_is_constant_outside_the_tax_installments():
    m = project(load_scenario(SEED)).monthly.reset_index(drop=True)
    taxed = m.tax_usd > 0
    served = m.debt_service_usd > 0
    assert taxed.sum() == 12
    assert m.dscr[served & ~taxed].round(4).unique().tolist() == [1.3638]
    low, high = m.dscr[taxed].min(), m.dscr[taxed].max()
    assert (f"{low:.3f}", f"{high:.3f}") == ("1.432", "1.585")
    assert "DSCR 1.3638 against 1.30 outside the 12\nmonths that pay an installment" in METHODOLOGY
    assert "1.432 to 1.585 in them" in METHODOLOGY
    assert "so the DSCR is PV(A) / D in every month" not in METHODOLOGY


def test_the_null_irr_example_gives_the_equity_flows_the_projection_has():
    scenario = load_scenario(
        SEED, {"market.rental_series": "CCIR/CRI-T1IF", "market.spot_sells": "gpu_hours"}
    )
    flows = project(scenario).lines["cash_flow_equity_usd"][0]
    values, counts = np.unique(flows[1:].round(0), return_counts=True)
    assert round(flows[0]) == -1_081_408 and values[np.argmax(counts)] == 389_038
    assert flows[1:].max().round(0) == 454_151 and len(values) > 2  # not one constant flow
    text = " ".join(METHODOLOGY.split())
    assert (
        "−1,081,408 USD then +389,038 in most months, less in the months that pay a tax "
        "installment and up to +454,151 once the loan is repaid"
    ) in text


def test_the_lives_page_says_llama2s_npvs_are_without_its_debt():
    file = SCENARIOS / "llama2-70b-h200.toml"
    assert load_scenario(file).financing.debt_share > 0
    page = (ROOT / "docs" / "lives.md").read_text()
    assert "(60-month horizon, no debt)" not in page
    assert "with the debt its file gives taken out: `--set financing.debt_share=0`" in page


def test_the_page_lists_the_rates_that_accrue_nominally():
    text = " ".join(METHODOLOGY.split())
    assert "The one exception is" not in text
    for words in (
        "`econ.units.nominal_monthly_rate`",
        '`financing.debt_rate_quote = "nominal"`',
        "`[[financing.tranches]]`",
        "`opex.maintenance_share_of_capex_annual`",
        "`facility.maintenance_share_of_capex_annual`",
    ):
        assert words in text, words
    # maintenance and insurance: a twelfth of the annual share of capex a month
    scenario = load_scenario(
        SEED,
        {
            "opex.maintenance_share_of_capex_annual": 0.03,
            "opex.insurance_share_of_capex_annual": 0.012,
        },
    )
    bare = load_scenario(
        SEED,
        {
            "opex.maintenance_share_of_capex_annual": 0.0,
            "opex.insurance_share_of_capex_annual": 0.0,
        },
    )
    with_costs, without = (project(s).monthly.opex_usd.to_numpy() for s in (scenario, bare))
    capex = project(bare, monthly=False).summary.capex_usd_total.iloc[0]
    assert (with_costs - without)[1] == pytest.approx(0.042 / 12 * capex, rel=1e-9)
