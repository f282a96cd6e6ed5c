"""An outside lender's review of the capital stack (review 25): what the stack does that its
figures did not say (conversions paid in shares, negative floating rates, the tested covenant
ratio, equity outside the tranches), messages naming the field, and bounds on absurd inputs."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from econ import load_scenario, project
from tests.conftest import ROOT

STACK = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72-capital-stack.toml"


def stack_with(*tranches, **overrides):
    """The ready-made capital-stack scenario financed by `tranches` instead of its own."""
    return load_scenario(STACK, {"financing.tranches": list(tranches), **overrides})


def warnings_of(scenario) -> list[str]:
    return project(scenario, monthly=False).summary["warnings"].iloc[0]


def convertible(settlement: str, growth: float) -> dict:
    return {
        "type": "convertible_notes",
        "name": "c",
        "amount_usd": 1_500_000.0,
        "coupon_annual": 0.0175,
        "maturity_month": 36,
        "reference_share_price_usd": 100.0,
        "conversion_premium": 0.25,
        "share_price_growth_annual": growth,
        "settlement": settlement,
    }


PRICED_EQUITY = {"type": "equity", "name": "e", "reference_share_price_usd": 100.0}


# 1. A conversion is paid in shares: the equity's returns are before that dilution --------------


def test_a_physical_conversion_is_said_with_its_shares_and_their_value():
    warnings = warnings_of(stack_with(convertible("physical", 0.5), PRICED_EQUITY))
    said = [w for w in warnings if "convertible notes 'c' convert" in w]
    # By hand: K = 100 x 1.25 = 125 USD; S in month 36 = 100 x 1.5^3 = 337.50 USD; physical
    # settlement delivers face / K = 1,500,000 / 125 = 12,000 shares, worth 12,000 x 337.5.
    assert len(said) == 1, warnings
    assert (
        "convert in month 36: 12,000 shares issued, worth 4,050,000 USD at the share price of "
        "337.50 USD then (physical settlement: its 1,500,000 USD face is repaid in shares, not "
        "cash)" in said[0]
    )
    assert (
        "irr_equity_annual, npv_equity_usd and moic_equity are the returns of the equity before "
        "that dilution (the converted value is paid in shares, not cash" in said[0]
    )


def test_a_net_share_conversion_is_said_with_the_value_above_the_face():
    warnings = warnings_of(stack_with(convertible("net_share", 0.5), PRICED_EQUITY))
    said = [w for w in warnings if "convertible notes 'c' convert" in w]
    # Net share: the face in cash, the conversion value above it, 1.5e6 x (337.5 / 125 - 1) =
    # 2,550,000 USD, in shares at 337.50: 7,555.6 shares.
    assert len(said) == 1, warnings
    assert "7,556 shares issued, worth 2,550,000 USD" in said[0]
    assert "the 2,550,000 USD of conversion value above it in shares" in said[0]
    assert "before that dilution" in said[0]


def test_notes_repaid_in_cash_are_not_said_to_convert():
    warnings = warnings_of(stack_with(convertible("physical", 0.0), PRICED_EQUITY))
    assert not [w for w in warnings if "convert in month" in w], warnings


# 2. A negative all-in floating rate is said (the index may be negative, as EURIBOR was) --------


def floating_loan(curve: dict, spread: float, floor: float | None = None) -> dict:
    floating = {"spread_annual": spread, "curve": curve}
    if floor is not None:
        floating["floor_annual"] = floor
    return {
        "type": "term_loan",
        "name": "a",
        "amount_usd": 1e6,
        "maturity_month": 40,
        "floating": floating,
    }


def test_a_negative_floating_rate_is_said_with_its_first_month_and_lowest_rate():
    flat = {"kind": "flat", "rate_annual": -0.05}
    warnings = warnings_of(stack_with(floating_loan(flat, 0.0)))
    said = [w for w in warnings if "below 0" in w]
    # A term loan issued in month 0 and due in month 40 accrues in months 1-40, each at -5% + 0.
    assert said == [
        "tranche 'a': the all-in floating rate (index + spread) is below 0 in 40 months, first "
        "in month 1 (lowest -5.00% a year): the interest is negative, paid to the borrower, while "
        "a negative fixed rate is refused; credit agreements floor the benchmark at 0 (LSTA model "
        'provisions: "but not less than the Floor"), and floating.floor_annual = 0 keeps the '
        "rate at or above the spread"
    ], warnings
    stepped = {
        "kind": "stepped",
        "steps": [{"month": 0, "rate_annual": 0.01}, {"month": 12, "rate_annual": -0.03}],
    }
    said = [w for w in warnings_of(stack_with(floating_loan(stepped, 0.01))) if "below 0" in w]
    # 1% + 1% to month 11, then -3% + 1% = -2% in months 12-40 (29 months)
    assert len(said) == 1 and "below 0 in 29 months, first in month 12 (lowest -2.00%" in said[0]
    floored = warnings_of(stack_with(floating_loan(flat, 0.0, floor=0.0)))
    assert not [w for w in floored if "below 0" in w]


def test_econ_loan_says_a_negative_floating_rate_and_still_runs(capsys):
    from econ.cli import main

    args = ["loan", "--amount", "1e6", "--sofr", "-0.05", "--spread", "0", "--term-months", "12"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert (
        "warning: loan: the all-in floating rate (index + spread) is below 0 in 12 months, first "
        "in month 1 (lowest -5.00% a year)" in out
    )
    assert "--floor 0 keeps the rate at or above the spread" in out
    assert main([*args, "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert len(printed["warnings"]) == 1 and "below 0 in 12 months" in printed["warnings"][0]
    # the negative index is still taken: 1e6 x -5% x 30/360 in month 1
    assert printed["schedule"][1]["interest_usd"] == pytest.approx(-1e6 * 0.05 / 12)
    assert main([*args, "--format", "csv"]) == 0
    done = capsys.readouterr()
    assert "below 0" not in done.out and "warning: loan: the all-in floating rate" in done.err
    assert main([*args, "--floor", "0", "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["warnings"] == [] and printed["schedule"][1]["interest_usd"] == 0.0


# 3. econ loan refuses a spread or floor beside a fixed rate, as a scenario file does -----------


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--spread", "0.03", "--floor", "0.08"], "--spread = 0.03 and --floor = 0.08"),
        (["--spread", "0.03"], "--spread = 0.03"),
        (["--floor", "0"], "--floor = 0.0"),
    ],
)
def test_econ_loan_refuses_a_spread_or_floor_with_a_fixed_rate(extra, named, capsys):
    from econ.cli import main

    args = ["loan", "--amount", "1e6", "--rate", "0.05", "--term-months", "12", *extra]
    assert main(args) == 3
    done = capsys.readouterr()
    assert done.out == "" and "Traceback" not in done.err
    assert done.err.startswith(
        f"error: {named} with --rate = 0.05: expected no --spread or --floor with a fixed --rate "
        "(a fixed rate takes no spread or floor"
    ), done.err


def test_econ_loan_spread_defaults_to_0_on_a_floating_rate(capsys):
    from econ.cli import main

    args = ["loan", "--amount", "1e6", "--sofr", "0.048", "--term-months", "12", "--format"]
    assert main([*args, "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["schedule"][1]["interest_usd"] == pytest.approx(1e6 * 0.048 / 12)


# 4. The covenant breach warning gives the ratio each test tested in its first breach month -----


SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"


def breach_warning(result) -> str:
    return next(w for w in result.warnings[0] if w.startswith("covenant breached"))


def test_the_dscr_breach_gives_the_tested_ratio_in_its_first_month():
    result = project(load_scenario(STACK))
    monthly = result.monthly.loc[result.names[0]]
    # The 12-month test by hand from the monthly lines: (EBITDA - tax) over debt service, each
    # summed over months 29-40 (the workbook's Debt!dscr_test agrees: 1.149x).
    window = monthly.loc[29:40]
    tested = (window.ebitda_usd - window.tax_usd).sum() / window.debt_service_usd.sum()
    assert f"{tested:.3f}" == "1.149"
    assert breach_warning(result) == (
        "covenant breached in 33 months, first in month 40: DSCR below its 1.2x floor over the "
        "12-month test window in 33 months (first in month 40, at 1.149x)"
    )


def test_the_llcr_and_ltv_breaches_give_their_ratios_in_their_first_months():
    covenants = {
        "financing.covenants.dscr_floor": "none",
        "financing.covenants.llcr_floor": 1.5,
        "financing.covenants.ltv_ceiling": 0.55,
    }
    scenario = load_scenario(
        SEED,
        {
            "financing.size_to_min_dscr": None,
            "financing.max_ltv": None,
            "financing.repayment": "level_payment",
            "financing.debt_share": 0.6,
            **covenants,
        },
    )
    result = project(scenario)
    monthly = result.monthly.loc[result.names[0]]
    owed = monthly.debt_balance_usd > 1e-6
    llcr_first = monthly.index[owed & (monthly.llcr < 1.5)][0]
    ltv_first = monthly.index[owed & (monthly.ltv > 0.55)][0]
    warning = breach_warning(result)
    llcr = monthly.llcr[llcr_first]
    ltv = monthly.ltv[ltv_first]
    assert "LLCR below its 1.5x floor in " in warning
    assert f"(first in month {llcr_first}, at {llcr:.3f}x)" in warning
    # the loan of 60% of capex over the GPUs' cost at close: 60.0%
    assert ltv_first == 0 and f"(first in month 0, at {ltv:.1%})" in warning
    assert f"{ltv:.1%}" == "60.0%"


@pytest.mark.parametrize(
    ("path", "overrides"),
    [
        (STACK, {}),
        (SEED, {}),
        (SEED, {"financing.covenants.dscr_floor": "none"}),
        (SEED, {"financing.covenants.first_test_month": 12}),
    ],
)
def test_the_tested_dscr_is_a_monthly_line_and_a_workbook_formula(path, overrides):
    """The ratio the DSCR covenant tests is exported as `dscr_test` (CSV, Parquet, JSON, the
    workbook's Monthly sheet, as a formula over Debt!dscr_test): recomputed here by hand from
    the monthly lines, in the months the covenant tests."""
    from econ.workbook import formula_report

    scenario = load_scenario(path, overrides)
    projection = project(scenario)
    monthly = projection.monthly.loc[scenario.name]
    covenants = scenario.financing.covenants
    if covenants.dscr_floor is None:
        assert monthly.dscr_test.isna().all()
    else:
        window = covenants.test_months
        cfads = (monthly.ebitda_usd - monthly.tax_usd).rolling(window, min_periods=1).sum()
        service = monthly.debt_service_usd.rolling(window, min_periods=1).sum()
        tested = monthly.dscr_test.notna()
        assert tested.any()
        by_hand = (cfads / service)[tested]
        assert monthly.dscr_test[tested].to_numpy() == pytest.approx(by_hand.to_numpy(), 1e-12)
        # tested: from the first test month, in the loan's life with service in the window
        first = covenants.first_test_month or 0
        assert monthly.index[tested].min() >= max(first, 1)
        assert (service[tested] > 0).all()
    report = formula_report(projection, [scenario])[0]
    assert "dscr_test" in report["formulas"]
    assert not [v for v in report["values"] if v.startswith("dscr_test")]


# 5. dilution_shares null: the true reason ------------------------------------------------------


def test_dilution_shares_null_names_the_equity_tranche_without_a_share_price():
    unpriced = {"type": "equity", "name": "e"}
    projection = project(stack_with(convertible("net_share", 0.5), unpriced), monthly=False)
    summary = projection.summary.iloc[0]
    assert pd.isna(summary["dilution_shares"])
    said = [w for w in summary["warnings"] if "dilution_shares" in w]
    # The notes convert (net share: 1.5e6 x (337.5/125 - 1) / 337.5 = 7,555.56 shares); the
    # equity funds the capex the notes do not, 3,535,600 - 1,500,000 = 2,035,600 USD, at no price.
    assert said == [
        "dilution_shares is null: the equity tranche 'e' (2,035,600 USD) issues shares with no "
        "share price to count them by (its reference_share_price_usd is not set); the "
        "convertible notes' conversion alone issues 7,555.56 shares (net of capped calls)"
    ], summary["warnings"]
    assert not [w for w in summary["warnings"] if "no convertible notes convert" in w]
    priced = project(stack_with(convertible("net_share", 0.5), PRICED_EQUITY), monthly=False)
    # priced at 100 USD: 20,356 shares of equity and the conversion's 7,555.56
    dilution = priced.summary.iloc[0]["dilution_shares"]
    assert dilution == pytest.approx(2_035_600 / 100 + 1.5e6 * (337.5 / 125 - 1) / 337.5)


# 6. Messages that name the field, in the file's words -------------------------------------------


DDTL_NOT_DRAWN = {
    "type": "delayed_draw_term_loan",
    "name": "a",
    "amount_usd": 1e6,
    "rate_annual": 0.05,
    "maturity_month": 40,
    "issue_month": 5,
    "availability_months": 3,
    "commitment_fee_annual": 0.01,
}


def test_a_ddtl_whose_default_draw_misses_its_availability_names_the_field_and_the_cure():
    from econ.errors import InputError

    with pytest.raises(InputError) as caught:
        project(stack_with(DDTL_NOT_DRAWN))
    # the capex is all spent in month 0, before the availability period of months 5 to 5 + 3
    assert str(caught.value).endswith(
        "financing.tranches[0] 'a' (delayed_draw_term_loan): it has no draw_schedule, so it "
        "draws with the capex as it is spent, and capex spent in month 0 is outside the "
        "availability period, months 5 to 8 (issue_month 5, availability_months 3); expected a "
        "draw_schedule of draws within those months, or an issue_month and availability_months "
        "that cover the months the capex is spent"
    )
    drawn = {**DDTL_NOT_DRAWN, "draw_schedule": [{"month": 5, "share": 1.0}]}
    assert project(stack_with(drawn), monthly=False).summary.iloc[0]["debt_usd_total"] == 1e6


def test_econ_project_names_the_file_and_the_tranche_without_the_scenario_row(capsys):
    from econ.cli import main

    tranche = "{type='delayed_draw_term_loan', name='a', amount_usd=1e6, rate_annual=0.05, "
    tranche += "maturity_month=40, issue_month=5, availability_months=3}"
    assert main(["project", str(STACK), "--set", f"financing.tranches=[{tranche}]"]) == 3
    err = capsys.readouterr().err
    assert err.startswith(
        f"error: {STACK}: financing.tranches[0] 'a' (delayed_draw_term_loan): it has no "
        "draw_schedule"
    ), err
    assert "(scenario 0)" not in err and "Traceback" not in err


def test_notes_issued_after_the_horizon_are_not_said_to_have_a_draw_schedule():
    from econ.scenario import ScenarioError

    notes = {
        "type": "senior_notes",
        "name": "a",
        "amount_usd": 1e6,
        "coupon_annual": 0.05,
        "issue_month": 100,
        "maturity_month": 120,
    }
    with pytest.raises(ScenarioError) as caught:
        stack_with(notes)
    said = str(caught.value)
    assert "draw schedule" not in said
    assert said.endswith(
        "financing.tranches[0] 'a': issue_month 100 is after the horizon of 72 months: the "
        "senior notes would be issued after the projection ends; expected an issue_month of at "
        "most 72"
    ), said


@pytest.mark.parametrize(
    ("tranches", "expected"),
    [
        (
            "ddtl",
            "financing.tranches = 'ddtl': text, not a list of tables; expected "
            "[[financing.tranches]] tables (or an inline list of tables, [{...}, {...}])",
        ),
        (
            [1, 2],
            "financing.tranches[0] = 1: a number, not a table; expected each item of "
            "financing.tranches to be a table, written [[financing.tranches]] (or {...} in an "
            "inline list)\n  financing.tranches[1] = 2: a number, not a table; expected each item "
            "of financing.tranches to be a table, written [[financing.tranches]] (or {...} in an "
            "inline list)",
        ),
    ],
)
def test_tranches_that_are_no_tables_are_said_in_the_files_words(tranches, expected):
    import tomllib

    from econ.scenario import ScenarioError, validate_dict

    data = tomllib.loads(STACK.read_text())
    data["financing"]["tranches"] = tranches
    with pytest.raises(ScenarioError) as caught:
        validate_dict(data, "s.toml")
    said = str(caught.value)
    assert "valid tuple" not in said and "valid dictionary" not in said
    assert said == f"s.toml: {expected}", said


# 7. Bounds on absurd amounts and conversion prices ----------------------------------------------


def notes(amount: float) -> dict:
    return {
        "type": "senior_notes",
        "name": "n",
        "amount_usd": amount,
        "coupon_annual": 0.09,
        "maturity_month": 63,
    }


def test_a_tranche_amount_past_the_bound_is_refused_naming_it():
    from econ.scenario import ScenarioError
    from econ.scenario.financing_models import MAX_TRANCHE_USD

    with pytest.raises(ScenarioError) as caught:
        stack_with(notes(1e300))
    assert (
        "financing.tranches[0].amount_usd = 1e+300: 1e+300 is above 10,000,000,000,000; expected "
        "a number above 0 and at most 10,000,000,000,000 [USD]" in str(caught.value)
    )
    # the bound: 100,000,000 GPUs (the most a scenario takes) at 100,000 USD each
    from econ.scenario.models import MAX_GPUS

    assert MAX_TRANCHE_USD == MAX_GPUS * 100_000
    assert stack_with(notes(MAX_TRANCHE_USD)).financing.tranches[0].amount_usd == 1e13


def test_econ_loan_takes_the_tranche_amount_bound(capsys):
    from econ.cli import main

    assert main(["loan", "--amount", "1e14", "--rate", "0.05", "--term-months", "12"]) == 3
    err = capsys.readouterr().err
    assert "--amount = 1e14: expected a principal above 0 and at most 10,000,000,000,000" in err


@pytest.mark.parametrize(
    ("price", "premium"),
    [(1e-9, "-100.00%"), (99.99, "-0.01%"), (600.01, "+500.01%"), (1e9, "+999999900.00%")],
)
def test_a_conversion_price_off_the_premiums_is_refused(price, premium):
    from econ.scenario import ScenarioError

    terms = {**convertible("physical", 0.5), "conversion_price_usd": price}
    del terms["conversion_premium"]
    with pytest.raises(ScenarioError) as caught:
        stack_with(terms, PRICED_EQUITY)
    assert (
        f"tranche 'c': conversion_price_usd {price:g} USD is a premium of {premium} over the "
        "reference share price of 100 USD; expected a conversion price from 100 to 600 USD (a "
        "premium of 0 to 500%, as conversion_premium takes)" in str(caught.value)
    ), str(caught.value)


@pytest.mark.parametrize("price", [100.0, 125.0, 600.0])
def test_a_conversion_price_at_the_premiums_conversion_premium_takes_is_accepted(price):
    terms = {**convertible("physical", 0.5), "conversion_price_usd": price}
    del terms["conversion_premium"]
    assert stack_with(terms, PRICED_EQUITY).financing.tranches[0].conversion_price() == price


# 8. Equity raised outside the tranches is said --------------------------------------------------


def test_a_stack_funding_part_of_the_capex_says_the_rest_is_equity_outside_it():
    capex = load_scenario(STACK).capex  # the scenario's capex: 3,100,000 + 72 x (4,300 + 1,750)
    total = capex.system_price_usd + 72 * (capex.networking_usd_per_gpu + 1750.0)
    assert total == 3_535_600.0
    small = {"type": "equity", "name": "e", "amount_usd": 100.0}
    said = [w for w in warnings_of(stack_with(small)) if "outside the tranches" in w]
    assert said == [
        "the tranches (financing.tranches) raise 100 USD, debt proceeds and equity issued, for "
        "a capex of 3,535,600 USD: the other 3,535,500 USD of the capex, fees and capped calls "
        "is equity raised outside the tranches (equity_funding_usd), with no shares counted for "
        "it; an equity tranche without amount_usd or share_of_capex funds the remainder as a "
        "tranche"
    ]
    # notes for half the capex, no equity tranche: the other half is equity outside them
    half = {**notes(0.0), "share_of_capex": 0.5}
    del half["amount_usd"]
    said = [w for w in warnings_of(stack_with(half)) if "outside the tranches" in w]
    assert len(said) == 1 and "raise 1,767,800 USD" in said[0] and "other 1,767,800 USD" in said[0]
    # an equity tranche funding the remainder, or no tranches at all: nothing to say
    assert not [w for w in warnings_of(load_scenario(STACK)) if "outside the tranches" in w]
    assert not [w for w in warnings_of(load_scenario(SEED)) if "outside the tranches" in w]


def test_the_app_shows_the_tested_dscr_as_it_shows_the_months_dscr():
    """The monthly table's new dscr_test column: 2 decimals and n/a where untested, like dscr."""
    import pandas as pd

    from econ.ui.fmt import readable

    table = pd.DataFrame({"dscr": [1.14912, float("nan")], "dscr_test": [1.14912, float("nan")]})
    html = readable(table).to_html()
    assert html.count(">1.15<") == 2 and html.count(">n/a<") == 2
    assert "1.149" not in html
