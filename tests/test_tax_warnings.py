"""Inputs a projection reads without effect, depreciation before service, unused tax losses and
the words of `econ depreciation`'s refusals (the outside tax review of 2026-12)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest

from econ import load_scenario, project
from econ.batch import ScenarioBatch
from econ.scenario.io import dumps
from tests.conftest import econ_in_process

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "models" / "scenarios").glob("*.toml"))
SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
REFRESH = ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"
NO_EFFECT = "has no effect"
BONUS = ["depreciation.tax.bonus_share=1.0", 'depreciation.tax.convention="mid-quarter Q1"']


@pytest.fixture
def run(capsys):
    """`econ ARGS...` in this process (`tests.conftest.econ_in_process`): (exit code, stdout,
    stderr)."""

    def call(*args: str):
        done = econ_in_process(capsys, *args)
        return done.returncode, done.stdout, done.stderr

    return call


def warnings_with(text: str, warnings) -> list[str]:
    return [w for w in warnings if text in w]


# --- 1. inputs the chosen method does not read ----------------------------------------------


def test_tax_inputs_under_the_book_tax_method_are_named_with_the_fix():
    seed = project(load_scenario(SEED))
    given = project(load_scenario(SEED, BONUS))
    # Nothing changes: the book schedule is taxed (depreciation.tax.method defaults to book).
    assert given.summary["npv_usd"].iloc[0] == seed.summary["npv_usd"].iloc[0]
    found = warnings_with(NO_EFFECT, given.warnings[0])
    assert found == [
        "depreciation.tax.convention = 'mid-quarter Q1' has no effect: depreciation.tax.method is "
        "'book' (the book schedule is taxed); set depreciation.tax.method = 'macrs_gds' to use "
        "it, or leave it out",
        "depreciation.tax.bonus_share = 1.0 has no effect: depreciation.tax.method is 'book' (the "
        "book schedule is taxed); set depreciation.tax.method = 'macrs_gds' for bonus "
        "depreciation (IRC §168(k)), or leave it out",
    ]
    assert not warnings_with(NO_EFFECT, seed.warnings[0])


def test_the_same_inputs_under_macrs_are_read_and_a_tax_life_is_not():
    macrs = load_scenario(SEED, [*BONUS, 'depreciation.tax.method="macrs_gds"'])
    assert not warnings_with(NO_EFFECT, project(macrs).warnings[0])
    short = load_scenario(
        SEED, ['depreciation.tax.method="macrs_gds"', "depreciation.tax.life_years=3"]
    )
    (found,) = warnings_with(NO_EFFECT, project(short).warnings[0])
    assert found.startswith(
        "depreciation.tax.life_years = 3.0 has no effect: depreciation.tax.method is 'macrs_gds', "
        "whose life is depreciation.tax.recovery_years; set depreciation.tax.method to one of "
        "straight_line, declining_balance"
    )


@pytest.mark.parametrize(
    ("overrides", "warned"),
    [
        (["depreciation.factor=1.5"], ["depreciation.factor = 1.5"]),
        (['depreciation.method="declining_balance"', "depreciation.factor=1.5"], []),
        (["depreciation.tax.custom_percent=[50, 50]"], ["depreciation.tax.custom_percent = [50.0"]),
        # the book life also sets the default horizon: never without effect
        (['depreciation.method="custom"', "depreciation.custom_percent=[50, 50]"], []),
    ],
)
def test_book_and_tax_inputs_are_checked_alike(overrides, warned):
    found = warnings_with(NO_EFFECT, project(load_scenario(SEED, overrides)).warnings[0])
    assert [w[: len(prefix)] for w, prefix in zip(found, warned, strict=True)] == warned


def test_validate_lists_the_warning_and_ready_made_files_carry_none(run, tmp_path):
    code, out, err = run("validate", *map(str, SCENARIOS))
    assert code == 0 and NO_EFFECT not in out + err
    text = SEED.read_text() + "\n[depreciation.tax]\nbonus_share = 1.0\n"
    path = tmp_path / "bonus.toml"
    path.write_text(text)
    code, out, err = run("validate", str(path))
    assert code == 0 and f"{path}: ok" in out
    assert (
        "warning [deepseek-r1-gb200-nvl72]: depreciation.tax.bonus_share = 1.0 has no effect: "
        "depreciation.tax.method is 'book'" in err
    )


def test_a_scenario_econ_wrote_back_with_every_field_warns_of_nothing(tmp_path):
    # A saved scenario writes every field, defaults included: a default is not "given".
    for source in SCENARIOS:
        path = tmp_path / source.name
        path.write_text(dumps(load_scenario(source)))
        assert not warnings_with(NO_EFFECT, project(load_scenario(path)).warnings[0]), source


def test_a_batch_that_varies_the_method_warns_only_the_rows_that_ignore_the_input():
    base = load_scenario(SEED, BONUS[:1])
    batch = ScenarioBatch.repeat(base, 2, {"depreciation.tax.method": ["book", "macrs_gds"]})
    rows = [warnings_with(NO_EFFECT, w) for w in project(batch).warnings]
    assert [len(r) for r in rows] == [1, 0]
    assert rows[0][0].startswith("depreciation.tax.bonus_share = 1.0 has no effect")
    varied = ScenarioBatch.repeat(load_scenario(SEED), 2, {"depreciation.tax.bonus_share": [0, 1]})
    assert [len(warnings_with(NO_EFFECT, w)) for w in project(varied).warnings] == [0, 1]


# --- 1. the same in `econ depreciation`: refused, as --sale-value without a sale is ----------


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["--bonus-share", "1.0", "--recovery-years", "7"],
            [
                "--recovery-years = 7 has no effect: --tax-method is 'book' (the book schedule is "
                "taxed); give --tax-method macrs_gds to use it, or leave it out",
                "--bonus-share = 1.0 has no effect: --tax-method is 'book' (the book schedule is "
                "taxed); give --tax-method macrs_gds for bonus depreciation (IRC §168(k)), or "
                "leave it out",
            ],
        ),
        (
            ["--tax-method", "macrs_gds", "--tax-life-years", "3"],
            [
                "--tax-life-years = 3.0 has no effect: --tax-method is 'macrs_gds', whose life is "
                "--recovery-years; give --tax-method one of straight_line, declining_balance, "
                "fixed_declining_balance, sum_of_years_digits, units_of_production, economic to "
                "use it, or leave it out"
            ],
        ),
        (
            ["--no-switch"],
            [
                "--no-switch has no effect: --method is 'straight_line', which does not read it; "
                "give --method declining_balance to use it, or leave it out"
            ],
        ),
        (
            ["--usage", "5"],
            [
                "--usage = '5' has no effect: neither --method (straight_line) nor --tax-method "
                "(book) is units_of_production; give one of them units_of_production to use it, "
                "or leave it out"
            ],
        ),
    ],
)
def test_cli_options_the_methods_do_not_read_are_refused(run, argv, said):
    code, out, err = run("depreciation", "--cost", "1000000", *argv)
    assert code == 3 and out == ""
    assert err.strip() == "error: " + "; ".join(said)


def test_cli_options_the_methods_read_are_used(run):
    # 100% bonus (IRC §168(k)) deducts the whole cost in the in-service month: year 1 takes it.
    argv = ["--tax-method", "macrs_gds", "--bonus-share", "1.0", "--recovery-years", "7"]
    code, out, err = run("depreciation", "--cost", "1000000", *argv, "--format", "json")
    assert code == 0, err
    years = json.loads(out)["yearly"]
    assert years[0]["tax_depreciation_usd"] == 1_000_000.0
    assert years[0]["book_depreciation_usd"] == pytest.approx(1_000_000 / 6)
    # the defaults given explicitly say nothing the command would not do anyway
    assert run("depreciation", "--cost", "1e6", "--bonus-share", "0", "--by", "year")[0] == 0


# --- 2. depreciation that starts after the GPUs serve ---------------------------------------


def test_revenue_before_the_in_service_month_is_named():
    projection = project(load_scenario(SEED, ["depreciation.in_service_month=7"]))
    monthly = projection.monthly.loc["deepseek-r1-gb200-nvl72"]
    earned = monthly["revenue_usd"].iloc[1:7].sum()  # months 1-6, served and not depreciated
    assert (monthly["depreciation_usd"].iloc[1:7] == 0).all() and earned > 0
    (found,) = warnings_with("depreciation.in_service_month", projection.warnings[0])
    assert found == (
        "depreciation.in_service_month = 7 starts depreciation in month 7, but the GPUs serve "
        f"from month 1: in the 6 months before, they earn {earned:,.0f} USD of revenue with no "
        "depreciation against it; an asset is depreciated from when it is available for use "
        "(IAS 16.55; placed in service, IRS Pub 946): expected depreciation.in_service_month at "
        "most 1 (months from the purchase to the first month of service)"
    )
    for path in SCENARIOS:  # none of the ready-made scenarios starts late
        assert not warnings_with("in_service_month", project(load_scenario(path)).warnings[0])


def test_a_vintage_that_starts_depreciating_late_is_named_by_its_row(tmp_path):
    text = REFRESH.read_text().replace(
        "[vintages.depreciation]\n", "[vintages.depreciation]\nin_service_month = 4\n", 1
    )
    path = tmp_path / "late.toml"
    path.write_text(text)
    projection = project(load_scenario(path))
    (found,) = warnings_with("in_service_month", projection.warnings[0])
    # bought in month 18, serving from 19; depreciated from 18 + 4 = 22
    assert found.startswith(
        "[gb300] depreciation.in_service_month = 4 starts depreciation in month 22, but the GPUs "
        "serve from month 19: in the 3 months before"
    )
    assert found.endswith(
        "expected depreciation.in_service_month at most 1 (months from the "
        "purchase to the first month of service)"
    )


# --- 3. losses left unused at the horizon and no valuation allowance ------------------------


def unused_losses(projection, name: str) -> float:
    """Losses carried forward and unused at the end, from the monthly lines alone: taxable income
    by tax year (month 0 joins year 1), cumulative C_k, and max(0, max C_k) - C_Y (no limit)."""
    m = projection.monthly.loc[name]
    taxable = (
        m["ebitda_usd"]
        - m["tax_depreciation_usd"]
        - m["interest_usd"]
        + m["tax_gain_on_disposal_usd"]
    ).to_numpy()
    years = [taxable[:13].sum()] + [
        taxable[12 * k + 1 : 12 * k + 13].sum() for k in range(1, (len(taxable) - 2) // 12 + 1)
    ]
    cumulative = list(itertools.accumulate(years))
    return max(0.0, max(cumulative)) - cumulative[-1]


def test_the_seeds_unused_losses_are_named_with_their_asset_and_the_option():
    projection = project(load_scenario(SEED))
    losses = unused_losses(projection, "deepseek-r1-gb200-nvl72")
    assert losses == pytest.approx(1_410_550, abs=0.5)  # the tax review's figure
    # the net deferred tax asset at the horizon (the GPUs sold, no temporary difference) is the
    # rate times the losses: a second route to the same figure
    liability = projection.monthly.loc["deepseek-r1-gb200-nvl72"]["deferred_tax_liability_usd"]
    assert -liability.iloc[-1] == pytest.approx(0.21 * losses, rel=1e-12)
    (found,) = warnings_with("tax losses", projection.warnings[0])
    assert found == (
        f"{losses:,.0f} USD of tax losses are still unused at the horizon (month 72): with "
        "financing.tax_valuation_allowance = 'none', net income keeps their deferred tax asset, "
        f"{0.21 * losses:,.0f} USD at the 21% tax rate, as if taxable income beyond the "
        "projection (a group's) will absorb them; a stand-alone fleet projected to end with "
        "unused losses needs a valuation allowance assessed (ASC 740-10-30-5(e)): "
        "financing.tax_valuation_allowance = 'beyond_reversing_liabilities' recognizes the asset "
        "only up to the deferred tax liabilities whose reversal absorbs the losses (the cash "
        "flows give unused losses no value either way)"
    )


@pytest.mark.parametrize(
    "overrides",
    [
        ['financing.tax_valuation_allowance="beyond_reversing_liabilities"'],
        ["financing.tax_rate=0"],  # no asset to recognize
    ],
)
def test_no_loss_warning_with_an_allowance_or_without_tax(overrides):
    projection = project(load_scenario(SEED, overrides))
    assert not warnings_with("tax losses", projection.warnings[0])


def test_a_case_that_uses_its_losses_is_not_warned():
    llama = ROOT / "models" / "scenarios" / "llama2-70b-h200.toml"
    projection = project(load_scenario(llama))
    assert unused_losses(projection, "llama2-70b-h200") == pytest.approx(0.0, abs=1e-6)
    assert not warnings_with("tax losses", projection.warnings[0])


# --- 4. the words of econ depreciation's refusals --------------------------------------------


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (  # the tax life is the book life here: one refusal, under the option given
            ["--life-years", "0", "--tax-method", "straight_line"],
            "error: --life-years = 0.0: expected a useful life of at least one month "
            "(1/12 year: 0.0833333333333333 to 16 digits, or 0.0834 or more); a life is given "
            "in years",
        ),
        (  # the tax method's refusal of a life it took from the book names --life-years too
            ["--life-years", "2.5", "--tax-method", "fixed_declining_balance"],
            "error: --life-years is 2.5; expected a whole number of years for "
            "fixed_declining_balance (the spreadsheet's DB periods are years)",
        ),
        (
            ["--tax-rate", "1.5"],
            "error: --tax-rate = 1.5: expected a rate from 0 to below 1 [fraction]",
        ),
        (
            ["--retirement-month", "10", "--sale-value", "nan"],
            "error: --sale-value = nan: expected a finite number (proceeds of at least 0 [USD])",
        ),
        (
            ["--change-month", "10"],
            "error: a change of estimate needs both --change-month and --change-life-years; got "
            "--change-month = 10 and no --change-life-years; expected both (the first month on "
            "the new life and the new useful life [years]) or neither",
        ),
        (  # (10 - 1) / 12 = 0.75 years in service at the change
            ["--change-month", "10", "--change-life-years", "0.5"],
            "error: --change-life-years is 0.5, not longer than the 0.75 years already in service "
            "at the change; expected a new life of more than 0.75 years, counted from the "
            "in-service month",
        ),
        (
            ["--tax-method", "custom"],
            "error: --tax-method custom needs --tax-custom-percent, the annual percentages "
            "summing to 100",
        ),
        (  # --salvage is refused by its own name and range, not as the share it gives
            ["--salvage", "1000000"],
            "error: --salvage = 1,000,000: expected a residual value from 0 to below the cost "
            "(1,000,000) [USD]",
        ),
        (  # the bounds of a scenario's salvage_share, in econ's words, not pydantic's
            ["--salvage-share", "-0.1"],
            "error: --salvage-share = -0.1: -0.1 is below 0; expected a fraction from 0 to below "
            "1 (1 = 100%)",
        ),
        (  # an item of a list: the option as typed and the item's position
            ["--method", "custom", "--custom-percent", "50,nan,50"],
            "error: --custom-percent = '50,nan,50', value 2: not a number (NaN); expected a "
            "finite number",
        ),
        (
            ["--tax-method", "custom", "--tax-custom-percent", "50,inf,50"],
            "error: --tax-custom-percent = '50,inf,50', value 2: expected a finite number (inf "
            "written, or a number beyond 1.8e308 such as 1e400)",
        ),
        (
            ["--method", "economic", "--value-table", "0:1,24:nan"],
            "error: --value-table = '0:1,24:nan', pair 2 (share): not a number (NaN); expected a "
            "finite number",
        ),
        (
            ["--method", "economic", "--value-table", "0:1,-3:0.5"],
            "error: --value-table = '0:1,-3:0.5', pair 2 (month): -3 is below 0; expected a whole "
            "number from 0 to 600 [month index]",
        ),
        (  # a long list is quoted cut (it was quoted whole: 15,098 characters)
            ["--method", "custom", "--custom-percent=-5," + ",".join(["1"] * 3000)],
            "error: --custom-percent = (-5.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, "
            "1.0, 1.0, 1.0, 1.0, 1.0... (15,006 characters): --custom-percent holds -5.0; expected "
            "percentages of at least 0",
        ),
        (
            ["--life-years", "0.0833"],
            "error: --life-years = 0.0833: expected a useful life of at least one month "
            "(1/12 year: 0.0833333333333333 to 16 digits, or 0.0834 or more); a life is given "
            "in years",
        ),
    ],
)
def test_cli_refusals_name_the_option_the_value_and_what_is_expected(run, argv, said):
    code, out, err = run("depreciation", "--cost", "1000000", *argv)
    assert (code, out, err.strip()) == (3, "", said)
    assert "--tax-life-years" not in err or "--tax-life-years" in argv


def test_a_life_of_one_twelfth_to_16_digits_is_one_month(run):
    # 1/12 written to 16 digits is 3e-17 below the float nearest 1/12: one month, whose straight
    # line (SLN(cost, 0, 1)) takes the whole cost in month 1.
    code, out, err = run(
        "depreciation", "--cost", "1000000", "--life-years", "0.0833333333333333", "--format", "csv"
    )
    assert code == 0, err
    rows = [line.split(",") for line in out.splitlines()]
    assert rows[0][:2] == ["month", "book_depreciation_usd"]
    assert float(rows[2][1]) == 1_000_000.0 and len(rows) == 3
    scenario = load_scenario(SEED, ["depreciation.life_years=0.0833333333333333"])
    assert scenario.depreciation.life_years == 1 / 12


def test_every_model_field_a_message_names_is_an_option_or_left_as_is():
    from econ.commands.depreciation import _flagged

    assert _flagged("change_month is 90, beyond the useful life", "") == (
        "--change-month is 90, beyond the useful life"
    )
    # a value that is also a field's name stays a value
    assert (
        _flagged(
            "method economic with value_source market_value_table needs market_value_table", ""
        )
        == "--method economic with value_source market_value_table needs --value-table"
    )
    # a method's name is no field
    assert _flagged("it applies to straight_line, sum_of_years_digits", "") == (
        "it applies to straight_line, sum_of_years_digits"
    )
    # in [depreciation.tax]'s messages, the tax side's options
    assert _flagged("method custom needs custom_percent", "tax") == (
        "--tax-method custom needs --tax-custom-percent"
    )


def test_ready_made_md_quotes_the_seeds_loss_warning():
    page = (ROOT / "docs" / "ready_made.md").read_text()
    sentence = page[page.index("Its\n  warnings say so") :].split("(ASC")[0]
    losses, asset = re.findall(r"([\d,]+) USD", sentence)
    (found,) = warnings_with("tax losses", project(load_scenario(SEED)).warnings[0])
    assert found.startswith(f"{losses} USD of tax losses") and f"asset, {asset} USD" in found
    # every ready-made case but llama2-70b-h200 carries it, as the page says
    carried = {
        path.stem: bool(warnings_with("tax losses", project(load_scenario(path)).warnings[0]))
        for path in SCENARIOS
    }
    assert [name for name, has in carried.items() if not has] == ["llama2-70b-h200"]
