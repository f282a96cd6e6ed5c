"""The sizing warning names the DSCR test that sized a loan to nothing (review 26): a 12-month
window ending in month 4 whose CFADS sums below zero, month 4's income-tax payment exceeding its
EBITDA, not 'every month of the term'."""

from econ import load_scenario, project
from tests.conftest import ROOT

SCENARIO = ROOT / "models/scenarios/deepseek-r1-gb200-nvl72.toml"


def _sizing_warning(gain: float, price: float | None = None, **covenants) -> str:
    scenario = load_scenario(SCENARIO)
    data = scenario.model_dump()
    data["throughput"]["steps"] = [{"month": 5, "gain": gain}]
    data["financing"]["covenants"].update(covenants)
    if price is not None:
        data["market"]["price_usd_per_mtok"] = price
    projection = project(type(scenario).model_validate(data))
    return next(w for w in projection.warnings[0] if w.startswith("debt sized"))


def test_no_debt_names_the_window_that_binds():
    said = _sizing_warning(9.0)
    assert " 0 USD (0.0% of capex); binding constraint: dscr" in said
    assert "every month of the term" not in said
    # (the monthly CSV: EBITDA - tax_usd of months 1-4 is 166,971, 160,814, 154,837, -543,242)
    assert (
        "no debt: the cash flow available for debt service over the DSCR covenant's 12-month "
        "window ending in month 4 (months 0 to 4) is -60,620 USD, and the covenant tests that "
        "window (it holds debt service): month 4's is -543,242 (EBITDA 149,035 less the income "
        "tax paid then, 692,277); a financing.covenants.first_test_month after month 4 leaves "
        "that window untested, as does a 1-month window" in said
    )


def test_a_window_that_cuts_the_debt_is_named():
    said = _sizing_warning(8.0)
    assert "475,286 USD" in said
    assert (
        "the minimum DSCR binds over the DSCR covenant's 12-month window ending in month 4" in said
    )


def test_the_remedies_named_allow_debt():
    for remedy in ({"first_test_month": 12}, {"test_months": 1}):
        said = _sizing_warning(9.0, **remedy)
        assert "2,288,877 USD" in said and "binding constraint: ltv" in said


def test_a_cash_flow_never_positive_keeps_the_term_wording():
    said = _sizing_warning(0.2, price=0.001)
    assert " 0 USD (0.0% of capex)" in said
    assert "(for a sculpted loan: in every month of the term, so nothing would repay it)" in said
