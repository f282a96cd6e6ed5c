"""A finance team's review of lease versus own: a last renewal cut short by the end of service is
said as a term longer than the service is, and the library (econ.lease, econ.tax) refuses terms,
shares, prices and rates that the command line refuses, naming the argument, the value and what
was expected."""

from __future__ import annotations

import json

import numpy as np
import pytest

from econ import load_scenario, project, tax
from econ.cli import main
from econ.errors import InputError
from econ.lease import lease_vs_own_of_projection, rent_paid_usd, term_warning
from tests.conftest import SCENARIOS

SEED = next(p for p in SCENARIOS if p.stem == "deepseek-r1-gb200-nvl72")


# --- 1. A last renewal cut short by the end of service is warned of ---------------------------


def test_a_last_renewal_cut_short_is_warned_of():
    # 72 months in service (1-72): 60-month terms renew in month 61 for 12 of their 60 months.
    text = term_warning(60, 1, 72)
    assert text.startswith("the last 60-month contract, renewed in month 61, runs 12 of its 60")
    assert "cut at month 72 and the rent of its other 48 months" in text
    assert "which a lessee bound to the term would owe, is not counted" in text
    assert term_warning(48, 1, 72).startswith("the last 48-month contract, renewed in month 49")
    # a term that divides the months in service cuts no contract; a longer one is said as before
    assert term_warning(36, 1, 72) is None
    assert term_warning(24, 1, 72) is None
    assert term_warning(72, 1, 72) is None
    assert term_warning(100, 1, 72).startswith("the 100-month term is longer than the 72 months")


def test_the_command_says_a_renewal_is_cut(capsys):
    # Reviewer's repro: --term-months 60 on the seed printed no word that the renewal in month
    # 61 is cut after 12 of its 60 months (48 x 72 GPUs x 4 USD x 730 h = 10,091,520 USD of rent
    # a lessee bound to the term would owe, not counted).
    args = ["lease-vs-own", str(SEED), "--price", "4", "--term-months", "60"]
    assert main([*args, "--upfront-share", "0.25"]) == 0
    err = capsys.readouterr().err
    assert "warning: the last 60-month contract, renewed in month 61, runs 12 of its 60" in err
    assert main([*args, "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert any("renewed in month 61" in w for w in printed["warnings"])
    assert main(["lease-vs-own", str(SEED), "--price", "4", "--term-months", "36"]) == 0
    assert "contract" not in capsys.readouterr().err


# --- 2. The library refuses what the command line refuses -------------------------------------


@pytest.fixture(scope="module")
def seed_lines():
    return project(load_scenario(SEED)).lines


def compare(lines, price=4.0, term=36, upfront=0.25, tax=0.21, rate=0.12, debt_rate=None):
    return lease_vs_own_of_projection(
        lines,
        price,
        term,
        upfront,
        np.array([tax]),
        np.array([rate]),
        debt_discount_rate_annual=None if debt_rate is None else np.array([debt_rate]),
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # Reviewer's repro: a term of 0 (or -5) ran as 1 month, lease 8,661,744 USD; 2.5 as 2
        ({"term": 0}, "term_months = 0: expected a whole number of months, at least 1"),
        ({"term": -5}, "term_months = -5: expected a whole number of months"),
        ({"term": 2.5}, "term_months = 2.5: expected a whole number of months"),
        # a share above 1 made the monthly rent negative: lease 11,672,473 USD at 1.5
        ({"upfront": 1.5}, "upfront_share = 1.5: expected a share from 0 to 1"),
        ({"upfront": -1.0}, "upfront_share = -1: expected a share from 0 to 1"),
        # a negative price gave a negative lease cost; NaN a ValueError on a NaN integer
        ({"price": -4.0}, "price_usd_per_gpu_hour = -4: expected a finite rental price"),
        ({"price": np.nan}, "price_usd_per_gpu_hour = nan: expected a finite rental price"),
        ({"price": np.inf}, "price_usd_per_gpu_hour = inf: expected a finite rental price"),
        # a tax rate of 1.5 gave a lease cost of -4,959,594 USD and a NaN break-even
        ({"tax": 1.5}, "tax_rate = 1.5: expected a rate from 0 to below 1"),
        ({"tax": -0.2}, "tax_rate = -0.2: expected a rate from 0 to below 1"),
        ({"tax": np.nan}, "tax_rate = nan: expected a rate from 0 to below 1"),
        ({"rate": -2.0}, "discount_rate_annual = -2: expected a finite rate above -1"),
        ({"rate": np.nan}, "discount_rate_annual = nan: expected a finite rate above -1"),
        ({"debt_rate": -1.0}, "debt_discount_rate_annual = -1: expected a finite rate above -1"),
    ],
)
def test_the_library_refuses_bad_terms_naming_them(seed_lines, change, message):
    with pytest.raises(InputError, match="^" + message.replace("(", r"\(").replace(".", r"\.")):
        compare(seed_lines, **change)


def test_valid_terms_still_run(seed_lines):
    # the edges of the bounds, and the seed's lease with --renter-pays none (docs/financing.md)
    assert round(compare(seed_lines)["pv_cost_lease_usd"][0]) == 9_141_923
    for change in ({"term": 1}, {"upfront": 0.0}, {"upfront": 1.0}, {"price": 0.0}, {"tax": 0.0}):
        assert np.isfinite(compare(seed_lines, **change)["pv_cost_lease_usd"][0])
    gpus = np.array([[0.0, 1.0, 2.0, 2.0, 0.0, 0.0]])
    np.testing.assert_allclose(
        rent_paid_usd(gpus, 1.0, 2.0, 0.5, 1)[0], [1095, 365, 1460, 730, 0, 0]
    )
    with pytest.raises(InputError, match="^term_months = 0: "):
        rent_paid_usd(gpus, 1.0, 0, 0.5, 1)


def test_the_tax_of_losses_carried_forward_refuses_a_limit_or_rate_outside_its_bounds():
    # Reviewer's repro: a loss limit of -0.5 taxed 150% of a year's income once losses were
    # carried (income -100 then 100: 150 taxed, tax 31.5 at 21%), NaN ran as no limit, and a
    # tax rate of 1.5 taxed 150% of it.
    income = np.array([[-100.0, 100.0]])
    np.testing.assert_allclose(tax.tax_with_loss_carryforward(income, [0.21], [0.8]), [[0, 4.2]])
    for limit, said in ((-0.5, "-0.5"), (0.0, "0"), (1.5, "1.5"), (np.nan, "nan")):
        expected = f"^loss_limit = {said}: expected a share above 0 and at most 1 \\[fraction\\]$"
        with pytest.raises(InputError, match=expected):
            tax.tax_with_loss_carryforward(income, [0.21], [limit])
        with pytest.raises(InputError, match=expected):
            tax.first_taxable_month(np.array([[-100.0] + [10.0] * 24]), [limit])
    for rate, said in ((1.5, "1.5"), (-0.1, "-0.1"), (1.0, "1"), (np.nan, "nan")):
        with pytest.raises(InputError, match=f"^tax_rate = {said}: expected a rate from 0 to "):
            tax.tax_with_loss_carryforward(income, [rate])


def test_the_help_says_the_rent_covers_the_months_in_service(capsys):
    # The description said the GPUs are rented "for the horizon": the seed retired at month 36
    # rents them for months 1-36 of 72 (rent stops with the fleet).
    with pytest.raises(SystemExit):
        main(["lease-vs-own", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "for the horizon" not in text
    assert "in the months the owner has them in service" in text


def test_a_single_month_is_said_in_the_singular():
    """'the 1 months the GPUs are in service', 'any term from 1 months', 'its other 1 months'."""
    from econ.lease import term_warning

    short = term_warning(12, 5, 5)
    assert "longer than the 1 month the GPUs are in service" in short
    assert "any term from 1 month gives" in short
    assert "its other 1 month, which" in term_warning(12, 1, 23)
    assert "its other 2 months, which" in term_warning(12, 1, 22)
