"""The capital stack's shortcuts give the figures of the general computation, row for row.

stack_schedule builds a tranche's month masks, rate path and share prices on one row when no
scenario varies them (financing.common_row), skips the lines of a tranche that are 0, and runs
its recurrences only over the months that hold flows. These tests check each shortcut against
the general path it replaces: the same stack with one row made different (so no row is common),
each scenario run alone, and schedules on a longer grid.
"""

from __future__ import annotations

import numpy as np
import pytest

from econ.capital import stack_schedule
from econ.errors import InputError
from econ.financing import (
    REPAYMENTS,
    choice_codes,
    common_row,
    effective_interest,
    loan_schedule,
)

T = 49


def _stack(n):
    """A stack shaped like the capital-stack seed's: floating DDTL, notes, convertibles, equity."""
    return [
        {
            "type": "delayed_draw_term_loan",
            "name": "ddtl",
            "share_of_capex": 0.5,
            "maturity_month": 36.0,
            "availability_months": 6.0,
            "commitment_fee_annual": 0.005,
            "upfront_fee_share": 0.015,
            "day_count": "act/360",
            "index_months": np.array([0.0, 12.0]),
            "index_rates_annual": np.array([0.043, 0.036]),
            "spread_annual": 0.0225,
            "floor_annual": 0.0,
        },
        {
            "type": "senior_notes",
            "name": "notes",
            "share_of_capex": 0.2,
            "coupon_annual": 0.0925,
            "maturity_month": 60.0,
            "upfront_fee_share": 0.0125,
        },
        {
            "type": "convertible_notes",
            "name": "converts",
            "share_of_capex": 0.1,
            "coupon_annual": 0.0175,
            "maturity_month": 54.0,
            "conversion_price_usd": 125.0,
            "reference_share_price_usd": 100.0,
            "share_price_growth_annual": np.linspace(0.0, 0.3, n),
            "capped_call_cost_share": 0.13,
            "capped_call_cap_price_usd": 200.0,
            "upfront_fee_share": 0.02,
            "settlement": np.where(np.arange(n) % 2 == 0, "net_share", "physical").astype(object),
        },
        {
            "type": "equity",
            "name": "equity",
            "required_return_annual": 0.15,
            "reference_share_price_usd": 100.0,
        },
    ]


def _run(specs, capex, last):
    n = len(capex)
    profile = np.zeros((n, T))
    profile[:, 0] = 1.0
    return stack_schedule(
        specs, capex, profile, np.arange(T), last, tax_rate=0.21, equity_cost_annual=0.12
    )


def _rows(stack, rows):
    """Every array of a StackSchedule, cut to some rows."""
    flat = {f"lines.{k}": v[rows] for k, v in stack.lines.items()}
    flat.update({f"metrics.{k}": v[rows] for k, v in stack.metrics.items()})
    for name, lines in stack.tranches.items():
        flat.update({f"{name}.{k}": np.asarray(v)[rows] for k, v in lines.items()})
    for name, metrics in stack.tranche_metrics.items():
        flat.update({f"{name}.metric.{k}": v[rows] for k, v in metrics.items()})
    return flat


def _assert_same(a, b):
    """Equal to rounding: numpy's vectorized exp, log and power may differ from their scalar
    loops in the last bit, so arrays of other shapes can differ there."""
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_allclose(a[key], b[key], rtol=1e-12, atol=1e-9, err_msg=key)


def test_common_row_cuts_columns_alike_in_every_row():
    issue, maturity = common_row(np.zeros(5), np.full(5, 36.0))
    assert issue.shape == (1,) and maturity.tolist() == [36.0]
    floor, table = common_row(np.full(3, np.nan), np.tile([0.0, 12.0], (3, 1)))
    assert floor.shape == (1,) and np.isnan(floor).all()  # NaN matches NaN
    assert table.tolist() == [[0.0, 12.0]]


def test_common_row_keeps_columns_when_any_row_differs():
    issue, maturity = common_row(np.zeros(4), np.array([36.0, 36.0, 48.0, 36.0]))
    assert issue.shape == (4,) and maturity.tolist() == [36.0, 36.0, 48.0, 36.0]
    (table,) = common_row(np.array([[0.0, 12.0], [0.0, 13.0]]))
    assert table.shape == (2, 2)


def _with_row(specs, n, changes):
    """The stack with one more scenario: each tranche's settings for it from `changes` (tranche
    name -> field -> value), else those of the last scenario."""
    out = []
    for spec in specs:
        extended = {}
        for key, value in spec.items():
            if key in ("type", "name"):
                extended[key] = value
                continue
            if key.startswith("index_"):  # a curve (k,): one row (n, k) per scenario
                column = np.tile(np.asarray(value, dtype=float), (n, 1))
            else:
                column = np.broadcast_to(np.asarray(value), (n,))
            extra = changes.get(spec["name"], {}).get(key, column[-1])
            extended[key] = np.concatenate([column, np.asarray(extra, dtype=column.dtype)[None]])
        out.append(extended)
    return out


def test_rows_alike_match_the_general_path():
    """The same scenarios with one more whose tranches have other timings, rate curve and
    share price take the general path (no common row); the shared rows come out bit for bit
    the same."""
    n = 6
    capex = np.linspace(2.0e6, 3.0e6, n)
    last = np.array([48, 48, 30, 48, 40, 48])  # some settle early, before maturity
    specs = _stack(n)
    alike = _run(specs, capex, last)
    changes = {
        "ddtl": {"maturity_month": 30.0, "index_rates_annual": [0.05, 0.04], "issue_month": 0.0},
        "notes": {"maturity_month": 42.0, "coupons_per_year": 4.0},
        "converts": {"maturity_month": 50.0},
        "equity": {"reference_share_price_usd": 80.0},
    }
    varied = _with_row(specs, n, changes)
    general = _run(varied, np.append(capex, 2.5e6), np.append(last, 48))
    _assert_same(_rows(alike, slice(0, n)), _rows(general, slice(0, n)))
    # The scenario of other timings gets its own, as when it runs alone.
    alone = [{k: v if k in ("type", "name") else v[n:] for k, v in s.items()} for s in varied]
    _assert_same(_rows(general, slice(n, n + 1)), _rows(_run(alone, [2.5e6], [48]), slice(0, 1)))
    assert general.tranches["notes"]["balance_usd"][n, 42] == 0.0  # repaid at its maturity
    assert general.tranches["notes"]["balance_usd"][0, 42] > 0.0
    assert general.tranche_metrics["notes"]["amount_usd"].shape == (n + 1,)


def test_each_scenario_alone_gives_its_row():
    n = 4
    capex = np.array([2.0e6, 2.4e6, 2.8e6, 3.1e6])
    last = np.array([48, 35, 48, 20])
    batch = _run(_stack(n), capex, last)
    for i in range(n):
        specs = []
        for spec in _stack(n):
            specs.append(
                {
                    k: (v[i : i + 1] if isinstance(v, np.ndarray) and v.shape == (n,) else v)
                    for k, v in spec.items()
                }
            )
        alone = _run(specs, capex[i : i + 1], last[i : i + 1])
        _assert_same(_rows(batch, slice(i, i + 1)), _rows(alone, slice(0, 1)))


def test_lines_a_tranche_does_not_have_are_zero_and_read_only():
    stack = _run(_stack(3), np.full(3, 2.0e6), np.full(3, T - 1))
    converted = stack.tranches["notes"]["converted_usd"]  # senior notes never convert
    assert not converted.any()
    with pytest.raises(ValueError):
        converted[0, 0] = 1.0
    # The stack's totals are its own arrays: the engine writes rows into them.
    stack.lines["converted_usd"][0, 0] = 1.0
    assert stack.tranches["notes"]["converted_usd"][0, 0] == 0.0
    assert stack.lines["balance_usd"].flags.writeable


def test_choice_codes_of_repeated_and_mixed_names():
    names = np.array(["bullet"] * 5, dtype=object)
    assert choice_codes(names, REPAYMENTS, "repayment").tolist() == [2] * 5
    mixed = np.array(["balloon", "level_payment", "balloon"], dtype=object)
    assert choice_codes(mixed, REPAYMENTS, "repayment").tolist() == [4, 0, 4]
    with pytest.raises(InputError, match="unknown value 'annuity'; expected one of: level_payment"):
        choice_codes(np.array(["bullet", "annuity"], dtype=object), REPAYMENTS, "repayment")


@pytest.mark.parametrize("repayment", REPAYMENTS)
def test_loan_repaid_early_ends_the_same_on_a_longer_grid(repayment):
    """loan_schedule stops once every row is repaid: the months after are 0, and the months
    before are those of a grid that ends at maturity."""
    rng = np.random.default_rng(7)
    n = 5
    draws = np.zeros((n, 80))
    draws[:, 0] = rng.uniform(1e5, 1e6, n)
    draws[:, 3] = rng.uniform(0.0, 1e5, n)
    rate = np.tile(np.linspace(0.004, 0.006, 80), (n, 1))
    args = (np.full(n, 40.0), repayment, np.full(n, 30.0), np.full(n, 6.0), np.full(n, 0.25))
    long = loan_schedule(draws, rate, *args)
    short = loan_schedule(draws[:, :41], rate[:, :41], *args)
    for key in long:
        np.testing.assert_array_equal(long[key][:, :41], short[key], err_msg=key)
        assert not long[key][:, 41:].any(), key
    assert not long["balance_usd"][:, 40].any()


def test_effective_interest_one_rate_path_for_all_rows():
    """A base rate given as one row (1, T) gives what the same path repeated per row gives."""
    rng = np.random.default_rng(3)
    n, months = 4, 30
    net = np.zeros((n, months))
    net[:, 0] = rng.uniform(9e5, 1e6, n)
    base = np.linspace(0.003, 0.005, months)[None, :]
    balance = 1e6 * np.clip(1 - np.arange(months) / 24, 0, None)
    pay = np.zeros((n, months))
    pay[:, 1:] = base[:, 1:] * balance[:-1] + (balance[:-1] - balance[1:])
    one = effective_interest(net, pay, base)
    repeated = effective_interest(net, pay, np.repeat(base, n, axis=0))
    for key in one:
        np.testing.assert_array_equal(one[key], repeated[key], err_msg=key)
    assert np.all(one["margin_monthly"] > 0)  # the discount to 1e6 of face raises the yield


@pytest.mark.parametrize("settlement", ["physical", "net_share"])
def test_scenarios_differing_in_amounts_only_scale_one_schedule(settlement, monkeypatch):
    """A batch whose scenarios share every tranche term, the timing and the horizon (a sweep of
    the fleet or the market) schedules each tranche once for 1 USD and scales it: each row is
    the scenario's own schedule, computed alone, to rounding."""
    import econ.capital as capital

    n = 5
    capex = np.array([2.0e6, 2.4e6, 0.0, 3.1e6, 7.0])  # one with nothing to fund
    last = np.full(n, 40)  # the DDTL matures before it; the notes are settled early
    specs = []
    for spec in _stack(n):
        spec = dict(spec)
        if spec["type"] == "convertible_notes":  # converts: the price beats 125 by month 40
            spec.update(share_price_growth_annual=0.3, settlement=settlement)
        specs.append(spec)
    scheduled = []
    original = capital._debt_tranche

    def spy(spec, capex_usd, *args):
        scheduled.append(len(capex_usd))
        return original(spec, capex_usd, *args)

    monkeypatch.setattr(capital, "_debt_tranche", spy)
    batch = _run(specs, capex, last)
    assert scheduled == [1, 1, 1]  # each debt tranche once, for one scenario of 1 USD
    assert batch.tranche_metrics["converts"]["converted"].tolist() == [1, 1, 0, 1, 1]
    for i in range(n):
        alone = _run(specs, capex[i : i + 1], last[i : i + 1])
        _assert_same(_rows(batch, slice(i, i + 1)), _rows(alone, slice(0, 1)))
    assert scheduled[3:] == [1] * (3 * n)  # alone: the general computation, one row
    # Amounts scale every money line and share count; the rates do not.
    notes = batch.tranches["notes"]
    np.testing.assert_allclose(notes["balance_usd"][1], notes["balance_usd"][0] * 1.2, rtol=1e-12)
    assert np.array_equal(notes["rate_annual"][0], notes["rate_annual"][3], equal_nan=True)
