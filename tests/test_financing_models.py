"""Tests of the capital stack's scenario models: a valid base stack, one broken field at a time,
the horizon check, and compilation into econ.capital's arrays."""

from __future__ import annotations

import copy
import datetime as dt
import json

import numpy as np
import pytest
from pydantic import ValidationError

from econ.capital import stack_schedule
from econ.scenario.financing_models import (
    CapitalStack,
    ConvertibleNotes,
    check_stack_fits_horizon,
    compile_tranches,
    months_after,
)

BASE = {
    "tranches": [
        {
            "type": "delayed_draw_term_loan",
            "name": "ddtl",
            "share_of_capex": 0.5,
            "maturity_month": 60,
            "floating": {
                "spread_annual": 0.0225,
                "floor_annual": 0.0,
                "curve": {
                    "kind": "table",
                    "points": [
                        {"date": "2026-01-01", "rate_annual": 0.043},
                        {"date": "2028-01-01", "rate_annual": 0.035},
                    ],
                },
            },
            "day_count": "act/360",
            "commitment_fee_annual": 0.005,
            "upfront_fee_share": 0.015,
            "availability_months": 12,
        },
        {
            "type": "senior_notes",
            "name": "notes",
            "share_of_capex": 0.2,
            "coupon_annual": 0.0925,
            "maturity_month": 96,
        },
        {
            "type": "convertible_notes",
            "name": "convert",
            "share_of_capex": 0.1,
            "coupon_annual": 0.0175,
            "maturity_month": 84,
            "reference_share_price_usd": 100.0,
            "conversion_premium": 0.25,
            "capped_call_cost_share": 0.13,
            "capped_call_cap_premium": 1.0,
        },
        {"type": "equity", "name": "equity", "required_return_annual": 0.15},
    ],
    "covenants": {"dscr_floor": 1.2, "llcr_floor": 1.3},
}


def changed(index, **fields):
    data = copy.deepcopy(BASE)
    for key, value in fields.items():
        if value is None:
            data["tranches"][index].pop(key, None)
        else:
            data["tranches"][index][key] = value
    return data


def test_base_stack_validates_and_derives_prices():
    stack = CapitalStack.model_validate(BASE)
    convert = stack.tranches[2]
    assert isinstance(convert, ConvertibleNotes)
    assert convert.conversion_price() == pytest.approx(125.0)
    assert convert.cap_price_usd() == pytest.approx(200.0)
    assert stack.covenants.test_months == 12
    assert CapitalStack().tranches == ()


def test_frozen_and_strict():
    stack = CapitalStack.model_validate(BASE)
    with pytest.raises(ValidationError):
        stack.tranches[0].share_of_capex = 0.9
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        CapitalStack.model_validate(changed(1, coupon=0.09))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        # tranche shares above 100% of capex
        (changed(0, share_of_capex=0.8), "add up to 1.1 .*at most 1 \\(100% of capex\\)"),
        (changed(1, share_of_capex=1.2), "less than or equal to 1"),
        # negative rates where not allowed
        (changed(1, coupon_annual=-0.01), "coupon_annual\n.*greater than or equal to 0"),
        (changed(0, commitment_fee_annual=-0.001), "greater than or equal to 0"),
        (changed(0, floating={"spread_annual": -0.01}), "spread_annual\n.*greater than or equal"),
        (changed(0, floating={"spread_annual": 0.02, "floor_annual": -0.01}), "floor_annual"),
        (
            changed(0, floating={"spread_annual": 0.02, "curve": {"rate_annual": -0.2}}),
            "greater than or equal to -0.05",
        ),
        (changed(3, required_return_annual=-0.1), "greater than or equal to 0"),
        # maturity before issue
        (changed(1, issue_month=96), "maturity before issue: maturity_month 96 is not after"),
        (changed(1, issue_month=100), "maturity before issue"),
        # unsorted or duplicate rate-table dates, stepped months
        (
            changed(
                0,
                floating={
                    "spread_annual": 0.02,
                    "curve": {
                        "kind": "table",
                        "points": [
                            {"date": "2027-01-01", "rate_annual": 0.04},
                            {"date": "2026-06-01", "rate_annual": 0.03},
                        ],
                    },
                },
            ),
            "unsorted or duplicate dates",
        ),
        (
            changed(
                0,
                floating={
                    "spread_annual": 0.02,
                    "curve": {
                        "kind": "table",
                        "points": [
                            {"date": "2027-01-01", "rate_annual": 0.04},
                            {"date": "2027-01-01", "rate_annual": 0.03},
                        ],
                    },
                },
            ),
            "unsorted or duplicate dates",
        ),
        (
            changed(
                0,
                floating={
                    "spread_annual": 0.02,
                    "curve": {
                        "kind": "stepped",
                        "steps": [
                            {"month": 12, "rate_annual": 0.04},
                            {"month": 12, "rate_annual": 0.03},
                        ],
                    },
                },
            ),
            "strictly increasing month order without duplicates",
        ),
        (
            changed(0, floating={"spread_annual": 0.02, "curve": {"kind": "forward"}}),
            "does not match any of the expected tags: 'flat', 'stepped', 'table'",
        ),
        # conversion price <= 0
        (changed(2, conversion_premium=None, conversion_price_usd=0.0), "greater than 0"),
        (changed(2, conversion_premium=None, conversion_price_usd=-10.0), "greater than 0"),
        (changed(2, conversion_premium=-0.5), "greater than or equal to 0"),
        (changed(2, conversion_price_usd=120.0), "exactly one of conversion_price_usd"),
        (changed(2, capped_call_cap_premium=0.1), "not above the conversion price"),
        (changed(2, capped_call_cap_premium=None), "needs capped_call_cap_premium"),
        # a cap with no premium paid: before, the call offset 186 of the ready-made stack's
        # 2,518 shares (share price +50% a year) for free
        (
            changed(2, capped_call_cost_share=0.0),
            "capped_call_cap_premium 1 with capped_call_cost_share 0: a capped call bought for "
            "nothing",
        ),
        (changed(2, reference_share_price_usd=None), "reference_share_price_usd is needed"),
        # draw schedules
        (
            changed(0, draw_schedule=[{"month": 3, "share": 0.5}, {"month": 3, "share": 0.5}]),
            "strictly increasing",
        ),
        (
            changed(0, draw_schedule=[{"month": 3, "share": 0.7}, {"month": 5, "share": 0.5}]),
            "add up to 1.2",
        ),
        (
            changed(0, draw_schedule=[{"month": 13, "share": 0.5}]),
            "outside the availability period, months 0 to 12",
        ),
        # amounts, rates and types
        (changed(1, amount_usd=1e6), "exactly one of amount_usd and share_of_capex"),
        (changed(1, share_of_capex=None), "exactly one of amount_usd and share_of_capex"),
        (changed(0, rate_annual=0.08), "exactly one of rate_annual \\(fixed\\) and floating"),
        (changed(0, balloon_share=0.2), "balloon_share 0.2 is only used with repayment"),
        (
            changed(0, repayment="interest_only_then_amortizing", interest_only_months=60),
            "leaves no amortization",
        ),
        (changed(0, type="revolver"), "does not match any of the expected tags"),
        (changed(0, day_count="act/366"), "'30/360', 'act/360' or 'act/365'"),
        (changed(1, coupons_per_year=3), "1, 2, 4 or 12"),
    ],
)
def test_bad_input(data, message):
    with pytest.raises(ValidationError, match=message):
        CapitalStack.model_validate(data)


def test_duplicate_names_and_two_residual_equities():
    data = copy.deepcopy(BASE)
    data["tranches"][1]["name"] = "ddtl"
    with pytest.raises(
        ValidationError,
        match=r"'ddtl' is used more than once \(financing.tranches\[0\] and "
        r"financing.tranches\[1\]\); expected a distinct name",
    ):
        CapitalStack.model_validate(data)
    data = copy.deepcopy(BASE)
    data["tranches"].append({"type": "equity", "name": "more"})
    with pytest.raises(ValidationError, match="at most one may fund the remainder"):
        CapitalStack.model_validate(data)


def test_draw_schedule_beyond_the_horizon():
    stack = CapitalStack.model_validate(changed(0, draw_schedule=[{"month": 10, "share": 1.0}]))
    check_stack_fits_horizon(stack, 72)
    with pytest.raises(ValueError, match="draw schedule beyond the horizon: draw in month 10"):
        check_stack_fits_horizon(stack, 6)
    late = CapitalStack.model_validate(changed(1, issue_month=80))
    with pytest.raises(ValueError, match="issue_month 80 is after the horizon of 72 months"):
        check_stack_fits_horizon(late, 72)


def test_schema_is_generated():
    schema = CapitalStack.model_json_schema()
    text = json.dumps(schema)
    assert "delayed_draw_term_loan" in text and "[1/year]" in text


def test_months_after():
    start = dt.date(2026, 1, 15)
    assert months_after(start, dt.date(2026, 1, 1)) == 0.0
    assert months_after(start, dt.date(2028, 1, 1)) == 24.0
    assert months_after(start, dt.date(2026, 3, 16)) == pytest.approx(2 + 15 / 31)


def test_compile_matches_hand_written_specs():
    stack = CapitalStack.model_validate(BASE)
    specs = compile_tranches([stack, CapitalStack()], [dt.date(2026, 1, 1)] * 2)
    by_name = {s["name"]: s for s in specs}
    assert list(by_name) == ["ddtl", "notes", "convert", "equity"]
    ddtl = by_name["ddtl"]
    np.testing.assert_allclose(ddtl["index_months"][0], [0.0, 24.0])
    np.testing.assert_allclose(ddtl["index_rates_annual"][0], [0.043, 0.035])
    assert ddtl["index_interpolation"][0] == "linear"
    # The second scenario has no tranches: amounts 0, and equity funds everything.
    assert ddtl["amount_usd"][1] == 0.0 and np.isnan(ddtl["amount_usd"][0])
    assert by_name["convert"]["conversion_price_usd"][0] == pytest.approx(125.0)
    T = 73
    profile = np.zeros((2, T))
    profile[:, 0] = 1.0
    result = stack_schedule(specs, [1e9, 1e9], profile, np.arange(T), [72, 72], tax_rate=0.21)
    assert result.metrics["debt_usd"].tolist() == [8e8, 0.0]
    assert result.lines["equity_funding_usd"][1].sum() == pytest.approx(1e9)
    # Linear curve: month 12 is halfway between 4.3% and 3.5%, plus the 2.25% spread.
    assert result.tranches["ddtl"]["rate_annual"][0, 12] == pytest.approx(0.039 + 0.0225)
    assert result.tranches["ddtl"]["commitment_fee_usd"][0].sum() == 0  # drawn at once


def test_compile_stepped_and_fixed_curves():
    data = changed(
        0,
        floating={
            "spread_annual": 0.045,
            "curve": {
                "kind": "stepped",
                "steps": [{"month": 0, "rate_annual": 0.04}, {"month": 12, "rate_annual": 0.03}],
            },
        },
    )
    fixed = changed(0, floating=None, rate_annual=0.08)
    specs = compile_tranches(
        [CapitalStack.model_validate(data), CapitalStack.model_validate(fixed)],
        [dt.date(2026, 1, 1)] * 2,
    )
    T = 73
    profile = np.zeros((2, T))
    profile[:, 0] = 1.0
    result = stack_schedule(specs, [1e9, 1e9], profile, np.arange(T), [72, 72])
    rate = result.tranches["ddtl"]["rate_annual"]
    np.testing.assert_allclose(rate[0, [1, 12, 13]], [0.085, 0.075, 0.075])
    np.testing.assert_allclose(rate[1, 1:61], 0.08)


def test_a_capped_call_cap_without_its_premium_is_refused_by_the_cli(tmp_path, capsys):
    """Found by a credit review: the ready-made stack with capped_call_cost_share = 0 (and its
    share price growing 50% a year) ran, paid no premium, and its capped call still delivered 186
    of the 2,518 conversion shares: a dilution hedge for free. Now exit 3, one line naming it."""
    import tomli_w

    from econ.cli import main
    from econ.scenario import read_toml
    from tests.conftest import ROOT

    data = read_toml(ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72-capital-stack.toml")
    notes = data["financing"]["tranches"][2]
    notes["capped_call_cost_share"] = 0.0
    notes["share_price_growth_annual"] = 0.5
    path = tmp_path / "free_call.toml"
    path.write_text(tomli_w.dumps(data))
    assert main(["project", str(path), "--format", "json"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "financing.tranches[2]" in err[0]
    assert "capped_call_cap_premium 1 with capped_call_cost_share 0" in err[0]
