"""Pydantic models of the capital stack section of a scenario, and their compilation to arrays.

A stack is any number of tranches, each a table with a `type`: term_loan, delayed_draw_term_loan,
senior_notes, convertible_notes or equity. Amounts are in USD or a share of capex; months count
from month 0, the purchase month. Loans carry a fixed rate or a floating rate (an index curve that
is flat, stepped, or a table of dates and rates, plus a spread, with an optional floor).

`compile_tranches` turns the stacks of n scenarios into the plain mappings of arrays (n,) that
econ.capital.stack_schedule reads, so sweeps can vary any numeric field per scenario.
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Sequence
from typing import Annotated, Literal

import numpy as np
from pydantic import (
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from econ.scenario.section import Section, exactly_one

MAX_MONTHS = 600
MAX_TRANCHE_USD = 1e13
"""Largest amount of a tranche [USD]: the capex of the most GPUs a scenario takes (100,000,000,
econ.scenario.models.MAX_GPUS) at 100,000 USD each, twice the seed's 49,106 USD of capex per
GB200 GPU (3,535,600 USD for 72). Above it no financing is meant: 1e300 ran and printed figures of
150 digits."""
MAX_CONVERSION_PREMIUM = 5.0
"""Largest conversion premium over the reference share price [fraction]: +500%, a conversion
price 6 times the share price at issue (convertibles are issued at premiums of about 15-100%)."""


# ---------------------------------------------------------------------------------------------
# index curves and floating rates
# ---------------------------------------------------------------------------------------------

INDEX_RATE = Field(
    ...,
    ge=-0.05,
    le=0.5,
    description="Index rate, e.g. Term SOFR; may be slightly negative [1/year]",
)


class RateStep(Section):
    """The index rate from a month on, until the next step."""

    month: int = Field(..., ge=0, le=MAX_MONTHS, description="First month of the step [month]")
    rate_annual: float = INDEX_RATE


class RatePoint(Section):
    """A dated point of an index forward curve; months between points are interpolated."""

    date: dt.date = Field(..., description="Date of the point (YYYY-MM-DD)")
    rate_annual: float = INDEX_RATE


class FlatCurve(Section):
    kind: Literal["flat"] = "flat"
    rate_annual: float = Field(
        0.043, ge=-0.05, le=0.5, description="Index rate in every month [1/year]"
    )


class SteppedCurve(Section):
    kind: Literal["stepped"] = "stepped"
    steps: tuple[RateStep, ...] = Field(
        ...,
        min_length=1,
        description="Index rate by month, in month order; the first rate also applies before "
        "the first step",
    )

    @field_validator("steps")
    @classmethod
    def _strictly_increasing(cls, steps: tuple[RateStep, ...]) -> tuple[RateStep, ...]:
        months = [s.month for s in steps]
        if any(b <= a for a, b in zip(months, months[1:], strict=False)):
            raise ValueError(
                f"steps must be in strictly increasing month order without duplicates, got "
                f"months {months}"
            )
        return steps


class TableCurve(Section):
    kind: Literal["table"] = "table"
    points: tuple[RatePoint, ...] = Field(
        ...,
        min_length=1,
        description="Forward curve as dated rates, in date order; interpolated linearly between "
        "dates and held flat outside them",
    )

    @field_validator("points")
    @classmethod
    def _strictly_increasing(cls, points: tuple[RatePoint, ...]) -> tuple[RatePoint, ...]:
        dates = [p.date for p in points]
        if any(b <= a for a, b in zip(dates, dates[1:], strict=False)):
            raise ValueError(
                "points must have strictly increasing dates (unsorted or duplicate dates), got "
                + ", ".join(d.isoformat() for d in dates)
            )
        return points


def _curve_kind(value) -> str | None:
    # A curve table without `kind` is a flat curve: `curve = {rate_annual = 0.043}`.
    if isinstance(value, dict):
        return value.get("kind", "flat")
    return getattr(value, "kind", None)


IndexCurve = Annotated[
    Annotated[FlatCurve, Tag("flat")]
    | Annotated[SteppedCurve, Tag("stepped")]
    | Annotated[TableCurve, Tag("table")],
    Discriminator(_curve_kind),
]


class FloatingRate(Section):
    """All-in rate = max(index, floor) + spread, reset monthly."""

    index: str = Field("SOFR", min_length=1, description="Name of the index, for reports")
    curve: IndexCurve = Field(FlatCurve(), description="Index forward curve")
    spread_annual: float = Field(
        ..., ge=0, le=0.5, description="Margin over the index, e.g. 0.0225 [1/year]"
    )
    floor_annual: float | None = Field(
        None, ge=0, le=0.5, description="Floor on the index; none if absent [1/year]"
    )


# ---------------------------------------------------------------------------------------------
# tranches
# ---------------------------------------------------------------------------------------------


class _Tranche(Section):
    name: str = Field(..., min_length=1, description="Tranche name, unique within the stack")
    amount_usd: float | None = Field(
        None,
        gt=0,
        le=MAX_TRANCHE_USD,
        description="Amount (commitment or face); or give share_of_capex [USD]",
    )
    share_of_capex: float | None = Field(
        None, gt=0, le=1, description="Amount as a share of capex; or give amount_usd [fraction]"
    )
    issue_month: int = Field(
        0, ge=0, le=MAX_MONTHS, description="Month of closing or issue (0 = purchase month) [month]"
    )

    @model_validator(mode="after")
    def _one_amount(self):
        if self._amount_required() and (self.amount_usd is None) == (self.share_of_capex is None):
            amounts = {"amount_usd": self.amount_usd, "share_of_capex": self.share_of_capex}
            raise ValueError(f"tranche '{self.name}': {exactly_one(amounts)}")
        return self

    def _amount_required(self) -> bool:
        return True


class _Debt(_Tranche):
    maturity_month: int = Field(
        ..., ge=1, le=MAX_MONTHS, description="Final maturity, when all that is owed is due [month]"
    )
    upfront_fee_share: float = Field(
        0.0,
        ge=0,
        lt=0.2,
        description="Arrangement or underwriting fees paid at closing, as a share of the amount "
        "[fraction]",
    )
    issue_discount_share: float = Field(
        0.0, ge=0, lt=0.5, description="Original issue discount as a share of face [fraction]"
    )

    @model_validator(mode="after")
    def _matures_after_issue(self):
        if self.maturity_month <= self.issue_month:
            raise ValueError(
                f"tranche '{self.name}': maturity before issue: maturity_month "
                f"{self.maturity_month} is not after issue_month {self.issue_month}"
            )
        return self


class _Loan(_Debt):
    repayment: Literal[
        "level_payment", "straight_line", "bullet", "interest_only_then_amortizing", "balloon"
    ] = Field("level_payment", description="Repayment profile of each draw")
    amortization_months: int | None = Field(
        None,
        ge=1,
        le=MAX_MONTHS,
        description="Amortization period of each draw; default: until maturity [months]",
    )
    interest_only_months: int = Field(
        0,
        ge=0,
        le=MAX_MONTHS,
        description="Interest-only months before amortizing (interest_only_then_amortizing) "
        "[months]",
    )
    balloon_share: float = Field(
        0.0,
        ge=0,
        lt=1,
        description="Share of each draw left for the balloon at the end (repayment = balloon) "
        "[fraction]",
    )
    rate_annual: float | None = Field(
        None, ge=0, le=1, description="Fixed interest rate; or give floating [1/year]"
    )
    floating: FloatingRate | None = Field(None, description="Floating rate; or give rate_annual")
    day_count: Literal["30/360", "act/360", "act/365"] = Field(
        "30/360", description="Day count of interest (SOFR loans use act/360)"
    )

    @model_validator(mode="after")
    def _loan_terms(self):
        if (self.rate_annual is None) == (self.floating is None):
            raise ValueError(
                f"tranche '{self.name}': give exactly one of rate_annual (fixed) and floating"
            )
        if self.balloon_share > 0 and self.repayment != "balloon":
            raise ValueError(
                f"tranche '{self.name}': balloon_share {self.balloon_share} is only used with "
                f"repayment = 'balloon', got '{self.repayment}'"
            )
        if self.repayment == "balloon" and self.balloon_share == 0:
            raise ValueError(
                f"tranche '{self.name}': repayment = 'balloon' with balloon_share 0: expected a "
                "balloon_share above 0, the share of each draw left for the balloon (without one "
                "it is a level loan: repayment = 'level_payment')"
            )
        if self.interest_only_months and self.repayment != "interest_only_then_amortizing":
            raise ValueError(
                f"tranche '{self.name}': interest_only_months is only used with repayment = "
                f"'interest_only_then_amortizing', got '{self.repayment}'"
            )
        term = self.amortization_months or (self.maturity_month - self.issue_month)
        if self.interest_only_months >= term:
            raise ValueError(
                f"tranche '{self.name}': interest_only_months {self.interest_only_months} leaves "
                f"no amortization in a term of {term} months; expected fewer"
            )
        return self


class TermLoan(_Loan):
    """A loan drawn in full at closing."""

    type: Literal["term_loan"] = "term_loan"

    @model_validator(mode="after")
    def _bullet_at_maturity(self):
        # Drawn once, at issue: a bullet's amortization_months would only move its repayment
        # before maturity_month (a delayed-draw loan's draws each repay that long after drawn).
        term = self.maturity_month - self.issue_month
        if self.repayment == "bullet" and self.amortization_months not in (None, term):
            raise ValueError(
                f"tranche '{self.name}': repayment = 'bullet' with amortization_months "
                f"{self.amortization_months}: expected none, a bullet repays at maturity_month "
                f"({self.maturity_month}, {term} months after issue); for a bullet "
                f"{self.amortization_months} months after issue, set maturity_month to "
                f"{self.issue_month + self.amortization_months}"
            )
        return self


class DrawStep(Section):
    month: int = Field(..., ge=0, le=MAX_MONTHS, description="Month of the draw [month]")
    share: float = Field(..., gt=0, le=1, description="Share of the commitment drawn [fraction]")


class DelayedDrawTermLoan(_Loan):
    """A commitment drawn as the GPUs are deployed; each draw amortizes from its own month."""

    type: Literal["delayed_draw_term_loan"] = "delayed_draw_term_loan"
    availability_months: int | None = Field(
        None,
        ge=0,
        le=MAX_MONTHS,
        description="Months after closing during which draws are allowed; the undrawn rest is "
        "then cancelled. Default: until the month before maturity [months]",
    )
    commitment_fee_annual: float = Field(
        0.0, ge=0, le=0.05, description="Fee on the undrawn commitment [1/year]"
    )
    draw_schedule: tuple[DrawStep, ...] = Field(
        (),
        description="Explicit draws (month, share of commitment); default: pro rata to the "
        "deployment of capex",
    )

    @model_validator(mode="after")
    def _draws(self):
        months = [s.month for s in self.draw_schedule]
        if any(b <= a for a, b in zip(months, months[1:], strict=False)):
            raise ValueError(
                f"tranche '{self.name}': draw_schedule months must be strictly increasing "
                f"(no duplicates), got {months}"
            )
        total = sum(s.share for s in self.draw_schedule)
        if total > 1 + 1e-9:
            raise ValueError(
                f"tranche '{self.name}': draw_schedule shares add up to {total:.4g}; expected at "
                "most 1 (100% of the commitment)"
            )
        end = self.window_end()
        for step in self.draw_schedule:
            if not self.issue_month <= step.month <= end:
                raise ValueError(
                    f"tranche '{self.name}': draw in month {step.month} is outside the "
                    f"availability period, months {self.issue_month} to {end}"
                )
        return self

    def window_end(self) -> int:
        """Last month in which a draw is allowed [month]."""
        end = self.maturity_month - 1
        if self.availability_months is not None:
            end = min(end, self.issue_month + self.availability_months)
        return end


class SeniorNotes(_Debt):
    """Fixed-coupon notes repaid in one bullet at maturity."""

    type: Literal["senior_notes"] = "senior_notes"
    coupon_annual: float = Field(..., ge=0, le=1, description="Coupon rate [1/year]")
    coupons_per_year: Literal[1, 2, 4, 12] = Field(
        2, description="Coupon payments per year (2 = semi-annual) [1/year]"
    )


class ConvertibleNotes(SeniorNotes):
    """Notes convertible into shares; at settlement they convert when the share price is above
    the conversion price, else they are repaid in cash."""

    type: Literal["convertible_notes"] = "convertible_notes"
    reference_share_price_usd: float | None = Field(
        None, gt=0, description="Share price at issue, the reference for premiums [USD/share]"
    )
    conversion_price_usd: float | None = Field(
        None,
        gt=0,
        description="Conversion price, 1 to 6 times reference_share_price_usd (a premium of 0 "
        "to 500%, as conversion_premium takes); or give conversion_premium [USD/share]",
    )
    conversion_premium: float | None = Field(
        None,
        ge=0,
        le=MAX_CONVERSION_PREMIUM,
        description="Conversion price as a premium over the reference share price, e.g. 0.25 "
        "[fraction]",
    )
    share_price_growth_annual: float = Field(
        0.0,
        gt=-1,
        le=10,
        description="Growth of the share price path from the reference price [1/year]",
    )
    capped_call_cost_share: float = Field(
        0.0, ge=0, lt=0.5, description="Capped call premium paid at issue, share of face [fraction]"
    )
    capped_call_cap_premium: float | None = Field(
        None,
        gt=0,
        le=10,
        description="Cap of the capped call as a premium over the reference share price, e.g. "
        "1.0 for +100% [fraction]",
    )
    settlement: Literal["physical", "net_share"] = Field(
        "net_share",
        description="physical: all in shares; net_share: face in cash, the excess in shares",
    )

    @model_validator(mode="after")
    def _conversion_terms(self):
        if (self.conversion_price_usd is None) == (self.conversion_premium is None):
            raise ValueError(
                f"tranche '{self.name}': give exactly one of conversion_price_usd and "
                "conversion_premium"
            )
        if self.reference_share_price_usd is None:
            raise ValueError(
                f"tranche '{self.name}': reference_share_price_usd is needed for the share price "
                "path that decides conversion"
            )
        self._check_conversion_price()
        if self.capped_call_cost_share > 0 and self.capped_call_cap_premium is None:
            raise ValueError(
                f"tranche '{self.name}': a capped call needs capped_call_cap_premium (its cap)"
            )
        if self.capped_call_cost_share == 0 and self.capped_call_cap_premium is not None:
            raise ValueError(
                f"tranche '{self.name}': capped_call_cap_premium {self.capped_call_cap_premium:g} "
                "with capped_call_cost_share 0: a capped call bought for nothing would offset "
                "the conversion's dilution for free; expected capped_call_cost_share above 0 "
                "(the premium paid at issue, ~13% of the face for the seed operator's notes), "
                "or no capped_call_cap_premium for notes without a capped call"
            )
        cap = self.cap_price_usd()
        if cap is not None and cap <= self.conversion_price():
            raise ValueError(
                f"tranche '{self.name}': capped call cap {cap:g} USD is not above the conversion "
                f"price {self.conversion_price():g} USD"
            )
        return self

    def _check_conversion_price(self) -> None:
        """A conversion price given in USD at the premiums conversion_premium takes: one far
        below the share price at issue converts the notes into absurdly many shares (1e-9 USD
        issued 1e15 shares without a word)."""
        price, reference = self.conversion_price_usd, self.reference_share_price_usd
        if price is None:
            return
        highest = reference * (1.0 + MAX_CONVERSION_PREMIUM)
        if reference <= price <= highest * (1.0 + 1e-12):  # (the bound's own rounding passes)
            return
        raise ValueError(
            f"tranche '{self.name}': conversion_price_usd {price:g} USD is a premium of "
            f"{price / reference - 1.0:+.2%} over the reference share price of {reference:g} "
            f"USD; expected a conversion price from {reference:g} to {highest:g} USD (a premium "
            f"of 0 to {MAX_CONVERSION_PREMIUM:.0%}, as conversion_premium takes), convertible "
            "notes being issued at a premium over the share price"
        )

    def conversion_price(self) -> float:
        """Conversion price [USD/share]."""
        if self.conversion_price_usd is not None:
            return self.conversion_price_usd
        return self.reference_share_price_usd * (1.0 + self.conversion_premium)

    def cap_price_usd(self) -> float | None:
        """Cap of the capped call [USD/share], None without one."""
        if self.capped_call_cap_premium is None:
            return None
        return self.reference_share_price_usd * (1.0 + self.capped_call_cap_premium)


class Equity(_Tranche):
    """Equity; without an amount it funds whatever the debt leaves unfunded."""

    type: Literal["equity"] = "equity"
    required_return_annual: float = Field(
        0.15, ge=0, le=2, description="Cost of equity for the WACC [1/year]"
    )
    issuance: Literal["upfront", "at_the_market"] = Field(
        "upfront",
        description="upfront: all at issue_month; at_the_market: sold into the market as capex is "
        "spent",
    )
    atm_commission_share: float = Field(
        0.0, ge=0, lt=0.1, description="Sales agent commission on ATM sales [fraction]"
    )
    reference_share_price_usd: float | None = Field(
        None, gt=0, description="Share price at month 0, for shares issued [USD/share]"
    )
    share_price_growth_annual: float = Field(
        0.0, gt=-1, le=10, description="Growth of the share price path [1/year]"
    )

    def _amount_required(self) -> bool:
        return False

    @model_validator(mode="after")
    def _one_amount_at_most(self):
        if self.amount_usd is not None and self.share_of_capex is not None:
            raise ValueError(
                f"tranche '{self.name}': give at most one of amount_usd and share_of_capex"
            )
        return self


Tranche = Annotated[
    TermLoan | DelayedDrawTermLoan | SeniorNotes | ConvertibleNotes | Equity,
    Field(discriminator="type"),
]


class Covenants(Section):
    dscr_floor: float | None = Field(
        1.20,
        gt=0,
        le=10,
        description='Minimum DSCR on the trailing test window; typical 1.20-1.25; "none": no '
        "DSCR covenant [x]",
    )
    llcr_floor: float | None = Field(None, gt=0, le=10, description="Minimum LLCR [x]")
    ltv_ceiling: float | None = Field(
        None,
        gt=0,
        le=2,
        description="Maximum loan-to-value in each month with debt outstanding, against the "
        "collateral of the ltv line (book value, or resale value with a resale table) [fraction]",
    )
    test_months: int = Field(
        12, ge=1, le=24, description="Trailing months over which DSCR is tested [months]"
    )
    first_test_month: int | None = Field(
        None,
        ge=1,
        le=600,
        description="First month the DSCR and LLCR covenants are tested, as a facility's first "
        "test date (e.g. 12: the end of the first full year of a 12-month test); none: from the "
        "first month whose window holds debt service, the first windows holding the months since "
        "month 0 (LTV is tested from the first month either way); after the loan's last month "
        "to test, the covenants are never tested (a warning says so) [month index]",
    )


class CapitalStack(Section):
    """The financing of the capex: tranches of debt and equity, and the lenders' covenants."""

    tranches: tuple[Tranche, ...] = Field((), description="Debt and equity tranches")
    covenants: Covenants = Covenants()

    @model_validator(mode="after")
    def _stack(self) -> CapitalStack:
        names = [t.name for t in self.tranches]
        duplicates = sorted({x for x in names if names.count(x) > 1})
        if duplicates:
            places = " and ".join(
                f"financing.tranches[{i}]" for i, x in enumerate(names) if x == duplicates[0]
            )
            raise ValueError(
                f"tranche name '{duplicates[0]}' is used more than once ({places}); expected a "
                "distinct name for each tranche (the tranche tables and warnings name them)"
            )
        shares = sum(t.share_of_capex or 0.0 for t in self.tranches)
        if shares > 1 + 1e-9:
            raise ValueError(
                f"tranche shares of capex add up to {shares:.4g} ({shares:.1%}); expected at most "
                "1 (100% of capex)"
            )
        residual = [
            t.name
            for t in self.tranches
            if isinstance(t, Equity) and t.amount_usd is None and t.share_of_capex is None
        ]
        if len(residual) > 1:
            raise ValueError(
                f"equity tranches {residual} have no amount; at most one may fund the remainder"
            )
        return self


def check_stack_fits_horizon(stack: CapitalStack, horizon_months: int) -> None:
    """Raise ValueError when a tranche draws or issues after the horizon.

    For the Scenario's horizon validator (the stack does not know the horizon). Maturities after
    the horizon are valid: what is owed then is repaid in the last month.
    """
    for i, tranche in enumerate(stack.tranches):
        where = f"financing.tranches[{i}] '{tranche.name}'"
        if tranche.issue_month > horizon_months:
            done = "drawn" if isinstance(tranche, _Loan) else "issued"
            raise ValueError(
                f"{where}: issue_month {tranche.issue_month} is after the horizon of "
                f"{horizon_months} months: the {tranche.type.replace('_', ' ')} would be {done} "
                f"after the projection ends; expected an issue_month of at most {horizon_months}"
            )
        for step in getattr(tranche, "draw_schedule", ()):
            if step.month > horizon_months:
                raise ValueError(
                    f"{where}: draw schedule beyond the horizon: draw in month {step.month}, after "
                    f"the horizon of {horizon_months} months; expected draws in months up to "
                    f"{horizon_months}"
                )


# ---------------------------------------------------------------------------------------------
# compilation to arrays
# ---------------------------------------------------------------------------------------------


def months_after(start: dt.date, date: dt.date) -> float:
    """Months from the first day of `start`'s month to `date`, fractional by day [months]."""
    days = calendar.monthrange(date.year, date.month)[1]
    return (date.year - start.year) * 12 + (date.month - start.month) + (date.day - 1) / days


def compile_tranches(stacks: Sequence[CapitalStack], start_dates: Sequence[dt.date]) -> list[dict]:
    """Tranche mappings for econ.capital.stack_schedule from the stacks of n scenarios.

    Tranches are matched across scenarios by (name, type); a scenario without one gets an amount
    of 0 for it. `path` places it in the files for messages ("financing.tranches[0]", without the
    index where the scenarios list it in different places). Numeric fields become arrays (n,),
    choices arrays of names, curves and draw schedules arrays (n, k) padded with +inf months.

    Parameters
    ----------
    stacks : n CapitalStack
    start_dates : n dates of month 0, to turn curve dates into months
    """
    n = len(stacks)
    slots: dict[tuple[str, str], list] = {}
    places: dict[tuple[str, str], set[int]] = {}  # where each tranche is in its scenarios' files
    for row, stack in enumerate(stacks):
        for place, tranche in enumerate(stack.tranches):
            slots.setdefault((tranche.name, tranche.type), [None] * n)[row] = tranche
            places.setdefault((tranche.name, tranche.type), set()).add(place)
    specs = []
    for (name, kind), rows in slots.items():
        (place, *others) = places[(name, kind)]
        path = "financing.tranches" + ("" if others else f"[{place}]")
        spec: dict = {"type": kind, "name": name, "path": path}
        fields = [_fields(t, start_dates[i]) if t is not None else None for i, t in enumerate(rows)]
        template = next(f for f in fields if f is not None)
        for key, value in template.items():
            if key in ("index_months", "index_rates_annual", "draw_months", "draw_shares"):
                continue
            column = [f[key] if f is not None else value for f in fields]
            spec[key] = np.array(column, dtype=object if isinstance(value, str) else float)
        absent = np.array([f is None for f in fields])
        spec["amount_usd"] = np.where(absent, 0.0, spec["amount_usd"])
        spec["share_of_capex"] = np.where(absent, np.nan, spec["share_of_capex"])
        for months_key, values_key in (
            ("index_months", "index_rates_annual"),
            ("draw_months", "draw_shares"),
        ):
            if any(f is not None and f.get(months_key) is not None for f in fields):
                spec[months_key], spec[values_key] = _padded(fields, months_key, values_key)
        specs.append(spec)
    return specs


def _padded(fields, months_key, values_key):
    k = max(len(f[months_key]) for f in fields if f is not None and f.get(months_key) is not None)
    months = np.full((len(fields), k), np.inf)
    values = np.zeros((len(fields), k))
    for row, f in enumerate(fields):
        if f is not None and f.get(months_key) is not None:
            months[row, : len(f[months_key])] = f[months_key]
            values[row, : len(f[values_key])] = f[values_key]
            if values_key == "index_rates_annual":
                values[row, len(f[values_key]) :] = f[values_key][-1]
    return months, values


def _fields(t, start: dt.date) -> dict:
    """One tranche's settings in econ.capital's field names (NaN: not given)."""
    nan = float("nan")
    out: dict = {
        "amount_usd": nan if t.amount_usd is None else t.amount_usd,
        "share_of_capex": nan if t.share_of_capex is None else t.share_of_capex,
        "issue_month": t.issue_month,
    }
    if isinstance(t, Equity):
        out.update(
            required_return_annual=t.required_return_annual,
            issuance=t.issuance,
            atm_commission_share=t.atm_commission_share,
            reference_share_price_usd=_or_nan(t.reference_share_price_usd),
            share_price_growth_annual=t.share_price_growth_annual,
        )
        return out
    out.update(
        maturity_month=t.maturity_month,
        upfront_fee_share=t.upfront_fee_share,
        issue_discount_share=t.issue_discount_share,
    )
    if isinstance(t, _Loan):
        out.update(
            repayment=t.repayment,
            amortization_months=_or_nan(t.amortization_months),
            interest_only_months=t.interest_only_months,
            balloon_share=t.balloon_share,
            rate_annual=_or_nan(t.rate_annual),
            day_count=t.day_count,
        )
        if t.floating is not None:
            months, rates, interpolation = _curve_knots(t.floating.curve, start)
            out.update(
                spread_annual=t.floating.spread_annual,
                floor_annual=_or_nan(t.floating.floor_annual),
                index_interpolation=interpolation,
                index_months=months,
                index_rates_annual=rates,
            )
        else:
            out.update(spread_annual=0.0, floor_annual=nan, index_interpolation="step")
        if isinstance(t, DelayedDrawTermLoan):
            out.update(
                availability_months=_or_nan(t.availability_months),
                commitment_fee_annual=t.commitment_fee_annual,
            )
            if t.draw_schedule:
                out["draw_months"] = [s.month for s in t.draw_schedule]
                out["draw_shares"] = [s.share for s in t.draw_schedule]
        return out
    out.update(coupon_annual=t.coupon_annual, coupons_per_year=t.coupons_per_year)
    if isinstance(t, ConvertibleNotes):
        out.update(
            conversion_price_usd=t.conversion_price(),
            reference_share_price_usd=t.reference_share_price_usd,
            share_price_growth_annual=t.share_price_growth_annual,
            capped_call_cost_share=t.capped_call_cost_share,
            capped_call_cap_price_usd=_or_nan(t.cap_price_usd()),
            settlement=t.settlement,
        )
    return out


def _curve_knots(curve, start: dt.date):
    if isinstance(curve, FlatCurve):
        return [0.0], [curve.rate_annual], "step"
    if isinstance(curve, SteppedCurve):
        return [float(s.month) for s in curve.steps], [s.rate_annual for s in curve.steps], "step"
    months = [months_after(start, p.date) for p in curve.points]
    return months, [p.rate_annual for p in curve.points], "linear"


def _or_nan(value):
    return float("nan") if value is None else float(value)


__all__ = [
    "CapitalStack",
    "ConvertibleNotes",
    "Covenants",
    "DelayedDrawTermLoan",
    "DrawStep",
    "Equity",
    "FlatCurve",
    "FloatingRate",
    "IndexCurve",
    "RatePoint",
    "RateStep",
    "SeniorNotes",
    "SteppedCurve",
    "TableCurve",
    "TermLoan",
    "Tranche",
    "check_stack_fits_horizon",
    "compile_tranches",
    "months_after",
]
