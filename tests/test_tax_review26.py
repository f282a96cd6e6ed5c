"""The outside tax director's review (26): the half-year convention for property placed in
service in the last quarter of its tax year, a delayed purchase's debt-sizing refusal, and the
end of `econ depreciation`'s table."""

from __future__ import annotations

import json

import numpy as np
import pytest

from econ import depreciation as dep
from econ import load_scenario, project
from econ.errors import InputError
from tests.conftest import ROOT, econ_in_process

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
MACRS = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72-macrs.toml"
# the debt as financing.debt_share's loan with level payments: allowed with capex after month 0
LEVEL = [
    "financing.size_to_min_dscr=none",
    "financing.max_ltv=none",
    'financing.repayment="level_payment"',
]
Q4 = "IRC §168(d)(3) requires the mid-quarter convention"


@pytest.fixture
def run(capsys):
    """`econ ARGS...` in this process (`tests.conftest.econ_in_process`): (exit code, stdout,
    stderr)."""

    def call(*args: str):
        done = econ_in_process(capsys, *args)
        return done.returncode, done.stdout, done.stderr

    return call


# --- 1. half-year convention, all of the basis placed in service in quarter 4 ----------------


def test_quarter_4_under_half_year_is_found_batch_by_batch():
    # months 10-12 of a tax year are its quarter 4 (econ.tax's 12-month blocks from month 1)
    found = dep.half_year_in_last_quarter(
        ["half-year", "half-year", "mid-quarter Q4", "half-year"], [10, 9, 10, 24]
    )
    assert found.tolist() == [True, False, False, True]
    # a ramp: every batch with a share must be in quarter 4; a batch of share 0 does not count
    ramp = dep.half_year_in_last_quarter(
        ["half-year"] * 3,
        [[10, 11, 13], [10, 11, 13], [7, 8, 9]],
        purchase_month=[0, 0, 3],
        shares=[[0.5, 0.5, 0.0], [0.4, 0.4, 0.2], [0.2, 0.4, 0.4]],
    )
    assert ramp.tolist() == [True, False, True]


def test_first_tax_year_deduction_is_summed_over_its_tax_year():
    monthly = np.ones((2, 30))
    # purchase in month 0, service in month 10: tax year 1 is months 0-12 (13 months of 1)
    # purchase in month 5, service in month 10 (projection month 15): tax year 2 is months 13-24
    assert dep.first_tax_year_usd(monthly, [10, 10], [0, 5]).tolist() == [13.0, 12.0]


def test_cli_warns_of_half_year_in_quarter_4_with_the_mid_quarter_deduction(run):
    # Pub 946 Table A-1 year 1: 20%; Table A-5 (mid-quarter Q4) year 1: 5%
    args = ["depreciation", "--cost", "1000000", "--tax-method", "macrs_gds", "--by", "year"]
    code, out, err = run(*args, "--in-service-month", "10")
    assert code == 0
    assert "200,000.00" in out
    assert err.startswith("warning: --convention half-year: the asset is placed in service in ")
    assert "month 10, in quarter 4 of tax year 1" in err
    assert "deducts 50,000 USD in tax year 1 instead of 200,000 USD" in err
    code, out, err = run(*args, "--in-service-month", "10", "--format", "json")
    assert len(json.loads(out)["warnings"]) == 1 and not err
    # quarter 3, the mid-quarter convention chosen, or all of it bonus: nothing to say
    assert run(*args, "--in-service-month", "9")[2] == ""
    assert run(*args, "--in-service-month", "10", "--convention", "mid-quarter Q4")[2] == ""
    assert run(*args, "--in-service-month", "10", "--bonus-share", "1")[2] == ""


def test_projection_warns_of_half_year_in_quarter_4():
    given = [
        "fleet.purchase_month=3",
        "fleet.service_start_month=10",
        "depreciation.tax.bonus_share=0",
        *LEVEL,
    ]
    found = [w for w in project(load_scenario(MACRS, given)).warnings[0] if Q4 in w]
    assert len(found) == 1
    assert found[0].startswith(
        "depreciation.tax.convention = 'half-year', but the GPUs are placed in service in month "
        "10, quarter 4 of tax year 1"
    )
    # the reviewer's figures: Table A-1 gives 734,328 USD in year 1, Table A-5 183,582 USD
    assert "deducts 183,582 USD in tax year 1 instead of 734,328 USD" in found[0]
    # a ramp over months 10-12 is all in quarter 4; one reaching month 13 is not
    ramp = project(load_scenario(MACRS, [*given, "fleet.deployment_ramp_months=3"]))
    assert any("every batch of the deployment ramp" in w for w in ramp.warnings[0])
    later = project(load_scenario(MACRS, [*given, "fleet.deployment_ramp_months=4"]))
    assert not any(Q4 in w for w in later.warnings[0])
    # the mid-quarter convention chosen: no warning
    chosen = project(load_scenario(MACRS, [*given, 'depreciation.tax.convention="mid-quarter Q4"']))
    assert not any(Q4 in w for w in chosen.warnings[0])


# --- 2. a delayed purchase's debt sizing --------------------------------------------------------


def test_a_delayed_purchase_is_refused_debt_sizing_by_its_own_field():
    with pytest.raises(InputError) as caught:
        project(load_scenario(SEED, ["fleet.purchase_month=3"]))
    message = str(caught.value)
    assert "fleet.purchase_month = 3 pays it in month 3" in message
    assert "fleet.service_start_month or capex.payments" not in message
    # a construction period is still named as one
    with pytest.raises(ValueError, match="construction period"):
        load_scenario(SEED, ["fleet.service_start_month=3"])
    # with level payments the delayed purchase projects
    assert project(load_scenario(SEED, ["fleet.purchase_month=3", *LEVEL])).summary.shape[0] == 1


# --- 3. what depreciation.tax.method = 'book' still defers ---------------------------------------


def test_the_book_tax_method_is_not_described_as_having_no_deferred_tax():
    from econ.scenario.depreciation_models import TaxDepreciation

    words = TaxDepreciation.model_fields["method"].description
    assert "no deferred tax)" not in words
    assert "unused tax losses and an impairment" in words
    # the seed taxes the book schedule and still ends with a deferred tax asset (its losses)
    seed = project(load_scenario(SEED))
    assert seed.monthly["deferred_tax_liability_usd"].iloc[-1] < -200_000
    assert "(no deferred tax)" not in (ROOT / "docs" / "fields.md").read_text(encoding="utf-8")


# --- 4. the end of `econ depreciation`'s table --------------------------------------------------


@pytest.mark.parametrize(
    ("options", "last_year"),
    [
        # book 5 years from month 7 ends in month 66, MACRS 5-year's 6th tax year in month 72
        (["--in-service-month", "7", "--life-years", "5"], 6),
        # MACRS 7-year from month 600 (tax year 50) ends with tax year 57, month 684
        (
            [
                "--recovery-years",
                "7",
                "--in-service-month",
                "600",
                "--convention",
                "mid-quarter Q4",
            ],
            57,
        ),
    ],
)
def test_the_table_ends_where_both_schedules_end(run, options, last_year):
    code, out, _ = run(
        "depreciation", "--cost", "1000000", "--tax-method", "macrs_gds", *options,
        "--by", "year", "--format", "json",
    )  # fmt: skip
    years = json.loads(out)["yearly"]
    assert code == 0
    assert years[-1]["year"] == last_year and years[-1]["months"] == 12
    assert years[-1]["tax_depreciation_usd"] > 0


# --- 5. capitalized interest in the tax basis (documented, not changed) -------------------------


def test_the_documented_effect_of_capitalized_interest_on_year_1_tax():
    given = [
        "fleet.purchase_month=3",
        "fleet.service_start_month=10",
        "depreciation.tax.bonus_share=0",
        *LEVEL,
    ]
    monthly = project(load_scenario(MACRS, given)).monthly.droplevel(0)
    interest = monthly["capitalized_interest_usd"]
    assert interest[interest > 0].index.tolist() == [4, 5, 6, 7, 8, 9]
    assert round(interest.sum()) == 136_042
    # the interest is in the tax basis: Table A-1's 20% of capex + interest in tax year 1
    basis = monthly["capex_usd"].sum() + interest.sum()
    assert monthly["tax_depreciation_usd"].loc[:12].sum() == pytest.approx(0.2 * basis)
    assert round(interest.sum() * (1 - 0.2)) == 108_834  # year 1 understated (docs)
    assert round(interest.sum() * (1 - 0.05)) == 129_240  # under mid-quarter Q4 (Table A-5)
    text = (ROOT / "docs" / "methodology.md").read_text(encoding="utf-8")
    assert "136,042 USD of interest capitalized" in text and "108,834 or 129,240" in text
