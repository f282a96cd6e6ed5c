"""A controller's review of book lives, impairment and disposal (review 25).

1. The 'market_value' trigger read no curve (the engine looked it up under another name, and
   the look-up gave 0, so the test ran every month whatever its threshold); a 'rental_price'
   trigger where the scenario has no rental price did the same.
2. The impairment test moved cash: a sale at book value fetched the written-down amount.
"""

from __future__ import annotations

import numpy as np
import pytest

from econ import load_scenario, project
from econ.errors import InputError
from tests.conftest import ROOT
from tests.test_engine_capital import SEED, seed_lines, two_step_impairment

REFRESH = ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"


# --- 1. the market-value trigger reads the market value table -----------------------------------


def market_value_trigger(table, threshold):
    """The indicator of ASC 360-10-35-21(a) / IAS 36.12 on the market value table alone: months
    1..72 whose share (linear between the table's points, flat after the last) is at most
    (1 - threshold) times month 1's (the in-service month's)."""
    months, shares = zip(*table, strict=True)
    share = np.interp(np.arange(73), months, shares)
    trigger = share <= (1.0 - threshold) * share[1]
    trigger[0] = False
    return trigger


@pytest.mark.parametrize("standard", ["us_gaap", "ifrs"])
def test_the_market_value_trigger_follows_its_threshold(standard):
    # The review: a table from 1.0 to 0.95 over 72 months with a 30% threshold impaired the
    # seed from month 7, 2,350,549 USD in all; thresholds 0.3 and 0.99 gave the same. The
    # table never falls 30% below month 1's share, so no month triggers and nothing is impaired.
    flat = [(0, 1.0), (72, 0.95)]
    assert not market_value_trigger(flat, 0.3).any()
    for threshold in (0.3, 0.99):
        m = seed_lines(
            **{
                "depreciation.market_value_table": [{"month": a, "share": s} for a, s in flat],
                "depreciation.impairment": {
                    "price_drop_threshold": threshold,
                    "trigger_price": "market_value",
                    "standard": standard,
                },
            }
        )
        assert not m["impairment_usd"].any(), threshold
    # A table falling to 5% of cost: a 30% fall from month 1's share (1 - 0.95/72) is reached
    # in month 24 (1 - 0.95 m/72 <= 0.7 (1 - 0.95/72) from m = 23.44), a 99% fall never. Each
    # month's loss is the two steps' rebuilt from the monthly lines on that indicator (an
    # 8-year life, so that the GPUs are sold in month 72 for a quarter of their cost).
    falling = [(0, 1.0), (72, 0.05)]
    trigger = market_value_trigger(falling, 0.3)
    assert int(np.argmax(trigger)) == 24 and trigger[24:].all()
    lines = {}
    for threshold in (0.3, 0.99):
        lines[threshold] = seed_lines(
            **{
                "depreciation.life_years": 8.0,
                "depreciation.market_value_table": [{"month": a, "share": s} for a, s in falling],
                "depreciation.impairment": {
                    "price_drop_threshold": threshold,
                    "trigger_price": "market_value",
                    "standard": standard,
                },
            }
        )
    assert not lines[0.99]["impairment_usd"].any()
    m = lines[0.3]
    expected, sale = two_step_impairment(m, 0.3, standard, 0.12, trigger=trigger)
    assert sale == 72 and expected.any() and not expected[:24].any()
    np.testing.assert_allclose(m["impairment_usd"], expected, rtol=0, atol=0.005)


def test_a_rental_trigger_without_a_rental_price_is_refused(capsys):
    # The seed sells tokens and gives no rental price (0 USD/GPU-hour): a 'rental_price' trigger
    # fired every month and wrote 2,350,549 USD off. A price of 0 cannot fall: refused, as a
    # 'market_value' trigger without a market value table is.
    from econ.cli import main

    scenario = load_scenario(
        SEED,
        {
            "depreciation.impairment.price_drop_threshold": 0.3,
            "depreciation.impairment.trigger_price": "rental_price",
        },
    )
    with pytest.raises(
        InputError,
        match=r"deepseek-r1-gb200-nvl72\.toml: scenario 'deepseek-r1-gb200-nvl72': "
        r"depreciation\.impairment\.trigger_price = 'rental_price', but the GPU-rental price "
        r"is 0 in the in-service month \(month 1\): a price of 0 cannot fall, .* expected a "
        r"GPU-rental price the scenario gives "
        r"\(market\.rental_usd_per_gpu_hour, market\.rental_table or market\.rental_series\)",
    ):
        project(scenario)
    code = main(
        [
            "project",
            str(SEED),
            "--set",
            "depreciation.impairment.price_drop_threshold=0.3",
            "--set",
            'depreciation.impairment.trigger_price="rental_price"',
        ]
    )
    err = capsys.readouterr().err
    assert code == 3 and "Traceback" not in err
    assert "deepseek-r1-gb200-nvl72.toml" in err and "trigger_price = 'rental_price'" in err
    # With a rental price the same trigger is tested (a 35% decline a year to a floor of 1.00
    # from 4.00 falls 30% below month 1's price within the six years).
    rented = load_scenario(
        SEED,
        {
            "depreciation.impairment.price_drop_threshold": 0.3,
            "depreciation.impairment.trigger_price": "rental_price",
            "market.rental_usd_per_gpu_hour": 4.0,
            "market.rental_decline_annual": 0.35,
            "market.rental_floor_usd_per_gpu_hour": 1.0,
        },
    )
    assert project(rented).summary.iloc[0].impairment_usd_total >= 0.0


def test_a_curve_the_engine_does_not_have_is_a_programming_error():
    from econ.engine import _pick_curve

    curves = {"token_price": np.ones((2, 3)), "market_value_table": np.full((2, 3), 0.5)}
    picked = _pick_curve(curves, np.array(["token_price", "market_value_table"]))
    np.testing.assert_array_equal(picked, [[1.0, 1.0, 1.0], [0.5, 0.5, 0.5]])
    with pytest.raises(KeyError, match=r"no price curve named \['market_value'\]"):
        _pick_curve(curves, np.array(["token_price", "market_value"]))


# --- 2. an impairment test moves no cash ---------------------------------------------------------


def test_a_sale_at_book_value_fetches_the_book_value_before_impairment():
    # The review: the seed all equity with an 8-year life is sold at the horizon, month 72, at
    # book value: 72/96 of the cost depreciated, so a quarter of it, 883,900 USD. With a 30%
    # price-drop test the sale fetched the written-down amount, 0, and the NPV fell from
    # +135,675 to -312,136 USD. The sale now fetches the same book value (before impairment);
    # the disposal books a gain over the written-down amount, so the cash flows, the tax and
    # net income over the horizon are those of the case without the test (ASC 360-10-35-17 and
    # IAS 36.59 measure a loss; neither moves cash).
    changes = {"financing.debt_share": 0.0, "depreciation.life_years": 8.0}
    scenarios = [
        load_scenario(SEED, {**changes, "name": "untested"}),
        load_scenario(
            SEED,
            {
                **changes,
                "name": "tested",
                "depreciation.impairment.price_drop_threshold": 0.3,
            },
        ),
    ]
    result = project(scenarios)
    s = result.summary
    tested, untested = result.monthly.loc["tested"], result.monthly.loc["untested"]
    cost = tested.capex_usd.sum()
    assert cost == pytest.approx(72 * (3_100_000 / 72 + 4300 + 1750), abs=1e-6)
    assert s.impairment_usd_total["tested"] > 0.0
    assert tested.disposal_usd.iloc[72] == pytest.approx(cost / 4, abs=0.005)
    assert tested.disposal_usd.iloc[72] == pytest.approx(883_900.0, abs=0.005)
    for line in ("cash_flow_project_usd", "tax_usd", "disposal_usd"):
        np.testing.assert_allclose(tested[line], untested[line], rtol=0, atol=1e-6)
    assert s.npv_usd["tested"] == pytest.approx(s.npv_usd["untested"], abs=1e-6)
    assert s.npv_usd["tested"] == pytest.approx(135_675, abs=1.0)
    assert s.net_income_usd_total["tested"] == pytest.approx(
        s.net_income_usd_total["untested"], abs=0.01
    )
    carrying = cost - (tested.depreciation_usd + tested.impairment_usd).sum()
    assert tested.gain_on_disposal_usd.iloc[72] == pytest.approx(cost / 4 - carrying, abs=0.005)
    warning = next(w for w in result.warnings[1] if w.startswith("sold in month 72"))
    assert "883,900 USD is assumed sold at book value (the book value before the impairment" in (
        warning
    )


def test_the_refresh_month_does_not_move_with_an_impairment_test():
    # The review: `econ refresh h200-fleet-gb300-refresh --vintage gb300` refreshes in month 18
    # (+28.6M USD); with a 30% price-drop test it moved to month 71, as the H200s kept longer
    # were written down and sold for the written-down amount. With the debt sized without a cap
    # on the book value (an LTV on book value is a term of the loan an impairment does change,
    # docs/depreciation.md) every refresh month's NPV is the same with the test as without.
    from econ.fleet import refresh_analysis

    runs = [
        refresh_analysis(
            load_scenario(
                REFRESH,
                {
                    "financing.max_ltv": None,
                    "depreciation.impairment.price_drop_threshold": threshold,
                },
            ),
            "gb300",
        )
        for threshold in (None, 0.3)
    ]
    assert runs[0].best_month == runs[1].best_month == 18
    np.testing.assert_allclose(runs[1].table.npv_usd, runs[0].table.npv_usd, rtol=0, atol=1e-6)
    assert runs[1].npv_keep_usd == pytest.approx(runs[0].npv_keep_usd, abs=1e-6)


# --- 6. messages that name the option and the value typed, and offer values taken --------------


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--to-month", "100"], "--to-month = 100: expected a month from 1 to 71 (the horizon is "),
        (["--to-month", "72"], "--to-month = 72: expected a month from 1 to 71 (the horizon is "),
        (["--from-month", "0"], "--from-month = 0: expected a month from 1 to 600"),
        (["--from-month", "-1"], "--from-month = -1: expected a month from 1 to 600"),
    ],
)
def test_a_refresh_month_out_of_range_is_named_by_its_option(args, said, capsys):
    # They said "refresh month 72 is outside 1..71" for --to-month 100 (a month not typed, no
    # option named), and "expected a month from 0 to 600" for -1, though 0 is then refused.
    from econ.cli import main

    assert main(["refresh", str(REFRESH), "--vintage", "gb300", *args]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"error: {said}") and err.count("\n") == 1, err
    # the month the message offers is one the command takes (a refresh from month 1 or to 71)
    taken = (
        ["--to-month", "71"] if "--to-month" in args else ["--from-month", "1", "--to-month", "2"]
    )
    assert main(["refresh", str(REFRESH), "--vintage", "gb300", *taken, "--format", "json"]) == 0


@pytest.mark.parametrize("option", ["--retirement-month", "--in-service-month", "--change-month"])
def test_a_depreciation_month_below_1_is_told_the_months_taken(option, capsys):
    from econ.cli import main

    extra = ["--change-life-years", "5"] if option == "--change-month" else []
    for month in ("-2", "0"):
        assert main(["depreciation", "--cost", "1e6", option, month, *extra]) == 3
        err = capsys.readouterr().err
        assert err.startswith(f"error: {option} = {month}: expected a month from 1 to 600"), err
        assert "from 0" not in err


def test_the_shortest_life_message_offers_lives_it_takes():
    # It offered "1/12 = 0.0833333 years, rounded", which it then refused: each life the message
    # names now validates, and one month's (1/12) depreciation comes out of it.
    import re

    from econ.scenario import ScenarioError, validate_dict

    with pytest.raises(ScenarioError) as refused:
        validate_dict({"depreciation": {"life_years": 0.0833333}})
    offered = re.search(r"1/12 year: ([0-9.]+) to 16 digits, or ([0-9.]+) or more", str(refused))
    assert offered is not None, str(refused.value)
    for life in offered.groups():
        assert float(life) >= 1 / 12 - 1e-15
        scenario = validate_dict({"depreciation": {"life_years": float(life)}})
        assert scenario.depreciation.life_years == pytest.approx(float(life), rel=1e-12)


def test_a_salvage_above_the_cost_is_said_in_full(capsys):
    from econ.cli import main

    assert main(["depreciation", "--cost", "3535612", "--salvage", "3535613"]) == 3
    assert capsys.readouterr().err.strip() == (
        "error: --salvage = 3,535,613: expected a residual value from 0 to below the cost "
        "(3,535,612) [USD]"
    )


# --- 4-5. what the book life moves: docs/lives.md and docs/gains.md ------------------------------


def test_a_book_life_beyond_the_horizon_changes_the_levelized_cost():
    # docs/lives.md said flatly that no accounting policy changes the levelized cost; it holds
    # only where every life ends by the horizon. llama2-70b-h200 (60 months, no debt, half its
    # GPUs in service from month 1 and half from month 2) sold at book value at the horizon:
    # with a 5-year life the second half has 1 of its 60 months left, cost / 120; with a
    # 6-year life the halves have 12 and 13 of 72 months left, cost x 25/144. The cash of that
    # sale moves NPV and LCOT, which the page now says with the figures.
    file = ROOT / "models" / "scenarios" / "llama2-70b-h200.toml"
    scenarios = [
        load_scenario(file, {"name": f"{life}", "financing.debt_share": 0.0,
                             "depreciation.life_years": life})
        for life in (5.0, 6.0)
    ]  # fmt: skip
    result = project(scenarios)
    cost = result.summary.capex_usd_total.iloc[0]
    sale = result.lines["disposal_usd"][:, 60]
    np.testing.assert_allclose(sale, [cost / 120, cost * 25 / 144], rtol=1e-12)
    s = result.summary
    assert s.npv_usd.iloc[1] > s.npv_usd.iloc[0]
    assert s.lcot_usd_per_mtok.iloc[1] < s.lcot_usd_per_mtok.iloc[0]
    page = (ROOT / "docs" / "lives.md").read_text()
    assert "so no accounting policy changes it" not in page
    figures = (
        f"sells for {sale[0]:,.0f} USD with its 5-year life and {sale[1]:,.0f} USD with a 6-year "
        f"life: NPV {s.npv_usd.iloc[0]:,.0f} against {s.npv_usd.iloc[1]:,.0f} USD, LCOT "
        f"{s.lcot_usd_per_mtok.iloc[0]:.4f} against {s.lcot_usd_per_mtok.iloc[1]:.4f} USD"
    )
    assert figures in page, figures
    # (the review's figures)
    assert (round(s.npv_usd.iloc[0]), round(s.npv_usd.iloc[1])) == (1_729_816, 2_191_173)


def test_the_gains_page_says_the_loan_moves_the_value_between_book_lives():
    # docs/gains.md said the book life moves the gain's value "only through the timing of tax";
    # between 4 and 5 years it is all the loan: the 4-year life's book value falls too fast for
    # the LTV to allow debt. The difference of the values, each an NPV difference of two
    # projections, is the bridge's financing entry of the 5-year life.
    from econ.gains import FINANCING_DRIVER, value_gain

    values = {
        life: value_gain(load_scenario(SEED, {"depreciation.life_years": life}))
        for life in (4.0, 5.0)
    }
    npv = {life: g.gain["npv_usd"] - g.base["npv_usd"] for life, g in values.items()}
    bridge = {life: {e["driver"]: e["npv_usd"] for e in g.bridge} for life, g in values.items()}
    assert values[4.0].base["debt_usd"] == 0.0 and FINANCING_DRIVER not in bridge[4.0]
    assert npv[5.0] - npv[4.0] == pytest.approx(bridge[5.0][FINANCING_DRIVER], abs=1.0)
    assert bridge[5.0][FINANCING_DRIVER] == pytest.approx(13_207, abs=1.0)
    page = (ROOT / "docs" / "gains.md").read_text()
    assert "only through the timing of tax" not in page
    assert "financing (loan re-sized) none, +13k, +17k" in page


# --- 3. EBIT and the accounting cost count the gain or loss on disposal --------------------------

MACRS_SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72-macrs.toml"
RETIRED_36 = {"fleet.retire_month": 36, "depreciation.sale_value_share": 0.3}


def test_ebit_and_the_accounting_cost_count_the_loss_on_disposal():
    # The review: the MACRS seed retired at month 36 and sold for 30% of its cost, half of it
    # still on the books (6-year straight line), books a loss of 0.3 C - C/2 = -707,120 USD.
    # EBIT (operating income, where ASC 360-10-45-5 reports a gain or loss on the sale of a
    # long-lived asset) was 2,165,574 USD and the accounting cost 0.1330 USD per million tokens,
    # both without it; with it 1,458,454 and 0.1589.
    scenario = load_scenario(MACRS_SEED, RETIRED_36)
    result = project(scenario)
    m = result.monthly.loc[scenario.name]
    s = result.summary.iloc[0]
    cost = m.capex_usd.sum()
    loss = 0.3 * cost - cost / 2
    assert loss == pytest.approx(-707_120.0, abs=0.005)
    assert m.gain_on_disposal_usd.sum() == pytest.approx(loss, abs=0.005)
    ebit = m.ebitda_usd.sum() - m.depreciation_usd.sum() - m.impairment_usd.sum() + loss
    assert s.ebit_usd_total == pytest.approx(ebit, abs=0.01)
    assert s.ebit_usd_total == pytest.approx(1_458_454, abs=1.0)
    booked = (
        m.power_usd + m.facility_usd + m.opex_usd + m.depreciation_usd + m.impairment_usd
    ).sum() - loss
    accounting = (booked + m.interest_usd.sum()) / m.tokens.sum() * 1e6
    assert s.accounting_cost_usd_per_mtok == pytest.approx(accounting, rel=1e-12)
    assert round(s.accounting_cost_usd_per_mtok, 4) == 0.1589
    # Each year's EBIT reconciles to its net income: EBIT - interest - tax expense.
    annual = result.annual.loc[scenario.name]
    np.testing.assert_allclose(
        annual.ebit_usd - annual.interest_usd - annual.current_tax_usd - annual.deferred_tax_usd,
        annual.net_income_usd,
        rtol=0,
        atol=1e-6,
    )
    assert annual.ebit_usd.sum() == pytest.approx(ebit, abs=0.01)


def test_the_workbook_ebit_counts_the_gain_after_libreoffice_recalculates(tmp_path):
    # The Summary's EBIT and the Annual sheet's are live formulas: LibreOffice recalculates them
    # to the engine's figures with the loss on disposal in them, and again after the sale price
    # is changed in the workbook (to 50% of cost: a loss of 0.5 C - C/2 = 0).
    import shutil

    from openpyxl import load_workbook

    from tests.test_workbook import LEVEL_LOAN, _with_input, build, recalculate
    from tests.workbook_helpers import summary_cell

    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) is not installed; `make test` installs it")
    sold = load_scenario(SEED, {**LEVEL_LOAN, **RETIRED_36})
    written = tmp_path / "sold.xlsx"
    build([sold], written)
    changed = tmp_path / "sold_at_half.xlsx"
    _with_input(written, changed, "depreciation.sale_value_share", 0.5)
    out = tmp_path / "recalculated"
    out.mkdir()
    recalculate([written, changed], out)
    at_half = load_scenario(
        SEED, {**LEVEL_LOAN, **RETIRED_36, "depreciation.sale_value_share": 0.5}
    )
    ebits = []
    for file, scenario in ((written, sold), (changed, at_half)):
        result = project(scenario)
        m = result.monthly.loc[scenario.name]
        expected = (
            m.ebitda_usd.sum()
            - m.depreciation_usd.sum()
            - m.impairment_usd.sum()
            + m.gain_on_disposal_usd.sum()
        )
        book = load_workbook(out / file.name, data_only=True)
        cell = summary_cell(book["Summary"], "ebit_usd_total")
        assert cell.value == pytest.approx(expected, rel=1e-9), file.name
        ebits.append(cell.value)
        assert cell.value == pytest.approx(result.summary.ebit_usd_total.iloc[0], rel=1e-9)
        sheet = book["Annual"]
        header = [c.value for c in sheet[1]]
        column = header.index("ebit_usd")
        years = [row[column].value for row in sheet.iter_rows(min_row=2) if row[0].value]
        annual = result.annual.loc[scenario.name].ebit_usd.to_numpy()
        np.testing.assert_allclose(years, annual, rtol=1e-9, atol=1e-6)
    assert ebits[1] - ebits[0] == pytest.approx(0.2 * sold_cost(sold), rel=1e-9)
    # a live formula: EBITDA - depreciation - impairment + gain, four sums over the Monthly sheet
    formula = str(summary_cell(load_workbook(written)["Summary"], "ebit_usd_total").value)
    assert formula.startswith("=SUM(") and formula.count("SUM(") == 4, formula


def sold_cost(scenario) -> float:
    """The scenario's capex [USD]: what a share of cost prices the sale from."""
    return float(project(scenario).summary.capex_usd_total.iloc[0])
