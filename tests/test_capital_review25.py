"""An outside lender's review of the capital stack (review 25): what the stack does that its
figures did not say (conversions paid in shares, negative floating rates, the tested covenant
ratio, equity outside the tranches), messages naming the field, and bounds on absurd inputs."""

from __future__ import annotations

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
