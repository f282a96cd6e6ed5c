"""CLI commands for financing: `econ loan` (a loan's monthly schedule) and `econ lease-vs-own`
(renting GPUs by the hour against owning them as a scenario projects). Thin: parse, call the
library, print."""

from __future__ import annotations

import csv
import io
import json
import sys
import textwrap

import numpy as np

from econ.commands import (
    SCENARIO_HELP,
    Number,
    add_format,
    add_overrides,
    say_warnings,
    scenario_path,
)
from econ.errors import InputError
from econ.financing import (
    DAY_COUNT_ACCRUAL,
    DAY_COUNTS,
    REPAYMENTS,
    negative_rate_months,
    negative_rate_warning,
)
from econ.lease import (  # numpy only; the engine loads in the command
    RENTER_COSTS,
    RENTER_OPEX,
    TAX_TIMING,
    renter_opex_usd,
    shares_settling_debt_usd,
    term_warning,
)
from econ.text import shortened
from econ.units import MONTHS_PER_YEAR, monthly_rate

EXIT_OK = 0
DEBT_DISCOUNTS = ("discount-rate", "after-tax-cost-of-debt")

_LOANS = "financing_models:_Loan"  # the option's bounds are those of a loan in a scenario file
_LOAN_RATE = Number(field=f"{_LOANS}.rate_annual", what="a fixed rate", unit=" [1/year]")
_SOFR = Number(
    field="financing_models:FlatCurve.rate_annual", what="an index rate", unit=" [1/year]"
)
_SPREAD = Number(
    field="financing_models:FloatingRate.spread_annual", what="a margin", unit=" [1/year]"
)
_FLOOR = Number(
    field="financing_models:FloatingRate.floor_annual", what="a floor", unit=" [1/year]"
)
_MATURITY = Number(int, field=f"{_LOANS}.maturity_month", what="a term", unit=" [months]")
_AMORTIZATION = Number(
    int, field=f"{_LOANS}.amortization_months", what="a period", unit=" [months]"
)
_INTEREST_ONLY = Number(
    int, field=f"{_LOANS}.interest_only_months", what="a period", unit=" [months]"
)
_BALLOON = Number(field=f"{_LOANS}.balloon_share", what="a share")
_FEE = Number(field=f"{_LOANS}.upfront_fee_share", what="a share")
_OID = Number(field=f"{_LOANS}.issue_discount_share", what="a share")
_LEASE_TERM = Number(int, field=f"{_LOANS}.maturity_month", what="a term", unit=" [months]")


def register(subparsers) -> None:
    loan = subparsers.add_parser(
        "loan",
        help="print the monthly schedule of a loan",
        description="Monthly schedule of one loan drawn at month 0: interest, principal, "
        "balance, and interest expense with fees amortized by the effective interest method.",
    )
    loan.add_argument(
        "--amount",
        type=Number(
            field="financing_models:_Tranche.amount_usd", what="a principal", unit=" [USD]"
        ),
        required=True,
        help="principal drawn [USD]",
    )
    rate = loan.add_mutually_exclusive_group(required=True)
    rate.add_argument("--rate", type=_LOAN_RATE, help="fixed annual rate, e.g. 0.0925 [1/year]")
    rate.add_argument("--sofr", type=_SOFR, help="flat index rate for a floating loan [1/year]")
    loan.add_argument(
        "--spread", type=_SPREAD, help="margin over --sofr (default 0); not with --rate [1/year]"
    )
    loan.add_argument(
        "--floor", type=_FLOOR, help="floor on the --sofr index; not with --rate [1/year]"
    )
    loan.add_argument("--term-months", type=_MATURITY, required=True, help="maturity [months]")
    loan.add_argument(
        "--type",
        choices=REPAYMENTS,
        default="level_payment",
        help="repayment: %(choices)s (default %(default)s)",
    )
    loan.add_argument(
        "--amortization-months", type=_AMORTIZATION, help="default: the term [months]"
    )
    loan.add_argument(
        "--interest-only-months",
        type=_INTEREST_ONLY,
        default=0,
        help="interest-only months before amortizing, for --type interest_only_then_amortizing; "
        "fewer than the term (default %(default)s)",
    )
    loan.add_argument(
        "--balloon-share",
        type=_BALLOON,
        default=0.0,
        help="share left for the balloon, only with --type balloon (default %(default)g)",
    )
    loan.add_argument(
        "--upfront-fee-share",
        type=_FEE,
        default=0.0,
        help="fee at closing as a share of the amount (default %(default)g)",
    )
    loan.add_argument(
        "--issue-discount-share",
        type=_OID,
        default=0.0,
        help="original issue discount as a share of face (default %(default)g)",
    )
    loan.add_argument(
        "--day-count",
        choices=tuple(DAY_COUNTS),
        default="30/360",
        help="day count of interest: %(choices)s (default %(default)s)",
    )
    add_format(loan)
    loan.set_defaults(run=_cmd_loan)

    lease = subparsers.add_parser(
        "lease-vs-own",
        help="compare renting GPUs by the GPU-hour with owning them as the scenario projects",
        description="Present value and cost per million tokens of owning the fleet (capex, the "
        "scenario's debt, power, facility, opex, residual value, after tax) and of renting the "
        "same GPUs in the months the owner has them in service (from the service start to "
        "retirement or the horizon), with the break-even rental price.",
    )
    lease.add_argument("file", metavar="FILE", help=SCENARIO_HELP)
    add_overrides(
        lease,
        "override a field of the scenario by dotted path (TOML value; repeat for several)",
    )
    lease.add_argument(
        "--price",
        type=Number(what="a rental price", ge=0, unit=" [USD/GPU-hour]"),
        required=True,
        help="rent [USD/GPU-hour]",
    )
    lease.add_argument(
        "--term-months",
        type=_LEASE_TERM,
        default=36,
        help="contract term (default %(default)s) [months]",
    )
    lease.add_argument(
        "--upfront-share",
        type=Number(what="a share", ge=0, le=1),
        default=0.0,
        help="share of a contract's rent paid upfront, the month before it starts; 1: fully "
        "prepaid (default %(default)g)",
    )
    lease.add_argument(
        "--renter-pays",
        default="opex",
        help="costs the renter still bears, comma-separated from power,facility,opex, or 'none' "
        "(default opex: the rent covers power and facility, and the owner's insurance and "
        f"maintenance; the renter's opex is {RENTER_OPEX})",
    )
    lease.add_argument(
        "--discount-rate",
        type=Number(field="models:Financing.discount_rate_annual", what="a rate", unit=" [1/year]"),
        help="annual rate; default: the scenario's discount rate",
    )
    lease.add_argument(
        "--discount-debt-at",
        choices=DEBT_DISCOUNTS,
        default="discount-rate",
        help="rate discounting the flows as safe as debt: the owner's debt flows (draws less "
        "fees, interest and principal, and the tax saved on interest), capex less the tax its "
        "depreciation saves, and the rent after tax. The discount rate (the default: all flows "
        "at it), or the debt's after-tax cost, as Brealey, Myers & Allen's lease-versus-buy "
        "analysis does (ch. 25.4-25.5), the operating costs and the sale staying at the "
        "discount rate; needs a scenario with debt (default %(default)s)",
    )
    add_format(lease, ("table", "json"))
    lease.set_defaults(run=_cmd_lease_vs_own)


# ---------------------------------------------------------------------------------------------
# econ loan
# ---------------------------------------------------------------------------------------------


def _cmd_loan(args) -> int:
    _require(args.amount > 0, "--amount", args.amount, "a principal above 0 [USD]")
    _require(args.term_months >= 1, "--term-months", args.term_months, "at least 1 month")
    _require(args.term_months <= 600, "--term-months", args.term_months, "at most 600 months")
    _check_loan_terms(args)
    spec = {
        "type": "term_loan",
        "name": "loan",
        "amount_usd": args.amount,
        "maturity_month": args.term_months,
        "repayment": args.type,
        "amortization_months": args.amortization_months,
        "interest_only_months": args.interest_only_months,
        "balloon_share": args.balloon_share,
        "upfront_fee_share": args.upfront_fee_share,
        "issue_discount_share": args.issue_discount_share,
        "day_count": args.day_count,
    }
    if args.rate is not None:
        spec["rate_annual"] = args.rate
    else:
        spec.update(
            index_months=[0.0],
            index_rates_annual=[args.sofr],
            spread_annual=0.0 if args.spread is None else args.spread,
            floor_annual=np.nan if args.floor is None else args.floor,
        )
    T = args.term_months + 1
    profile = np.zeros((1, T))
    profile[0, 0] = 1.0
    from econ.capital import stack_schedule

    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below
        stack = stack_schedule([spec], [args.amount], profile, np.arange(T), [T - 1])
        lines = stack.tranches["loan"]
        rows = _loan_rows(lines)
        # All-in (fees and discount included): the monthly yield y of the cash received and paid,
        # quoted effective, (1 + y)^12 - 1, and nominal, 12 y (the APR's convention).
        effective = float(stack.tranche_metrics["loan"]["effective_rate_annual"][0])
        warnings = _loan_warnings(lines)
        summary = {
            "amount_usd": args.amount,
            "first_payment_usd": rows[1]["payment_usd"] if len(rows) > 1 else 0.0,
            "total_interest_usd": float(lines["cash_interest_usd"].sum()),
            "total_paid_usd": float(sum(r["payment_usd"] for r in rows)),
            "interest_expense_usd": float(lines["interest_expense_usd"].sum()),
            "effective_rate_annual": effective,
            "nominal_rate_annual": float(MONTHS_PER_YEAR * monthly_rate(effective)),
        }
    figures = [*summary.values(), *(x for row in rows for x in row.values())]
    # The rates and months are bounded; a principal near the float limit still overflows.
    _require(
        bool(np.all(np.isfinite(figures))),
        "--amount",
        args.amount,
        "a smaller principal: the schedule's figures overflow floating point [USD]",
    )
    day_count = {
        "day_count": args.day_count,
        "accrual_years_per_month": DAY_COUNTS[args.day_count],
        "accrual": DAY_COUNT_ACCRUAL[args.day_count],
    }
    if args.format == "json":
        payload = {"summary": summary, "day_count": day_count, "schedule": rows}
        print(json.dumps({**payload, "warnings": warnings}, indent=2, allow_nan=False))
    elif args.format == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        sys.stdout.write(buffer.getvalue())
        say_warnings(f"warning: {w}" for w in warnings)  # (stdout holds the data alone)
    else:
        print(_loan_table(rows, summary, day_count))
        for warning in warnings:
            print(f"warning: {warning}")
    return EXIT_OK


def _loan_warnings(lines) -> list[str]:
    """What the schedule shows that a reader may not expect: a floating rate below 0 (an index
    below minus the spread, with no floor), which a scenario file's tranche is warned of too."""
    months, first, lowest = negative_rate_months(lines["rate_annual"])
    if not months[0]:
        return []
    return [negative_rate_warning("loan", int(months[0]), int(first[0]), lowest[0], "--floor 0")]


def _check_loan_terms(args) -> None:
    """The options a scenario file's loan refuses, refused here too: a spread or floor beside a
    fixed rate, a repayment option that the repayment type does not use, and an interest-only
    period that leaves nothing to amortize."""
    floating = {"--spread": args.spread, "--floor": args.floor}
    given = [f"{option} = {value!r}" for option, value in floating.items() if value is not None]
    if args.rate is not None and given:
        raise InputError(
            f"{' and '.join(given)} with --rate = {args.rate!r}: expected no --spread or --floor "
            "with a fixed --rate (a fixed rate takes no spread or floor: they apply to the index "
            "of a floating rate, --sofr)"
        )
    _require(
        args.balloon_share == 0 or args.type == "balloon",
        "--balloon-share",
        args.balloon_share,
        f"--type balloon with it, the repayment that leaves a balloon (--type is {args.type})",
    )
    # A balloon with nothing left for it is a level loan, and a bullet's amortization period
    # only moved its repayment before the term: both ran silently.
    _require(
        args.type != "balloon" or args.balloon_share > 0,
        "--type",
        args.type,
        "--balloon-share above 0 with it, the share of the amount left for the balloon (without "
        "one it is a level loan: --type level_payment)",
    )
    amortization = args.amortization_months
    _require(
        args.type != "bullet" or amortization in (None, args.term_months),
        "--amortization-months",
        amortization,
        f"none with --type bullet, which repays the whole amount at --term-months "
        f"({args.term_months}); for a bullet in month {amortization}, give --term-months "
        f"{amortization}",
    )
    if args.interest_only_months == 0:
        return
    _require(
        args.type == "interest_only_then_amortizing",
        "--interest-only-months",
        args.interest_only_months,
        f"--type interest_only_then_amortizing with it (--type is {args.type})",
    )
    # Interest only for the whole term is a bullet loan; a lender writes it as one.
    _require(
        args.interest_only_months < args.term_months,
        "--interest-only-months",
        args.interest_only_months,
        f"fewer months than --term-months ({args.term_months}), to leave months to amortize; for "
        "interest only to maturity, use --type bullet",
    )
    _require(
        amortization is None or args.interest_only_months < amortization,
        "--interest-only-months",
        args.interest_only_months,
        f"fewer months than --amortization-months ({amortization}), to leave months to amortize",
    )


def _loan_rows(lines) -> list[dict]:
    balance = lines["balance_usd"][0]
    opening = np.concatenate([[0.0], balance[:-1]])
    principal = lines["principal_usd"][0]
    interest = lines["cash_interest_usd"][0]
    return [
        {
            "month": m,
            "opening_balance_usd": float(opening[m]),
            "draw_usd": float(lines["draw_usd"][0, m]),
            "interest_usd": float(interest[m]),
            "principal_usd": float(principal[m]),
            "payment_usd": float(interest[m] + principal[m]),
            "balance_usd": float(balance[m]),
            "interest_expense_usd": float(lines["interest_expense_usd"][0, m]),
            "carrying_usd": float(lines["carrying_usd"][0, m]),
        }
        for m in range(balance.shape[0])
    ]


def _loan_table(rows, summary, day_count) -> str:
    columns = [
        ("month", "month", "{:d}"),
        ("opening_balance_usd", "opening [USD]", "{:,.2f}"),
        ("interest_usd", "interest [USD]", "{:,.2f}"),
        ("principal_usd", "principal [USD]", "{:,.2f}"),
        ("payment_usd", "payment [USD]", "{:,.2f}"),
        ("balance_usd", "balance [USD]", "{:,.2f}"),
        ("interest_expense_usd", "int. expense [USD]", "{:,.2f}"),
    ]
    cells = [[label for _, label, _ in columns]]
    cells += [[fmt.format(r[key]) for key, _, fmt in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    out = ["  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    out.insert(1, "  ".join("-" * w for w in widths))
    totals = [
        ("first payment [USD]", f"{summary['first_payment_usd']:,.2f}"),
        ("total interest [USD]", f"{summary['total_interest_usd']:,.2f}"),
        ("total paid [USD]", f"{summary['total_paid_usd']:,.2f}"),
        ("interest expense [USD]", f"{summary['interest_expense_usd']:,.2f}"),
        ("all-in rate, effective annual [per year]", f"{summary['effective_rate_annual']:.4%}"),
        ("all-in rate, nominal annual (APR) [per year]", f"{summary['nominal_rate_annual']:.4%}"),
    ]
    width = max(len(label) for label, _ in totals)
    out.append("")
    out += [f"{label.ljust(width)}  {value}" for label, value in totals]
    out.append("(all-in: fees and issue discount included, at the monthly yield y of the cash the")
    out.append("borrower receives and pays; effective (1 + y)^12 - 1, nominal 12 y, the convention")
    out.append("of the contract rate and of an APR)")
    out.append(f"day count {day_count['day_count']}: interest = {day_count['accrual']}")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# econ lease-vs-own
# ---------------------------------------------------------------------------------------------


def _cmd_lease_vs_own(args) -> int:
    from econ import load_scenario, project  # the engine loads only when this command runs
    from econ.lease import after_tax_cost_of_debt_annual, lease_vs_own_of_projection

    _require(args.price >= 0, "--price", args.price, "a rental price >= 0 [USD/GPU-hour]")
    _require(args.term_months >= 1, "--term-months", args.term_months, "at least 1 month")
    _require(
        0 <= args.upfront_share <= 1, "--upfront-share", args.upfront_share, "a share in [0, 1]"
    )
    renter = _renter_costs(args.renter_pays)
    scenario = load_scenario(scenario_path(args.file), args.overrides)
    if scenario.vintages:
        names = ", ".join(v.name for v in scenario.vintages)
        raise InputError(
            f"{args.file}: [[vintages]] ({names}): lease-vs-own compares one fleet, at one rent "
            "per GPU-hour and one break-even rent, and a vintage adds GPUs of their own kind, "
            "price and months; expected a scenario without [[vintages]]: compare the first "
            "fleet with --set 'vintages=[]' and each vintage as a scenario of its own (its "
            "GPUs as [fleet])"
        )
    projection = project(scenario)
    renter_opex = renter_opex_usd(scenario) if "opex" in renter else None
    settled = shares_settling_debt_usd(projection)
    horizon = projection.horizon_months
    tax_rate = np.array([scenario.financing.tax_rate])
    annual = (
        scenario.financing.discount_rate_annual
        if args.discount_rate is None
        else (args.discount_rate)
    )
    _require(annual > -1, "--discount-rate", annual, "a rate above -1 [1/year]")
    # (NaN without debt: then there are no debt flows, and the discount rate discounts nothing)
    cost_of_debt = float(
        after_tax_cost_of_debt_annual(projection.metrics["cost_of_debt_annual"], tax_rate)[0]
    )
    at_cost_of_debt = args.discount_debt_at == "after-tax-cost-of-debt"
    if at_cost_of_debt and not np.isfinite(cost_of_debt):
        raise InputError(
            f"--discount-debt-at after-tax-cost-of-debt: {args.file} borrows nothing, so it has "
            "no cost of debt to discount the flows as safe as debt at (capex, the tax its "
            "depreciation saves, the rent); expected a scenario with debt (financing.debt_share "
            "above 0 or a debt tranche), or --discount-debt-at discount-rate"
        )
    debt_annual = cost_of_debt if at_cost_of_debt else annual

    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below
        result = lease_vs_own_of_projection(
            projection.lines,
            args.price,
            args.term_months,
            args.upfront_share,
            tax_rate,
            np.array([annual]),
            renter_pays=renter,
            debt_discount_rate_annual=np.array([debt_annual]) if at_cost_of_debt else None,
            renter_opex_usd=renter_opex,
            settled_in_shares_usd=settled,
        )
    _require(
        bool(np.isfinite(result["pv_cost_lease_usd"][0]))
        and not any(np.isinf(value[0]) for value in result.values()),
        "--price",
        args.price,
        "a smaller rent: the lease's present value overflows floating point [USD/GPU-hour]",
    )
    serving = np.flatnonzero(projection.lines["gpus_in_service"][0] > 0)
    term = term_warning(args.term_months, serving[0], serving[-1]) if serving.size else None
    policy = scenario.depreciation
    record = {
        "scenario": scenario.name,
        "horizon_months": int(horizon[0]),
        "gpu_count": int(scenario.fleet.gpu_count),
        "first_service_month": int(serving[0]) if serving.size else None,
        "last_service_month": int(serving[-1]) if serving.size else None,
        "rent_usd_per_gpu_hour": args.price,
        "term_months": args.term_months,
        "upfront_share": args.upfront_share,
        "renter_pays": list(renter),
        "renter_opex": RENTER_OPEX if "opex" in renter else None,
        "discount_rate_annual": annual,
        "discount_debt_at": args.discount_debt_at,
        "debt_discount_rate_annual": debt_annual,
        "after_tax_cost_of_debt_annual": _number(cost_of_debt),
        "tax_rate": float(tax_rate[0]),
        "tax_depreciation_method": policy.tax.method,
        "tax_depreciation": _tax_depreciation(policy),
        "tax_timing": TAX_TIMING,
        "settled_in_shares_usd": float(settled.sum()),
        **{key: _number(value[0]) for key, value in result.items()},
    }
    if args.format == "json":
        from econ.embedding import named_by_file
        from econ.provenance import stamp

        # (as econ project's JSON: a curve file named by its file name, not this machine's path)
        warnings = [*named_by_file(projection, [scenario]).warnings[0], *([term] if term else [])]
        payload = {**stamp([scenario]).json_header(), **record, "warnings": warnings}
        print(json.dumps(payload, indent=2, allow_nan=False))
    else:
        print(_lease_table(record))
        say_warnings(f"warning [{scenario.name}]: {w}" for w in projection.warnings[0])
        say_warnings([f"warning: {term}"] if term else [])
    return EXIT_OK


def _tax_depreciation(policy) -> str:
    """The owner's tax depreciation in words (the book schedule's when tax.method is book)."""
    from econ.commands.depreciation import method_settings
    from econ.depreciation import describe_method

    text = describe_method(method_settings(policy.tax_method, policy.in_service_month))
    return f"the book schedule, {text}" if policy.tax.method == "book" else text


def _renter_costs(text: str) -> tuple[str, ...]:
    if text.strip().lower() == "none":
        return ()
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    if not names:  # (read as none before; none is said so)
        raise InputError(
            f"--renter-pays {shortened(text)}: no cost named; expected 'none' or a "
            f"comma-separated list of distinct costs from: {', '.join(RENTER_COSTS)}"
        )
    unknown = [x for x in names if x not in RENTER_COSTS]
    repeated = [x for i, x in enumerate(names) if x in names[:i]]
    if unknown or repeated:
        what = (
            f"unknown cost {shortened(unknown[0])}"
            if unknown
            else f"{shortened(repeated[0])} given twice"
        )
        raise InputError(
            f"--renter-pays {shortened(text)}: {what}; expected 'none' or a comma-separated "
            f"list of distinct costs from: {', '.join(RENTER_COSTS)}"
        )
    return names


def _lease_table(r: dict) -> str:
    def money(x):
        return "n/a" if x is None else f"{x:,.0f}"

    def per_mtok(x):
        return "n/a" if x is None else f"{x:,.4f}"

    rows = [
        ("", "own", "lease"),
        ("PV of after-tax cost [USD]", money(r["pv_cost_own_usd"]), money(r["pv_cost_lease_usd"])),
        (
            "after-tax cost per million tokens [USD/Mtok]",
            per_mtok(r["cost_own_usd_per_mtok"]),
            per_mtok(r["cost_lease_usd_per_mtok"]),
        ),
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    out = [
        f"{r['scenario']}: {r['gpu_count']:,} GPUs in service in months "
        f"{r['first_service_month']}-{r['last_service_month']} of {r['horizon_months']}; rent "
        f"{r['rent_usd_per_gpu_hour']:g} USD/GPU-hour, {r['term_months']}-month terms, "
        f"{r['upfront_share']:.0%} upfront; renter pays: {', '.join(r['renter_pays']) or 'none'}",
    ]
    if r["renter_opex"]:
        out.append(f"(the renter's opex: {r['renter_opex']}; the owner's insurance and")
        out.append("maintenance, shares of its capex, are in the rent)")
    out += [
        f"tax rate {100 * r['tax_rate']:g}%; discount rate {r['discount_rate_annual']:.2%} a year",
        f"tax depreciation: {r['tax_depreciation']}",
        *textwrap.wrap(f"(simplified: {TAX_TIMING})", width=96),
        "",
    ]
    out += [
        "  ".join(
            [row[0].ljust(widths[0])]
            + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        )
        for row in rows
    ]
    advantage = r["lease_advantage_usd"]
    better = "leasing" if advantage > 0 else "owning"
    out.append("(PV of after-tax cost / PV of tokens; the LCOT of econ project is before tax)")
    out.append("")
    out.append(f"{better} is cheaper by {abs(advantage):,.0f} USD in present value")
    breakeven = r["breakeven_usd_per_gpu_hour"]
    if breakeven is not None:
        out.append(f"break-even rent: {breakeven:,.4f} USD/GPU-hour")
    out += _debt_note(r)
    return "\n".join(out)


def _debt_note(r: dict) -> list[str]:
    """What the owner's debt flows are worth in the cost of owning, and at which rate."""
    cost = r["after_tax_cost_of_debt_annual"]
    if cost is None:
        return ["", "owning borrows nothing: its cost is capex, operating costs and tax"]
    at_cost = r["discount_debt_at"] == "after-tax-cost-of-debt"
    out = [
        "",
        "debt flows in the cost of owning (draws less fees, interest and principal, plus the tax",
        f"  saved on interest): PV {round(r['pv_debt_flows_usd']):,} USD at "
        f"{r['debt_discount_rate_annual']:.2%} a year, "
        + ("the after-tax cost of debt" if at_cost else "the discount rate"),
    ]
    if r["settled_in_shares_usd"]:
        out += [
            "  with the shares that settle convertible notes, worth "
            f"{r['settled_in_shares_usd']:,.0f} USD when issued",
            "  (the face where settled physically, and the conversion value above it: a cost of",
            "  owning that the financing cash flow, all cash, leaves out)",
        ]
    if at_cost:
        out += [
            "  as the other flows as safe as debt (Brealey, Myers & Allen ch. 25.4-25.5): capex",
            "  less the tax its depreciation saves, and the rent after tax; the operating costs",
            "  and the sale at the discount rate",
        ]
    else:
        moves = "lowers" if r["discount_rate_annual"] > cost else "raises"
        out += [
            f"  the debt costs {cost:.2%} a year after tax: discounted at the discount rate,",
            f"  borrowing {moves} the cost of owning by the spread's present value;",
            "  --discount-debt-at after-tax-cost-of-debt values the debt at its own cost",
        ]
    return out


def _number(value):
    value = float(value)
    return None if np.isnan(value) else value


def _require(ok: bool, option: str, value, expected: str) -> None:
    if not ok:
        raise InputError(f"{option} = {value!r}: expected {expected}")
