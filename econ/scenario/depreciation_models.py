"""Pydantic models of a scenario's depreciation policy: book and tax methods, change of estimate,
retirement and sale, the market value of the asset, and the impairment test.

One section, ``[depreciation]``: the book method's fields (``method``, ``life_years``,
``salvage_share``, ...), which drive the P&L, sit directly in it, so the paths of the earlier
section (``depreciation.life_years``) keep their meaning; sub-tables ``[depreciation.tax]`` (the
tax method; "book" = the book schedule) and ``[depreciation.impairment]``.

The formulas live in :mod:`econ.depreciation`, :mod:`econ.deferred_tax` and
:mod:`econ.impairment`; this module only validates inputs. The method names follow the registry
``econ.depreciation.METHOD_NAMES`` (a test keeps them equal; this package imports nothing of econ
beyond units).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args

import numpy as np
from pydantic import Field, field_validator, model_validator

from econ.scenario.errors import BoundError, toml_boolean
from econ.scenario.section import Section as _Section
from econ.units import MONTHS_PER_YEAR

MethodName = Literal[
    "straight_line",
    "declining_balance",
    "fixed_declining_balance",
    "sum_of_years_digits",
    "units_of_production",
    "macrs_gds",
    "economic",
    "custom",
]
"""Depreciation methods, in the order of econ.depreciation.METHOD_NAMES."""

TaxMethodName = Literal[
    "book",
    "straight_line",
    "declining_balance",
    "fixed_declining_balance",
    "sum_of_years_digits",
    "units_of_production",
    "macrs_gds",
    "economic",
    "custom",
]
"""Tax methods: "book" (the book schedule before impairment) or a depreciation method."""

MacrsConvention = Literal[
    "half-year", "mid-quarter Q1", "mid-quarter Q2", "mid-quarter Q3", "mid-quarter Q4"
]

SHORTEST_LIFE_YEARS = 1 / MONTHS_PER_YEAR
"""A useful life shorter than the engine's month is a slip (months written as years, a typo)."""
MONTH_TOLERANCE = 1e-12
"""Relative distance from 1/12 within which a life is one month: 0.0833333333333333 (1/12 to 16
digits) is 1/12 written out, 3e-17 below the float nearest it."""
_SHORTEST_LIFE_UP = math.ceil(SHORTEST_LIFE_YEARS * 1e4) / 1e4
"""The shortest life rounded up to 4 digits (0.0834), a value a message can offer [years]."""

METHOD_NAMES: tuple[str, ...] = get_args(MethodName)
TAX_METHOD_NAMES: tuple[str, ...] = get_args(TaxMethodName)
CHANGE_OF_ESTIMATE_METHODS = (
    "straight_line",
    "declining_balance",
    "sum_of_years_digits",
    "units_of_production",
)


def _known_method(value: Any, valid: tuple[str, ...], what: str) -> Any:
    if isinstance(value, str) and value not in valid:
        raise ValueError(f"unknown {what} method {value!r}; valid methods: {', '.join(valid)}")
    return value


class ValuePoint(_Section):
    """A point of the asset's market-value curve."""

    month: int = Field(..., ge=0, le=600, description="Month (0 = purchase month) [month index]")
    share: float = Field(
        ...,
        ge=0,
        le=1,
        description="Market value at the end of that month as a share of cost [fraction]",
    )


class DepreciationMethod(_Section):
    """A depreciation method and its parameters (parameters other methods ignore)."""

    method: MethodName = Field("straight_line", description="Depreciation method")
    life_years: float = Field(
        6.0,
        ge=SHORTEST_LIFE_YEARS,
        le=30,
        description="Useful life from the in-service month, at least one month [years] (not used "
        "by macrs_gds, whose recovery_years is statutory, nor by custom, whose percentages give "
        "the years)",
    )
    salvage_share: float = Field(
        0.0,
        ge=0,
        lt=1,
        description="Residual value at the end of the life as a share of cost [fraction]",
    )
    factor: float = Field(
        2.0,
        gt=0,
        le=10,
        description="declining_balance: rate multiplier, 2 = double declining, 1.5 = 150% [1]",
    )
    switch_to_straight_line: bool = Field(
        True,
        description="declining_balance: switch to straight line when larger, as VDB does",
    )
    first_year_months: int = Field(
        12,
        ge=1,
        le=12,
        description="fixed_declining_balance: months in the first year, as DB's month [months]",
    )
    usage_driver: Literal["tokens", "gpu_hours"] = Field(
        "tokens", description="units_of_production: the usage that wears the asset"
    )
    lifetime_usage: float | None = Field(
        None,
        gt=0,
        description="units_of_production: usage expected over the life; default: the projected "
        "usage over the life, each month past the horizon at the last month's [tokens or "
        "GPU-hours]",
    )
    recovery_years: Literal[3, 5, 7] = Field(
        5, description="macrs_gds: recovery period; computers and GPUs are 5-year property [years]"
    )
    convention: MacrsConvention = Field(
        "half-year",
        description="macrs_gds: half-year (Pub 946 Table A-1) or mid-quarter by quarter placed in "
        "service (Tables A-2 to A-5)",
    )
    bonus_share: float = Field(
        0.0,
        ge=0,
        le=1,
        description="macrs_gds: bonus (special) depreciation in the first month, IRC §168(k); 1.0 "
        "for property acquired (by written binding contract) and placed in service after "
        "2025-01-19, 0.4 for property acquired earlier and placed in service in 2025, 0.2 in 2026; "
        "0 is the election out [fraction of cost]",
    )
    value_source: Literal["market_value_table", "token_price", "rental_price"] = Field(
        "market_value_table",
        description="economic: the value curve, from depreciation.market_value_table or the "
        "scenario's token or GPU-rental price path",
    )
    custom_percent: tuple[float, ...] = Field(
        (),
        description="custom: percentage of the depreciable base in each year, summing to 100 "
        "[percent]",
    )
    change_month: int | None = Field(
        None,
        ge=1,
        le=600,
        description="Change of estimate: first month depreciated on the new life, prospectively "
        "(ASC 250) [month index]",
    )
    change_life_years: float | None = Field(
        None,
        ge=SHORTEST_LIFE_YEARS,
        le=30,
        description="Change of estimate: the new useful life, counted from the in-service month "
        "[years]",
    )

    @field_validator("method", mode="before")
    @classmethod
    def _method_known(cls, value: Any) -> Any:
        return _known_method(value, METHOD_NAMES, "depreciation")

    @field_validator("life_years", "change_life_years", mode="before")
    @classmethod
    def _at_least_a_month(cls, value: Any) -> Any:
        # before the field's bound, whose own words would be "greater than or equal to 0.0833..."
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return value
        if math.isclose(value, SHORTEST_LIFE_YEARS, rel_tol=MONTH_TOLERANCE):
            return SHORTEST_LIFE_YEARS  # 1/12 written to 16 digits is one month
        if value < SHORTEST_LIFE_YEARS:
            # a BoundError, so that a form says it in its own words ("0 years is below 1 month")
            raise BoundError(
                # Values it takes: 1/12 to 16 digits (within MONTH_TOLERANCE of the bound, one
                # month), or the bound rounded up to 4 digits; its 17 digits read as noise, and
                # rounded down (0.0833333, :g) it is a value refused.
                f"expected a useful life of at least one month (1/12 year: "
                f"{SHORTEST_LIFE_YEARS:.16f} to 16 digits, or {_SHORTEST_LIFE_UP:g} or more); "
                "a life is given in years",
                ("ge", SHORTEST_LIFE_YEARS),
            )
        return value

    @field_validator("custom_percent")
    @classmethod
    def _percent_sum(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        if not value:
            return value
        bad = [p for p in value if not (math.isfinite(p) and p >= 0)]
        if bad:
            raise ValueError(f"custom_percent holds {bad[0]}; expected percentages of at least 0")
        total = sum(value)
        if abs(total - 100.0) > 1e-6:
            raise ValueError(
                f"custom_percent sums to {total:g}; expected percentages that sum to 100"
            )
        if len(value) > 30:
            raise ValueError(f"custom_percent lists {len(value)} years; expected at most 30")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> DepreciationMethod:
        method = self.method
        if method == "custom" and not self.custom_percent:
            raise ValueError(
                "method custom needs custom_percent, the annual percentages summing to 100"
            )
        if method == "macrs_gds" and self.salvage_share != 0:
            raise ValueError(
                f"salvage_share is {self.salvage_share:g}; expected 0 for macrs_gds (MACRS "
                "ignores salvage value, IRS Pub 946 ch. 4)"
            )
        if method == "fixed_declining_balance" and self.life_years != round(self.life_years):
            raise ValueError(
                f"life_years is {self.life_years:g}; expected a whole number of years for "
                "fixed_declining_balance (the spreadsheet's DB periods are years)"
            )
        if (self.change_month is None) != (self.change_life_years is None):
            got = (
                f"change_month = {self.change_month} and no change_life_years"
                if self.change_life_years is None
                else f"change_life_years = {self.change_life_years:g} and no change_month"
            )
            raise ValueError(
                f"a change of estimate needs both change_month and change_life_years; got {got}; "
                "expected both (the first month on the new life and the new useful life "
                "[years]) or neither"
            )
        if self.change_month is not None and method not in CHANGE_OF_ESTIMATE_METHODS:
            raise ValueError(
                f"a change of useful life does not apply to {method}; expected one of the "
                "methods it applies to: " + ", ".join(CHANGE_OF_ESTIMATE_METHODS)
            )
        return self

    @property
    def effective_life_years(self) -> float:
        """Years over which the method depreciates [years]."""
        if self.method == "custom":
            return float(len(self.custom_percent))
        if self.method == "macrs_gds":
            return self.recovery_years + 1.0  # the convention spills into one more tax year
        if self.change_life_years is not None:
            return self.change_life_years
        return self.life_years


class TaxDepreciation(DepreciationMethod):
    """The tax method: drives taxable income and cash taxes; "book" means the book schedule."""

    method: TaxMethodName = Field(
        "book",
        description="Tax depreciation method; book = the book schedule before impairment (no "
        "temporary difference from depreciation; unused tax losses and an impairment, deducted "
        "for tax only at the sale, still make a deferred tax asset); macrs_gds for US federal tax",
    )

    @field_validator("method", mode="before")
    @classmethod
    def _method_known(cls, value: Any) -> Any:
        return _known_method(value, TAX_METHOD_NAMES, "tax depreciation")

    @model_validator(mode="after")
    def _no_estimate_change(self) -> TaxDepreciation:
        if self.change_month is not None:
            raise ValueError(
                "a change of estimate applies to the book method only; tax recovery periods are "
                "set by law"
            )
        return self


class Impairment(_Section):
    """The impairment test: when it runs, under which standard, and how fair value is measured."""

    standard: Literal["us_gaap", "ifrs"] = Field(
        "us_gaap",
        description="us_gaap: ASC 360 two-step test, no reversal; ifrs: IAS 36 recoverable "
        "amount, reversal allowed",
    )
    price_drop_threshold: float | None = Field(
        None,
        gt=0,
        lt=1,
        description="Test when the trigger price falls by at least this share from the "
        "in-service month; none = no impairment test [fraction]",
    )
    trigger_price: Literal["token_price", "rental_price", "market_value", "resale_value"] = Field(
        "token_price",
        description="The market price whose fall triggers the test (market_value: "
        "depreciation.market_value_table; resale_value: market.resale_value_table or "
        "resale_series)",
    )
    fair_value_source: Literal["discounted_cash_flows", "market_value", "resale_value"] = Field(
        "discounted_cash_flows",
        description="Fair value: present value of the remaining cash flows at the discount rate, "
        "cost x depreciation.market_value_table, or the resale value (hardware cost x "
        "market.resale_value_table's share at the GPUs' age)",
    )
    costs_of_disposal_share: float = Field(
        0.0,
        ge=0,
        lt=1,
        description="IFRS: costs of disposal as a share of fair value [fraction]",
    )


class DepreciationPolicy(DepreciationMethod):
    """Depreciation of the fleet's capex: the book method (its fields sit directly in
    ``[depreciation]``, so ``depreciation.life_years`` is the book life), the tax method
    (``[depreciation.tax]``), retirement and sale, the asset's market value, and impairment."""

    tax: TaxDepreciation = TaxDepreciation()
    in_service_month: int = Field(
        1, ge=1, le=600, description="First month depreciated (0 = purchase month) [month index]"
    )
    sale_value_share: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Sale proceeds when the GPUs retire (fleet.retire_month, or the end of the "
        "horizon) as a share of the capex paid (not of construction interest capitalized into "
        "the cost); default: the book value then (no gain or loss) [fraction]",
    )
    market_value_table: tuple[ValuePoint, ...] = Field(
        (),
        description="Market value of the asset over time, for economic depreciation and the "
        "impairment test; linear between points, flat after the last",
    )
    impairment: Impairment = Impairment()

    @field_validator("market_value_table")
    @classmethod
    def _table_in_order(cls, table: tuple[ValuePoint, ...]) -> tuple[ValuePoint, ...]:
        months = [p.month for p in table]
        if any(b <= a for a, b in zip(months, months[1:], strict=False)):
            raise ValueError(f"market_value_table months must increase, got {months}")
        return table

    @model_validator(mode="after")
    def _consistent_policy(self) -> DepreciationPolicy:
        start = self.in_service_month
        for prefix, method in (("", self), ("tax.", self.tax)):
            if method.change_month is not None:
                last = start - 1 + math.ceil(method.life_years * MONTHS_PER_YEAR - 1e-9)
                if method.change_month <= start:
                    raise ValueError(
                        f"{prefix}change_month is {method.change_month}, not after the "
                        f"in-service month {start}; expected a change that starts after "
                        "depreciation does"
                    )
                if method.change_month > last:
                    raise ValueError(
                        f"{prefix}change_month is {method.change_month}, beyond the useful life "
                        f"(last month {last}); expected a month within the life"
                    )
                elapsed = (method.change_month - start) / MONTHS_PER_YEAR
                if method.change_life_years <= elapsed:
                    raise ValueError(
                        f"{prefix}change_life_years is {method.change_life_years:g}, not longer "
                        f"than the {elapsed:g} years already in service at the change; "
                        f"expected a new life of more than {elapsed:g} years, counted from the "
                        "in-service month"
                    )
            uses_table = method.method == "economic" and method.value_source == "market_value_table"
            if uses_table and not self.market_value_table:
                raise ValueError(
                    f"{prefix}method economic with value_source market_value_table needs "
                    "market_value_table"
                )
        imp = self.impairment
        uses_table = imp.price_drop_threshold is not None and (
            imp.trigger_price == "market_value" or imp.fair_value_source == "market_value"
        )
        if uses_table and not self.market_value_table:
            raise ValueError(
                "the impairment test uses the market value but market_value_table is empty"
            )
        return self

    @property
    def book(self) -> DepreciationMethod:
        """The book method alone (the fields of DepreciationMethod)."""
        given = self.model_fields_set  # defaults stay defaults (custom checks life_years)
        return DepreciationMethod.model_validate(
            {name: getattr(self, name) for name in DepreciationMethod.model_fields if name in given}
        )

    @property
    def tax_method(self) -> DepreciationMethod:
        """The tax method's settings: the book's when tax.method is "book"."""
        return self.book if self.tax.method == "book" else self.tax


Depreciation = DepreciationPolicy
"""Drop-in name for the scenario's ``depreciation`` section."""


# ---------------------------------------------------------------------------------------------
# inputs with no effect
# ---------------------------------------------------------------------------------------------

_LIFE_METHODS = (
    "straight_line",
    "declining_balance",
    "fixed_declining_balance",
    "sum_of_years_digits",
    "units_of_production",
    "economic",
)
METHOD_INPUTS: dict[str, tuple[str, ...]] = {
    "life_years": _LIFE_METHODS,
    "salvage_share": (*_LIFE_METHODS, "custom"),
    "factor": ("declining_balance",),
    "switch_to_straight_line": ("declining_balance",),
    "first_year_months": ("fixed_declining_balance",),
    "usage_driver": ("units_of_production",),
    "lifetime_usage": ("units_of_production",),
    "recovery_years": ("macrs_gds",),
    "convention": ("macrs_gds",),
    "bonus_share": ("macrs_gds",),
    "value_source": ("economic",),
    "custom_percent": ("custom",),
}
"""The methods that read each method input (econ.depreciation.MethodSettings); the others ignore
it. The tax method "book" reads none of the tax section's: the book schedule is taxed."""

_PURPOSE = {"bonus_share": "for bonus depreciation (IRC §168(k))"}
"""What choosing the method that reads an input gives, where "to use it" says too little."""

_LIFE_FROM = {
    ("macrs_gds", "life_years"): "recovery_years",
    ("custom", "life_years"): "custom_percent",
}
"""The input that gives the life of a method that reads no life_years."""

BOOK_READ_ELSEWHERE = ("life_years",)
"""Book inputs read beyond the method: the book life sets the default horizon and the sale before
the end of the life (never without effect)."""


def inputs_without_effect(
    values: Mapping[str, np.ndarray], flags: Mapping[str, str] | None = None
) -> list[list[str]]:
    """Per row, a warning for each depreciation input set away from its default that the row's
    method does not read, e.g. "depreciation.tax.bonus_share = 1.0 has no effect: ...".

    `values` maps ``method``, ``tax.method`` and each METHOD_INPUTS name, bare (the book side) or
    as ``tax.NAME``, to an array (rows,): names for choices, NaN or None for an absent optional
    value, tuples for ``custom_percent`` (`policy_inputs`; a batch's columns). Names missing from
    it are not checked. `flags` names the inputs by command-line option instead of dotted path
    (``{"tax.bonus_share": "--bonus-share", ...}``). Vectorized over rows; only the flagged rows'
    messages are written.
    """
    rows = len(values["method"])
    out: list[list[str]] = [[] for _ in range(rows)]
    for side in ("", "tax."):
        methods = np.asarray(values[f"{side}method"], dtype=object)
        for name, readers in METHOD_INPUTS.items():
            key = side + name
            if key not in values or (not side and name in BOOK_READ_ELSEWHERE):
                continue
            column = values[key]
            read = np.zeros(rows, dtype=bool)
            for method in readers:
                read |= methods == method
            unused = _set(column, DepreciationMethod.model_fields[name].default) & ~read
            for r in np.flatnonzero(unused).tolist():
                out[r].append(_no_effect_message(key, column[r], side, methods[r], flags))
    return out


def _set(column, default) -> np.ndarray:
    """Rows (bool) whose value differs from the field's default (a default stands for "not
    given": a scenario saved by econ writes every field)."""
    column = np.asarray(column)
    if default is None:
        if column.dtype.kind == "f":
            return ~np.isnan(column)
        return np.array([v is not None for v in column], dtype=bool)
    if isinstance(default, tuple):
        return np.array([len(v) > 0 for v in column], dtype=bool)
    return np.asarray(column != default, dtype=bool)


def _no_effect_message(key: str, value, side: str, method: str, flags=None) -> str:
    name = key.removeprefix(side)
    readers = METHOD_INPUTS[name]
    label = (lambda k: flags[k]) if flags else (lambda k: f"depreciation.{k}")  # noqa: E731
    method_path = label(f"{side}method")
    if flags:  # an option as typed: "--tax-method macrs_gds", a switch by its name alone
        given = label(key) if isinstance(value, bool) else f"{label(key)} = {toml_text(value)}"
        choose = f"give {method_path}"
        one = readers[0]
    else:
        given = f"{label(key)} = {toml_text(value)}"
        choose = f"set {method_path}"
        one = f"= {readers[0]!r}"
    if method == "book":
        why = f"{method_path} is 'book' (the book schedule is taxed)"
    elif (method, name) in _LIFE_FROM:
        why = f"{method_path} is {method!r}, whose life is {label(side + _LIFE_FROM[method, name])}"
    else:
        why = f"{method_path} is {method!r}, which does not read it"
    if len(readers) == 1:
        fix = f"{choose} {one} {_PURPOSE.get(name, 'to use it')}"
    else:
        fix = f"{choose} {'' if flags else 'to '}one of {', '.join(readers)} to use it"
    return f"{given} has no effect: {why}; {fix}, or leave it out"


def toml_text(value) -> str:
    """A value as a message quotes it: numbers as written (1.0, 5), text quoted, lists
    bracketed, switches true or false."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return toml_boolean(value)
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(toml_text(v) for v in value) + "]"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{value:.1f}"
    if isinstance(value, float):
        return repr(value)
    return repr(value) if isinstance(value, str) else str(value)


def policy_inputs(policies: Sequence[DepreciationPolicy]) -> dict[str, np.ndarray]:
    """The values `inputs_without_effect` reads, of n policies, as object arrays (n,)."""
    out = {}
    for side in ("", "tax."):
        for name in ("method", *METHOD_INPUTS):
            column = np.empty(len(policies), dtype=object)  # (tuples stay one element each)
            for row, policy in enumerate(policies):
                column[row] = getattr(policy.tax if side else policy, name)
            out[side + name] = column
    return out


def no_effect_warnings(policies: Sequence[DepreciationPolicy]) -> list[list[str]]:
    """Per policy, the warnings of `inputs_without_effect`."""
    return inputs_without_effect(policy_inputs(policies))


# ---------------------------------------------------------------------------------------------
# compilation to arrays
# ---------------------------------------------------------------------------------------------

METHOD_ARRAY_FIELDS = (
    "life_years",
    "salvage_share",
    "factor",
    "switch_to_straight_line",
    "first_year_months",
    "recovery_years",
    "convention",
    "bonus_share",
    "custom_percent",
    "lifetime_usage",
    "change_month",
    "change_life_years",
)
"""Method fields compiled to arrays: the keyword arguments of econ.depreciation.MethodSettings
(besides method and in_service_month)."""


def compile_methods(methods: Sequence[DepreciationMethod]) -> dict[str, np.ndarray]:
    """The methods of n scenarios as arrays, keyed as econ.depreciation.MethodSettings' fields.

    ``method``, ``convention``, ``usage_driver`` and ``value_source`` are object arrays of names;
    ``custom_percent`` is (n, K) padded with zeros; absent optional values are NaN
    (``lifetime_usage``, ``change_life_years``) or 0 (``change_month``).
    """
    n = len(methods)
    out: dict[str, np.ndarray] = {
        "method": np.array([m.method for m in methods], dtype=object),
        "usage_driver": np.array([m.usage_driver for m in methods], dtype=object),
        "value_source": np.array([m.value_source for m in methods], dtype=object),
        "convention": np.array([m.convention for m in methods], dtype=object),
        "switch_to_straight_line": np.array([m.switch_to_straight_line for m in methods], bool),
    }
    for name in ("life_years", "salvage_share", "factor", "bonus_share"):
        out[name] = np.array([getattr(m, name) for m in methods], dtype=float)
    out["first_year_months"] = np.array([m.first_year_months for m in methods], dtype=np.int64)
    out["recovery_years"] = np.array([m.recovery_years for m in methods], dtype=np.int64)
    out["lifetime_usage"] = np.array(
        [np.nan if m.lifetime_usage is None else m.lifetime_usage for m in methods], dtype=float
    )
    out["change_month"] = np.array([m.change_month or 0 for m in methods], dtype=np.int64)
    out["change_life_years"] = np.array(
        [np.nan if m.change_life_years is None else m.change_life_years for m in methods],
        dtype=float,
    )
    width = max([1] + [len(m.custom_percent) for m in methods])
    percent = np.zeros((n, width))
    for row, m in enumerate(methods):  # compiling inputs, not projecting: one pass
        percent[row, : len(m.custom_percent)] = m.custom_percent
    out["custom_percent"] = percent
    return out


def compile_policies(policies: Sequence[DepreciationPolicy]) -> dict[str, np.ndarray]:
    """The depreciation policies of n scenarios as arrays keyed by dotted path.

    Keys: ``book.<field>`` and ``tax.<field>`` (as :func:`compile_methods`; the tax side holds
    the book's settings where ``tax.method`` is "book", and ``tax.is_book`` marks those rows),
    ``in_service_month`` (int),
    ``sale_value_share`` (NaN = sold at book value), ``market_value_months`` and
    ``market_value_shares`` ((n, K), padded by repeating the last point; empty tables give one
    point (0, 1.0)), and ``impairment.<field>`` (``price_drop_threshold`` NaN = no test).
    """
    out: dict[str, np.ndarray] = {}
    for key, value in compile_methods([p.book for p in policies]).items():
        out[f"book.{key}"] = value
    for key, value in compile_methods([p.tax_method for p in policies]).items():
        out[f"tax.{key}"] = value
    out["tax.is_book"] = np.array([p.tax.method == "book" for p in policies], dtype=bool)
    out["in_service_month"] = np.array([p.in_service_month for p in policies], dtype=np.int64)
    out["sale_value_share"] = np.array(
        [np.nan if p.sale_value_share is None else p.sale_value_share for p in policies], float
    )
    width = max([1] + [len(p.market_value_table) for p in policies])
    months = np.zeros((len(policies), width))
    shares = np.ones((len(policies), width))
    for row, p in enumerate(policies):
        points = p.market_value_table or (ValuePoint(month=0, share=1.0),)
        padded = list(points) + [points[-1]] * (width - len(points))
        months[row] = [q.month for q in padded]
        shares[row] = [q.share for q in padded]
    out["market_value_months"], out["market_value_shares"] = months, shares
    for name in ("standard", "trigger_price", "fair_value_source"):
        out[f"impairment.{name}"] = np.array(
            [getattr(p.impairment, name) for p in policies], dtype=object
        )
    out["impairment.price_drop_threshold"] = np.array(
        [
            np.nan
            if p.impairment.price_drop_threshold is None
            else p.impairment.price_drop_threshold
            for p in policies
        ],
        dtype=float,
    )
    out["impairment.costs_of_disposal_share"] = np.array(
        [p.impairment.costs_of_disposal_share for p in policies], dtype=float
    )
    return out
