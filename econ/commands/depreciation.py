"""`econ depreciation`: print an asset's book, tax and deferred tax schedules by month and year.

Thin: parses arguments, validates them with the scenario's depreciation models, calls
econ.depreciation and econ.deferred_tax, and prints a table, JSON or CSV. No formulas live here.

    econ depreciation --cost 3535600 --method straight_line --life-years 6 \\
        --tax-method macrs_gds --recovery-years 5 --convention half-year --bonus-share 1.0
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from econ import depreciation as dep  # numpy only: its method names are in the help
from econ.bounds import number_text
from econ.commands import Number, add_format, lazy, say_warnings
from econ.text import shortened
from econ.units import MONTHS_PER_YEAR

if TYPE_CHECKING:
    from pydantic import ValidationError

    from econ.scenario.depreciation_models import DepreciationMethod, DepreciationPolicy

deferred_mod = lazy("econ.deferred_tax")
tax_mod = lazy("econ.tax")
catalog = lazy("econ.catalog")  # reads the pydantic-checked MACRS tables

_MONTHS = "financing_models:RateStep.month"  # months 0..600, as a scenario file takes them
# From month 1: month 0 is the purchase month, in which nothing is placed in service, changed or
# sold (each is refused there), so the words never offer it.
_MONTH = Number(int, field=_MONTHS, ge=1, what="a month")
_SALE_MONTH = Number(
    int,
    field=_MONTHS,
    ge=1,
    what="a month",
    unit=" at or after the in-service month (month 0 is the purchase month, before service)",
)

MONTHLY_COLUMNS = (
    "month",
    "book_depreciation_usd",
    "book_value_usd",
    "tax_depreciation_usd",
    "tax_basis_usd",
    "temporary_difference_usd",
    "deferred_tax_expense_usd",
    "deferred_tax_liability_usd",
)
YEARLY_COLUMNS = (
    "year",
    "months",
    "book_depreciation_usd",
    "book_value_usd",
    "tax_depreciation_usd",
    "tax_basis_usd",
    "deferred_tax_expense_usd",
    "deferred_tax_liability_usd",
)
DISPOSAL_COLUMNS = ("proceeds_usd", "book_gain_usd", "tax_gain_usd")

# Model field -> command-line flag, to name the flag in error messages.
_FLAGS = {
    "method": "--method",
    "life_years": "--life-years",
    "salvage_share": "--salvage-share",
    "factor": "--factor",
    "switch_to_straight_line": "--no-switch",
    "first_year_months": "--first-year-months",
    "custom_percent": "--custom-percent",
    "change_month": "--change-month",
    "change_life_years": "--change-life-years",
    "lifetime_usage": "--lifetime-usage",
    "tax.method": "--tax-method",
    "tax.life_years": "--tax-life-years",
    "tax.factor": "--tax-factor",
    "tax.recovery_years": "--recovery-years",
    "tax.convention": "--convention",
    "tax.bonus_share": "--bonus-share",
    "tax.custom_percent": "--tax-custom-percent",
    "in_service_month": "--in-service-month",
    "retirement_month": "--retirement-month",
    "market_value_table": "--value-table",
}


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "depreciation",
        help="print book, tax and deferred tax schedules of one asset by month and year",
        description="Depreciation schedules of one asset: the book method (P&L), the tax method "
        "(taxable income) and the deferred tax between them. Methods: "
        + ", ".join(dep.METHOD_NAMES),
    )
    p.add_argument("--cost", type=Number(), required=True, metavar="USD", help="capitalized cost")
    p.add_argument("--method", default="straight_line", help="book method (default straight_line)")
    p.add_argument(
        "--life-years",
        type=Number(),
        default=6.0,
        help="book useful life (default %(default)g) [years]",
    )
    salvage = p.add_mutually_exclusive_group()
    salvage.add_argument("--salvage", type=Number(), metavar="USD", help="book residual value")
    salvage.add_argument("--salvage-share", type=Number(), help="residual value / cost [fraction]")
    p.add_argument(
        "--factor",
        type=Number(),
        default=2.0,
        help="declining_balance factor (default %(default)g)",
    )
    p.add_argument(
        "--no-switch", action="store_true", help="declining_balance: never switch to straight line"
    )
    p.add_argument(
        "--first-year-months",
        type=Number(int, what="a number of months", ge=1, le=12),
        default=12,
        help="fixed_declining_balance: months in the first year, 1-12 (default %(default)s)",
    )
    p.add_argument(
        "--custom-percent", metavar="P1,P2,...", help="custom: annual percentages summing to 100"
    )
    p.add_argument(
        "--value-table",
        metavar="MONTH:SHARE,...",
        help="economic: market value / cost by month, e.g. 0:1,24:0.5,72:0.1",
    )
    p.add_argument(
        "--usage",
        metavar="U1,U2,...",
        help="units_of_production: usage of months 1, 2, ...; one value = every month",
    )
    p.add_argument(
        "--lifetime-usage", type=Number(), help="units_of_production: usage expected over the life"
    )
    p.add_argument(
        "--in-service-month",
        type=_MONTH,
        default=1,
        help="first month depreciated (default %(default)s)",
    )
    p.add_argument(
        "--change-month", type=_MONTH, help="change of estimate: first month on the new life"
    )
    p.add_argument("--change-life-years", type=Number(), help="change of estimate: new useful life")
    p.add_argument(
        "--retirement-month", type=_SALE_MONTH, help="sell the asset at the end of this month"
    )
    p.add_argument(
        "--sale-value",
        type=Number(expected="proceeds of at least 0 [USD]", ge=0),
        metavar="USD",
        help="proceeds of the sale (default: the book value then, no book gain or loss)",
    )
    p.add_argument(
        "--tax-method", default="book", help="tax method (default book: same as the book schedule)"
    )
    p.add_argument(
        "--tax-life-years", type=Number(), help="tax useful life (default: the book life)"
    )
    p.add_argument(
        "--tax-factor",
        type=Number(),
        default=2.0,
        help="tax declining_balance factor (default %(default)g)",
    )
    p.add_argument(
        "--recovery-years",
        type=Number(int, what="a recovery period", ge=1),
        default=5,
        help="macrs_gds: 3, 5 or 7 (default %(default)s)",
    )
    p.add_argument(
        "--convention",
        default="half-year",
        help="macrs_gds: half-year or 'mid-quarter Q1' .. 'mid-quarter Q4' (default %(default)s)",
    )
    p.add_argument(
        "--bonus-share",
        type=Number(),
        default=0.0,
        help="macrs_gds: bonus depreciation share of cost (0-1)",
    )
    p.add_argument("--tax-custom-percent", metavar="P1,P2,...", help="tax custom percentages")
    p.add_argument(
        "--tax-rate",
        type=Number(field="models:Financing.tax_rate", what="a rate", unit=" [fraction]"),
        default=0.21,
        help="income tax rate (default 0.21)",
    )
    p.add_argument(
        "--months",
        type=Number(int, field=_MONTHS, what="a number of months", ge=1),
        help="months shown after month 0 (default: until both schedules end)",
    )
    p.add_argument(
        "--by",
        choices=("month", "year", "both"),
        default="both",
        help="schedule rows (default both; CSV: month unless year)",
    )
    add_format(p)
    p.set_defaults(run=run)


def _numbers(text: str | None, flag: str) -> tuple[float, ...]:
    if text is None or not text.replace(";", ",").replace(",", "").strip():
        return ()
    items = text.replace(";", ",").split(",")
    # The values are years or months in order: an empty one skipped moved every later value a
    # year or a month earlier ('50,,50' was the 2-year 50, 50; '--usage 1,,2' put 2 in month 2).
    empty = next((k for k, x in enumerate(items, start=1) if not x.strip()), None)
    if empty is not None:
        raise dep.DepreciationError(
            f"{flag} = {text!r}, value {empty}: empty; expected a number in each place, "
            "separated by commas (the values are years or months in order: 0 for none)"
        )
    try:
        return tuple(float(x) for x in items)
    except ValueError:
        raise dep.DepreciationError(
            f"{flag} = {text!r}: expected numbers separated by commas"
        ) from None


def _value_table(text: str | None) -> list[dict]:
    if text is None:
        return []
    points = []
    for part in text.split(","):
        if not part.strip():
            continue
        try:
            month, share = part.split(":")
            points.append({"month": int(month), "share": float(share)})
        except ValueError:
            raise dep.DepreciationError(
                f"--value-table = {text!r}: expected MONTH:SHARE pairs such as 0:1,24:0.5"
            ) from None
    return points


def _policy(args) -> DepreciationPolicy:
    import pydantic

    from econ.scenario.depreciation_models import DepreciationPolicy

    if not (math.isfinite(args.cost) and args.cost > 0):
        raise dep.DepreciationError(f"--cost = {args.cost:g}: expected a cost above 0 [USD]")
    share = args.salvage_share
    if args.salvage is not None:
        # (the share of cost it gives is below 1, as a scenario's salvage_share is)
        if not 0 <= args.salvage < args.cost:
            # (in full: 3,535,613 above a cost of 3,535,612 read 3.53561e+06 against itself)
            salvage, cost = (number_text(x, grouped=True) for x in (args.salvage, args.cost))
            raise dep.DepreciationError(
                f"--salvage = {salvage}: expected a residual value from 0 to below the cost "
                f"({cost}) [USD]"
            )
        share = args.salvage / args.cost
    book = {
        "method": args.method,
        "life_years": args.life_years,
        "factor": args.factor,
        "switch_to_straight_line": not args.no_switch,
        "first_year_months": args.first_year_months,
        "custom_percent": _numbers(args.custom_percent, "--custom-percent"),
        "value_source": "market_value_table",
    }
    if share is not None:
        book["salvage_share"] = share
    if args.method == "custom":
        book.pop("life_years")
    if args.lifetime_usage is not None:
        book["lifetime_usage"] = args.lifetime_usage
    if args.change_month is not None or args.change_life_years is not None:
        book["change_month"] = args.change_month
        book["change_life_years"] = args.change_life_years
    tax = {
        "method": args.tax_method,
        "life_years": args.tax_life_years if args.tax_life_years is not None else args.life_years,
        "factor": args.tax_factor,
        "recovery_years": args.recovery_years,
        "convention": args.convention,
        "bonus_share": args.bonus_share,
        "custom_percent": _numbers(args.tax_custom_percent, "--tax-custom-percent"),
        "value_source": "market_value_table",
    }
    if args.tax_method == "custom" or (args.tax_method == "book" and args.tax_life_years is None):
        tax.pop("life_years")
    data = {
        **book,
        "tax": tax,
        "in_service_month": args.in_service_month,
        "market_value_table": _value_table(args.value_table),
    }
    try:
        policy = DepreciationPolicy.model_validate(data)
    except pydantic.ValidationError as exc:
        raise dep.DepreciationError(_validation_message(exc, args)) from None
    _refuse_without_effect(args, policy)
    return policy


_LISTS = {
    "custom_percent": "custom_percent",
    "tax.custom_percent": "tax_custom_percent",
    "market_value_table": "value_table",
}
"""Options given as a list (field path -> attribute of the parsed arguments): an error in one
item names the option as typed (cut to 80 characters) and the item's position."""


def _validation_message(exc: ValidationError, args) -> str:
    from econ.scenario.io import expected_message  # a scenario field's bounds, in words

    flags = dict(_FLAGS)
    if args.tax_life_years is None:  # the tax method took the book life
        flags["tax.life_years"] = "--life-years"
    messages = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        path = ".".join(str(p) for p in loc)
        if path == "tax.life_years" and args.tax_life_years is None:
            continue  # the book life, refused under --life-years
        # the words of a scenario file's refusal, found by the field's path in [depreciation]
        words = expected_message({**err, "loc": ("depreciation", *loc)})
        text = _flagged(words, path, flags)
        index = next((i for i, part in enumerate(loc) if isinstance(part, int)), None)
        listed = None if index is None else ".".join(str(p) for p in loc[:index])
        if listed in _LISTS:  # one item of a list: the option as typed, the item's position
            item = "pair" if listed == "market_value_table" else "value"
            part = f" ({loc[index + 1]})" if len(loc) > index + 1 else ""
            typed = shortened(getattr(args, _LISTS[listed]))  # (a list may be long)
            messages.append(f"{flags[listed]} = {typed}, {item} {loc[index] + 1}{part}: {text}")
            continue
        flag = flags.get(path, path)
        value = err.get("input")
        if flag and not isinstance(value, dict):
            messages.append(f"{flag} = {shortened(value)}: {text}")
        else:
            messages.append(text)
    return "; ".join(messages)


_FIELD = re.compile(
    r"^((?:tax\.)?method)\b|(?<![\w.-])(?<!value_source )((?:tax\.)?[a-z]+(?:_[a-z]+)+)\b"
)
"""A field's name in a model's message ("change_life_years", "tax.change_month", "method" where
it begins), not a value ("value_source market_value_table" names the source)."""


def _flagged(text: str, where: str, flags: dict[str, str] = _FLAGS) -> str:
    """A model's message with the fields it names as the options that set them (`flags`);
    `where` is the section the message came from ("tax" for [depreciation.tax], else the
    policy)."""
    prefix = "tax." if where.split(".")[0] == "tax" else ""

    def flag(match: re.Match) -> str:
        name = match.group(1) or match.group(2)
        key = name if name.startswith("tax.") else prefix + name
        return flags.get(key, name)

    return _FIELD.sub(flag, text)


_SIDE_INPUTS = {
    "--usage": ("units_of_production", "usage"),
    "--value-table": ("economic", "value_table"),
}
"""Options either side's method reads, with that method: data, not a method's field."""


def _refuse_without_effect(args, policy: DepreciationPolicy) -> None:
    """Refuse options the chosen methods do not read (`--bonus-share` with --tax-method book):
    the schedules would be printed without them, as if they had been applied."""
    from econ.scenario.depreciation_models import inputs_without_effect

    values = {
        "method": [policy.method],
        "tax.method": [policy.tax.method],
        "factor": [args.factor],
        "switch_to_straight_line": [not args.no_switch],
        "first_year_months": [args.first_year_months],
        "custom_percent": [policy.custom_percent],
        "lifetime_usage": [args.lifetime_usage],
        "tax.factor": [args.tax_factor],
        "tax.recovery_years": [args.recovery_years],
        "tax.convention": [args.convention],
        "tax.bonus_share": [args.bonus_share],
        "tax.custom_percent": [policy.tax.custom_percent],
    }
    if args.tax_life_years is not None:
        values["tax.life_years"] = [args.tax_life_years]
    columns = {}
    for key, (value,) in values.items():
        columns[key] = np.empty(1, dtype=object)  # (a tuple stays one element)
        columns[key][0] = value
    messages = inputs_without_effect(columns, _FLAGS)[0]
    for flag, (method, attribute) in _SIDE_INPUTS.items():
        given = getattr(args, attribute)
        if given is not None and method not in (policy.method, policy.tax.method):
            messages.append(
                f"{flag} = {given!r} has no effect: neither --method ({policy.method}) nor "
                f"--tax-method ({policy.tax.method}) is {method}; give one of them {method} to "
                "use it, or leave it out"
            )
    if messages:
        raise dep.DepreciationError("; ".join(messages))


def method_settings(method: DepreciationMethod, in_service_month: int) -> dep.MethodSettings:
    """The domain settings of a validated method model (plain data for econ.depreciation)."""
    return dep.MethodSettings(
        method=method.method,
        life_years=method.life_years,
        salvage_share=method.salvage_share,
        in_service_month=in_service_month,
        factor=method.factor,
        switch_to_straight_line=method.switch_to_straight_line,
        first_year_months=method.first_year_months,
        recovery_years=method.recovery_years,
        convention=method.convention,
        bonus_share=method.bonus_share,
        custom_percent=method.custom_percent,
        lifetime_usage=np.nan if method.lifetime_usage is None else method.lifetime_usage,
        change_month=method.change_month or 0,
        change_life_years=np.nan if method.change_life_years is None else method.change_life_years,
    )


def _horizon(policy: DepreciationPolicy, args) -> int:
    if args.months is not None:
        if args.months < 1:
            raise dep.DepreciationError(f"--months = {args.months}: expected at least 1 month")
        return args.months
    if args.retirement_month is not None:
        return args.retirement_month
    return max(_last_month(m, policy.in_service_month) for m in (policy.book, policy.tax_method))


def _last_month(method: DepreciationMethod, in_service_month: int) -> int:
    """The last month a method depreciates in: its life from the in-service month, or for MACRS
    the end of the tax year its table ends in (its years are tax years: econ.tax's 12-month
    blocks from month 1, the first holding the in-service month)."""
    if method.method == "macrs_gds":
        first = int(tax_mod.tax_year_index(in_service_month))
        return MONTHS_PER_YEAR * (first + round(method.effective_life_years))
    life_months = math.ceil(method.effective_life_years * MONTHS_PER_YEAR - 1e-9)
    return in_service_month - 1 + life_months


def _usage(args, months: np.ndarray, needed: bool) -> np.ndarray | None:
    if not needed:
        return None
    values = _numbers(args.usage, "--usage")
    if not values:
        raise dep.DepreciationError(
            "units_of_production needs --usage: usage of months 1, 2, ... (one value = every month)"
        )
    for month, value in enumerate(values, start=1):
        if not (math.isfinite(value) and value >= 0):  # (NaN was told "overflows")
            where = f"value {month} (month {month})" if len(values) > 1 else "every month"
            raise dep.DepreciationError(
                f"--usage = {args.usage!r}, {where}: {value!r}; expected a finite usage of at "
                "least 0 [tokens or GPU-hours]"
            )
    usage = np.zeros(months.size)
    if len(values) == 1:
        usage[1:] = values[0]
    else:
        k = min(len(values), months.size - 1)
        usage[1 : k + 1] = values[:k]
    if not np.isfinite(usage.sum()):  # the shares of the total would be NaN
        raise dep.DepreciationError(
            f"--usage = {args.usage!r}: expected smaller usage figures: their total over the "
            "months overflows floating point"
        )
    return usage[None, :]


def _check_sale(args, in_service_month: int) -> None:
    # The asset is sold at the end of a month it was in service, as econ.depreciation.dispose
    # requires (there, 0 means "not retired"): month 0, the purchase month, never qualifies.
    r = args.retirement_month
    if r is None and args.sale_value is not None:  # no month to sell in: it was ignored
        raise dep.DepreciationError(
            f"--sale-value = {args.sale_value!r}: expected it with --retirement-month, the month "
            "of the sale (without one the asset is not sold)"
        )
    if r is not None and r < in_service_month:
        raise dep.DepreciationError(
            f"--retirement-month = {r}: expected a month at or after the in-service month "
            f"({in_service_month}; month 0 is the purchase month, before service)"
        )
    if r is not None and args.months is not None and args.months < r:
        raise dep.DepreciationError(  # the sale would fall after the last month shown
            f"--months = {args.months}: expected at least --retirement-month ({r}), so the "
            "months shown include the sale"
        )


def _refuse_overflow(args, *figures: np.ndarray) -> None:
    # --months and the other options are bounded; a cost near the float limit still overflows
    # some methods' products (SYD's base x 2 (life - k + 1), MACRS's cost x percent), as a
    # principal does in econ loan.
    if not all(np.all(np.isfinite(f)) for f in figures):
        raise dep.DepreciationError(
            f"--cost = {args.cost!r}: expected a smaller cost: the schedules' figures overflow "
            "floating point [USD]"
        )


def schedules(args) -> dict[str, np.ndarray]:
    """All monthly lines of the command, arrays (T,) [USD]."""
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused by name
        return _schedules(args)


def _schedules(args) -> dict[str, np.ndarray]:
    policy = _policy(args)
    _check_sale(args, policy.in_service_month)
    months = np.arange(_horizon(policy, args) + 1)
    cost = np.array([args.cost])
    s = policy.in_service_month
    value = None
    if policy.market_value_table:
        table = policy.market_value_table
        value = dep.value_share_from_table(
            [p.month for p in table], [p.share for p in table], months
        )
    lines = {}
    for side, method in (("book", policy.book), ("tax", policy.tax_method)):
        settings = method_settings(method, s)
        if args.retirement_month is not None:  # (MACRS: Pub 946's year of disposal, both sides)
            settings = replace(settings, disposal_month=args.retirement_month)
        usage = _usage(args, months, method.method == "units_of_production")
        tables = catalog.macrs_gds_tables() if method.method == "macrs_gds" else None
        if side == "tax" and tables is not None:  # (econ.depreciation's refusal, by its option)
            dep.refuse_mid_quarter_mismatch(method.convention, s, field="--convention")
        lines[side] = dep.schedule(
            settings, cost, months, usage=usage, value_curve=value, tables=tables, exact_end=True
        )
    out = {"month": months}
    if args.retirement_month is not None:
        carrying = dep.book_value(cost, lines["book"])[:, args.retirement_month]
        given = np.nan if args.sale_value is None else args.sale_value
        sale = dep.sale_proceeds_usd(carrying, np.array([given]))
        book = dep.dispose(
            lines["book"], cost, months, args.retirement_month, sale, in_service_month=s
        )
        tax = dep.dispose(
            lines["tax"], cost, months, args.retirement_month, sale, in_service_month=s
        )
        lines = {"book": book.depreciation_usd, "tax": tax.depreciation_usd}
        book_value, tax_basis = book.carrying_amount_usd, tax.carrying_amount_usd
        gains = {"book_gain_usd": book.gain_usd, "tax_gain_usd": tax.gain_usd}
        out["proceeds_usd"] = book.proceeds_usd[0]
        out.update({k: v[0] for k, v in gains.items()})
    else:
        book_value = dep.book_value(cost, lines["book"])
        tax_basis = dep.book_value(cost, lines["tax"])
        gains = {}
    _refuse_overflow(args, *lines.values(), book_value, tax_basis, *gains.values())
    deferred = deferred_mod.deferred_tax(lines["book"], lines["tax"], args.tax_rate, **gains)
    out.update(
        {
            "book_depreciation_usd": lines["book"][0],
            "book_value_usd": book_value[0],
            "tax_depreciation_usd": lines["tax"][0],
            "tax_basis_usd": tax_basis[0],
            "temporary_difference_usd": deferred.temporary_difference_usd[0],
            "deferred_tax_expense_usd": deferred.expense_usd[0],
            "deferred_tax_liability_usd": deferred.liability_usd[0],
        }
    )
    _refuse_overflow(args, *out.values())
    return out


def yearly(lines: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Tax years of 12 months from month 1 (month 0 joins year 1), as econ.tax counts them;
    `months`: the months of each year shown (fewer than 12 in a last year cut short)."""
    flows = ["book_depreciation_usd", "tax_depreciation_usd", "deferred_tax_expense_usd"]
    flows += [c for c in DISPOSAL_COLUMNS if c in lines]
    out = {name: tax_mod.annual_sums(lines[name][None, :])[0] for name in flows}
    for name in ("book_value_usd", "tax_basis_usd", "deferred_tax_liability_usd"):
        out[name] = tax_mod.year_end_values(lines[name][None, :])[0]
    year = np.arange(1, len(out[flows[0]]) + 1)
    last = int(lines["month"][-1])
    months = np.minimum(MONTHS_PER_YEAR * year, last) - MONTHS_PER_YEAR * (year - 1)
    return {"year": year, "months": months, **out}


def methods_text(args) -> dict:
    """The book and tax methods in words, and the tax rate: what the schedules were computed
    with (the tax side names MACRS's class, convention, IRS table and bonus share)."""
    policy = _policy(args)
    s = policy.in_service_month
    book = dep.describe_method(method_settings(policy.book, s))
    tax = dep.describe_method(method_settings(policy.tax_method, s))
    if policy.tax.method == "book":
        tax = f"the book schedule ({tax})"
    return {"book": book, "tax": tax, "tax_rate": args.tax_rate}


def convention_warnings(args) -> list[str]:
    """What the schedules may get wrong that the options do not refuse: the half-year
    convention for an asset placed in service in the last quarter of its tax year, where the
    40% test would call for the mid-quarter one (econ.depreciation.half_year_in_last_quarter),
    with the first tax year's deduction under each."""
    policy = _policy(args)
    tax, s = policy.tax_method, policy.in_service_month
    if tax.method != "macrs_gds" or not dep.half_year_in_last_quarter(tax.convention, s)[0]:
        return []
    year = int(tax_mod.tax_year_index(s)) + 1
    months = np.arange(MONTHS_PER_YEAR * year + 1)  # (to the end of the first tax year)
    settings = method_settings(tax, s)
    half, mid = (
        dep.first_tax_year_usd(
            dep.schedule(
                replace(settings, convention=convention),
                np.array([args.cost]),
                months,
                tables=catalog.macrs_gds_tables(),
            ),
            s,
        )[0]
        for convention in ("half-year", "mid-quarter Q4")
    )
    if math.isclose(half, mid):  # (all of it bonus: the convention changes nothing)
        return []
    return [
        f"--convention half-year: the asset is placed in service in month {s}, in quarter 4 of "
        f"tax year {year} (12-month blocks from month 1); where it is more than 40% of the "
        "depreciable basis placed in service that year, IRC §168(d)(3) requires the mid-quarter "
        f"convention ('mid-quarter Q4', IRS Pub 946 Table A-5), which deducts {mid:,.0f} USD in "
        f"tax year {year} instead of {half:,.0f} USD: give --convention 'mid-quarter Q4' unless "
        "other property placed in service that year keeps its quarter-4 share at or below 40%"
    ]


def _records(table: dict[str, np.ndarray], columns) -> list[dict]:
    keys = [c for c in columns if c in table]
    return [
        # "+ 0.0" turns the -0.0 of a rounded tiny negative into 0.0.
        {
            k: (
                int(table[k][i])
                if k in ("month", "year", "months")
                else round(float(table[k][i]), 6) + 0.0
            )
            for k in keys
        }
        for i in range(len(table[keys[0]]))
    ]


def _period(record: dict, key: str) -> str:
    """A row's month or year; a year of fewer than 12 months says so ("2 (8 months)")."""
    if key == "year" and record.get("months", MONTHS_PER_YEAR) < MONTHS_PER_YEAR:
        return f"{record['year']} ({record['months']} months)"
    return str(record[key])


def _format_table(title: str, records: list[dict]) -> str:
    if not records:
        return title
    keys = [k for k in records[0] if k != "months"]  # (in the year's cell when not 12)
    header = [k.removesuffix("_usd") for k in keys]
    rows = [header] + [
        [_period(r, k) if k in ("month", "year") else f"{r[k]:,.2f}" for k in keys] for r in records
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(keys))]
    lines = [title]
    for j, row in enumerate(rows):
        lines.append("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def run(args) -> int:
    lines = schedules(args)
    monthly_cols = MONTHLY_COLUMNS + tuple(c for c in DISPOSAL_COLUMNS if c in lines)
    year_cols = YEARLY_COLUMNS + tuple(c for c in DISPOSAL_COLUMNS if c in lines)
    monthly = _records(lines, monthly_cols)
    annual = _records(yearly(lines), year_cols)
    methods = methods_text(args)
    warnings = convention_warnings(args)
    if args.format == "json":
        payload = {"inputs": {k: v for k, v in vars(args).items() if k not in ("run", "format")}}
        payload["methods"] = methods
        payload["warnings"] = warnings
        if args.by in ("year", "both"):
            payload["yearly"] = annual
        if args.by in ("month", "both"):
            payload["monthly"] = monthly
        print(json.dumps(payload, indent=2, allow_nan=False))
    elif args.format == "csv":
        records = annual if args.by == "year" else monthly
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(records[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(records)
        sys.stdout.write(buffer.getvalue())
    else:
        parts = [
            f"book: {methods['book']}\n"
            f"tax: {methods['tax']}, tax rate {100 * methods['tax_rate']:g}%"
        ]
        if args.by in ("year", "both"):
            parts.append(_format_table("By year (12 months from month 1) [USD]", annual))
        if args.by in ("month", "both"):
            parts.append(_format_table("By month [USD]", monthly))
        print("\n\n".join(parts))
    if args.format != "json":  # (stdout holds the schedules alone)
        say_warnings(f"warning: {w}" for w in warnings)
    return 0
