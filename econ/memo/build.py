"""What the investment memo says, computed: the base projection, the named cases, the tornado and
the reproducibility stamp. `econ verify` calls `figures_of` on the stamped scenario to recompute.

No formulas: every figure comes from econ.engine.project and econ.analysis.tornado.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from econ import __version__
from econ.errors import InputError
from econ.memo.figures import BREACH_PRICE, RESIDUAL_NPV, TORNADO_OUTPUT, case_rows, shown
from econ.provenance import catalog_versions, creation_time, scenario_sha256
from econ.scenario.errors import shortened
from econ.scenario.io import (
    apply_overrides,
    check_path,
    dumps,
    parse_override,
    parse_toml,
    validate_dict,
)
from econ.scenario.models import Scenario
from econ.scenario.paths import allowed_folders, path_fields, resolve_inside
from econ.sources import code_fingerprint

MEMO_FORMAT = 1
"""Version of the stamp layout; `econ verify` refuses layouts it does not know."""

TORNADO_SWING_PCT = 10.0
TORNADO_CANDIDATES = (
    "market.price_usd_per_mtok",
    "market.price_decline_annual",
    "market.input_price_usd_per_mtok",
    "throughput.tokens_per_s_per_gpu",
    "utilization.share",
    "capex.system_price_usd",
    "capex.gpu_price_usd",
    "power.price_usd_per_kwh",
    "facility.colo_usd_per_kw_month",
    "financing.debt_rate_annual",
    "financing.discount_rate_annual",
    "depreciation.life_years",
)
"""Inputs the memo's tornado swings, those the scenario sets to a non-zero number."""

MAX_CASES = 12
"""Named cases a memo holds besides the base case: each is a column of its cases table, which
past a dozen no longer fits a page (the default cases are at most six). `econ verify` refuses a
stamp with more, as each case is projected again."""

MAX_CASE_OVERRIDES = 32
"""Overrides one case may hold: they are printed under the cases table, and a case that changes
more inputs than this is a scenario of its own, better saved as a file."""
MAX_CASE_CHARS = 2_000
"""Characters of one case as `--case` takes it (NAME=PATH=VALUE;...): room for MAX_CASE_OVERRIDES
overrides of usual length, not for a pasted file."""

DEFAULT_CASE_SHARE = 0.2
"""Default downside and upside: the month-1 token price 20% lower and higher."""
UTILIZATION_CUT = 0.10
"""Default low-utilization case: the share of hours serving 10 points lower (0.70 to 0.60)."""
DECLINE_RISE = 0.10
"""Default faster-decline case: the token price's annual decline 10 points higher (30% to 40%)."""
RATE_RISE = 0.02
"""Default rate-up case: the loan's rate 200 basis points higher (a floating rate's rise, or a
refinancing at a dearer rate), the loan held."""

DEFAULT_CASES: tuple[tuple[str, str], ...] = (
    ("downside", f"the month-1 token price {DEFAULT_CASE_SHARE:.0%} lower"),
    ("upside", f"the month-1 token price {DEFAULT_CASE_SHARE:.0%} higher"),
    ("low-utilization", f"the share of hours serving {UTILIZATION_CUT * 100:g} points lower"),
    ("faster-decline", f"the token price's annual decline {DECLINE_RISE * 100:g} points higher"),
    ("rate-up", f"the loan's rate {RATE_RISE * 1e4:g} basis points higher"),
    ("combined", "the downside's price with the lower utilization and the faster decline"),
)
"""The default cases (`default_cases`), in the memo's order, with what each changes: `econ memo
--help` lists them from here (`default_cases_text`)."""


def default_cases_text() -> str:
    """The default cases as `econ memo --help` names them: "downside (the month-1 token price
    20% lower), upside (...), ..."."""
    return ", ".join(f"{name} ({words})" for name, words in DEFAULT_CASES)


PERCENTILES = (10, 50, 90)
"""Monte Carlo cases: these percentiles of each metric over the draws (each metric apart)."""
MAX_DRAWS = 100_000


class MemoError(InputError):
    """A memo that cannot be made or read as asked."""


@dataclass
class Memo:
    """Everything a memo shows; `stamp` is what it embeds."""

    scenario: Scenario
    scenario_toml: str
    summary: dict
    monthly: pd.DataFrame
    cases: dict[str, dict]
    tornado: dict
    figures: dict[str, float | None]
    stamp: dict = field(default_factory=dict)
    breach: dict | None = None
    """`econ.analysis.committed.covenant_breach_price` of the base case holding its loan, where
    it has debt."""


def case_too_large(name: str, overrides: Sequence[str]) -> str | None:
    """What makes a case larger than a memo takes (MAX_CASE_OVERRIDES, MAX_CASE_CHARS), or None.
    The text names the case and the limit; the caller says where the case came from."""
    if len(overrides) > MAX_CASE_OVERRIDES:
        return (
            f"case {shortened(name)} has {len(overrides):,} overrides; a case holds at most "
            f"{MAX_CASE_OVERRIDES} (econ.memo.build.MAX_CASE_OVERRIDES): expected fewer "
            "overrides, or a scenario file that sets them"
        )
    return case_too_long(name, len(name) + 1 + len(";".join(overrides)))


def case_too_long(name: str, chars: int) -> str | None:
    """The problem with a case `chars` characters long, or None within MAX_CASE_CHARS."""
    if chars <= MAX_CASE_CHARS:
        return None
    return (
        f"case {shortened(name)} is {chars:,} characters long; a case is at most "
        f"{MAX_CASE_CHARS:,} (econ.memo.build.MAX_CASE_CHARS): expected shorter overrides, "
        "or a scenario file that sets them"
    )


CASE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
"""A case's name, a column head of the cases table and a figure key's first part: ASCII letters,
digits, - and _, not starting with - or _ (no letter of another script that reads like a Latin
one, as a Cyrillic а in "bаse" does; no leading - that a spreadsheet reads as a formula)."""


def case_name_problem(name: str) -> str | None:
    """What makes `name` no case name `--case` takes (CASE_NAME; "base" in any case of letters,
    the scenario itself), or None. `econ verify` holds a stamp's case names to the same rule."""
    if name.lower() == "base":
        return f"{shortened(name)} is the scenario itself (base); name the case otherwise"
    if not CASE_NAME.fullmatch(name):
        return (
            f"case name {shortened(name)}: expected ASCII letters, digits, - and _, starting "
            "with a letter or digit, e.g. downside"
        )
    return None


def repeated_path(overrides: Sequence[str]) -> str | None:
    """The first field path a case's overrides give twice (of which only the last would count),
    or None."""
    seen = set()
    for item in overrides:
        path = item.partition("=")[0].strip()
        if path in seen:
            return path
        seen.add(path)
    return None


def parse_case(text: str, given: Sequence[str] = ()) -> tuple[str, list[str]]:
    """`NAME=PATH=VALUE[;PATH=VALUE...]` into (name, ["PATH=VALUE", ...]); `given`: the names of
    the cases before it, which it may not repeat."""
    name, _, rest = text.partition("=")
    name = name.strip()
    if len(text) > MAX_CASE_CHARS:  # (before splitting it: a pasted file is not a case)
        raise MemoError(f"--case: {case_too_long(name, len(text))}")
    items = [item.strip() for item in rest.split(";") if item.strip()]
    if not name or not items:
        raise MemoError(
            f"--case {shortened(text)}: expected NAME=PATH=VALUE[;PATH=VALUE...], e.g. "
            "downside=market.price_usd_per_mtok=0.25;utilization.share=0.6"
        )
    problem = case_name_problem(name)
    if problem:
        raise MemoError(f"--case {shortened(text)}: {problem}")
    problem = case_too_large(name, items)
    if problem:
        raise MemoError(f"--case: {problem}")
    if name in given:
        raise MemoError(f"--case {name} is given twice; expected each case name once")
    for item in items:
        path, value = parse_override(item, file=f"--case {name}")
        check_path(path, file=f"--case {name}")
    path = repeated_path(items)
    if path:
        raise MemoError(f"--case {name}: {path} is given twice; expected each path once in a case")
    return name, items


def parse_cases(texts: Sequence[str]) -> dict[str, list[str]] | None:
    """The cases of `--case` options by name (parse_case, each name once), None without any."""
    if not texts:
        return None
    cases: dict[str, list[str]] = {}
    for text in texts:
        name, items = parse_case(text, cases)
        cases[name] = items
    return cases


CURVE_FIELDS = ("throughput.measured", "throughput.slo", "vintages")
"""Fields a case may not change in a scenario that reads a measured curve file: the memo embeds
the figures the engine takes from the curve (econ.embedding.embeddable), not the file, so such a
change would reach nothing the memo computes (a vintage's throughput is set in `vintages`)."""


def case_on_curve(name: str, overrides: Sequence[str], scenario: Scenario) -> str | None:
    """The problem with a case changing a field of the measured curve `scenario` reads from a
    file (CURVE_FIELDS), or None. `scenario` is the one given, before embedding."""
    from econ.embedding import curve_names

    for item in overrides:
        path = item.partition("=")[0].strip()
        field = next((f for f in CURVE_FIELDS if path == f or path.startswith(f + ".")), None)
        if field is None:
            continue
        files = ", ".join(curve_names(scenario))
        return (
            f"case {shortened(name)}: {shortened(path)}: this scenario reads its throughput "
            f"from the measured curve file {files}, and a memo embeds the figures the curve "
            "gives at the scenario's SLO, not the file, so a case cannot change "
            f"{field}; expected a case on throughput.tokens_per_s_per_gpu (the figure the curve "
            "gives at the other SLO: econ project on a copy of the scenario file with that "
            "SLO prints it), or a memo of that copy"
        )
    return None


def default_cases(scenario: Scenario) -> dict[str, list[str]]:
    """The cases a credit committee asks for (DEFAULT_CASES), those the scenario can take:
    `downside` and `upside` (the month-1 token price DEFAULT_CASE_SHARE lower and higher),
    `low-utilization` (UTILIZATION_CUT), `faster-decline` (DECLINE_RISE), `rate-up` (RATE_RISE
    on financing.debt_share's loan) and `combined` (the downside's price with the lower
    utilization and the faster decline). Each holds the base case's loan where the base sizes
    one."""
    market, fin = scenario.market, scenario.financing
    elsewhere = scenario.set_elsewhere()  # (a measured throughput, tranches, a history)
    price = market.price_usd_per_mtok
    cases: dict[str, list[str]] = {}
    combined = []
    if price and "market.price_usd_per_mtok" not in elsewhere:
        low = round(price * (1 - DEFAULT_CASE_SHARE), 12)
        high = round(price * (1 + DEFAULT_CASE_SHARE), 12)
        cases["downside"] = [f"market.price_usd_per_mtok={low!r}"]
        cases["upside"] = [f"market.price_usd_per_mtok={high!r}"]
        combined += cases["downside"]
    share = scenario.utilization.share
    if share >= 2 * UTILIZATION_CUT and "utilization.share" not in elsewhere:
        cases["low-utilization"] = [f"utilization.share={round(share - UTILIZATION_CUT, 12)!r}"]
        combined += cases["low-utilization"]
    decline = market.price_decline_annual
    follows_decline = price and not market.price_table and market.price_fall_factor_annual is None
    if (
        follows_decline
        and decline + DECLINE_RISE < 1
        and "market.price_decline_annual" not in elsewhere
    ):
        cases["faster-decline"] = [
            f"market.price_decline_annual={round(decline + DECLINE_RISE, 12)!r}"
        ]
        combined += cases["faster-decline"]
    if (fin.debt_share or fin.debt_usd) and not fin.tranches:
        rate = round(fin.debt_rate_annual + RATE_RISE, 12)
        cases["rate-up"] = [f"financing.debt_rate_annual={rate!r}"]
    if len(combined) > 1:
        cases["combined"] = combined
    # in DEFAULT_CASES' order, and only those it names: `econ memo --help` lists them from there
    return {name: cases[name] for name, _ in DEFAULT_CASES if name in cases}


LOAN_RATE_PATH = "financing.debt_rate_annual"
"""The one input path that sets a loan's interest rate (debt_share's or debt_usd's loan): a
tranche's rate is set in `financing.tranches`, a list a case replaces whole."""
TRANCHE_RATE_FIELDS = frozenset({"rate_annual", "floating", "coupon_annual"})
"""A debt tranche's interest terms: a fixed rate, a floating rate (index curve, spread, floor) or
a coupon."""


def loan_rates(scenario: Scenario) -> dict[str, object]:
    """The interest terms of each loan of `scenario`, by loan: debt_share's (or debt_usd's) loan
    as `financing`, with the rate and how it is quoted; each debt tranche by its name."""
    fin = scenario.financing
    rates: dict[str, object] = {}
    if fin.debt_share or fin.debt_usd:
        rates["financing"] = (fin.debt_rate_annual, fin.debt_rate_quote)
    for tranche in fin.tranches:
        if tranche.type != "equity":
            rates[tranche.name] = tranche.model_dump(include=TRANCHE_RATE_FIELDS)
    return rates


def moves_rate(base: Scenario, case: Scenario) -> bool:
    """Whether `case` changes the interest rate of a loan `base` has too: the project NPV counts
    the tax saved on interest, so such a case needs the memo's note (a case that adds or drops a
    loan changes the debt, not a rate)."""
    given, changed = loan_rates(base), loan_rates(case)
    return any(name in changed and changed[name] != terms for name, terms in given.items())


def rate_input(path: str, scenario: Scenario) -> bool:
    """Whether the input `path` (a tornado input, a Monte Carlo distribution) sets the rate of a
    loan `scenario` has."""
    return path == LOAN_RATE_PATH and "financing" in loan_rates(scenario)


def with_overrides(
    scenario_toml: str,
    overrides: Sequence[str],
    name: str,
    loan: Mapping | None = None,
    origin: str | None = None,
) -> Scenario:
    """A case: the scenario with its overrides, holding the base case's loan where `loan`
    (`econ.analysis.committed.committed_loan`) is given and the case sets no loan terms. A file
    the case names obeys the rule of `--set` (`case_files`); `origin` is the scenario's file
    (`Scenario.source_file`: a path, library:NAME@V, or None)."""
    from econ.analysis.committed import hold, holds

    where = f"case {name}"
    base = parse_toml(scenario_toml, where)
    data = apply_overrides(base, overrides, file=where)
    case_files(base, data, origin, where)
    if loan is not None and holds(overrides):
        data = hold(data, loan)
    return validate_dict(data, file=where)


def without_sale(
    scenario: Scenario, scenario_toml: str, loan: Mapping | None = None
) -> Scenario | None:
    """The scenario with its GPUs sold for nothing when retired or when the projection ends
    (`depreciation.sale_value_share` 0 in it and in each vintage, its resale table dropped), the
    base case's loan held where `loan` is given, as the cases hold it: its NPV is the memo's
    without the residual value, the tax on the sale's gain over its tax basis included. A site's
    build-out is still sold at its book value (no input prices it). None where an impairment
    test reads the resale table: dropping it would change the impairment too."""
    from econ.analysis.committed import hold

    if scenario.market.has_resale and any(
        "resale_value"
        in (
            row.depreciation.impairment.trigger_price,
            row.depreciation.impairment.fair_value_source,
        )
        for row in scenario.expand()
    ):
        return None
    where = "the projection without the sale"
    data = parse_toml(scenario_toml, where)
    market = dict(data.get("market", {}))
    for name in ("resale_value_table", "resale_series", "resale_series_gpu"):
        market.pop(name, None)
    data["market"] = market
    data["depreciation"] = {**data.get("depreciation", {}), "sale_value_share": 0.0}
    data["vintages"] = [
        {**v, "depreciation": {**v["depreciation"], "sale_value_share": 0.0}}
        if "depreciation" in v
        else v
        for v in data.get("vintages", [])
    ]
    if loan is not None:
        data = hold(data, loan)
    return validate_dict(data, file=where)


def case_files(base: Mapping, data: dict, origin: str | None, where: str) -> None:
    """Resolve in `data` each file path a case sets (`throughput.measured.curve`, also in a
    vintage) as `--set` resolves it (econ.scenario.paths): against the folder of the scenario's
    file, staying inside it or a folder of `econ --allow-paths`; or refuse it, unopened, for a
    scenario with no folder (a library scenario, one not read from a file). A path the case
    leaves as the scenario has it was checked when the scenario was read."""
    given = {path: table[key] for path, table, key in path_fields(base)}
    for path, table, key in path_fields(data):
        value = table[key]
        if not isinstance(value, str) or not value or value == given.get(path):
            continue
        if origin is None or origin.startswith("library:"):
            what = "a library scenario" if origin else "a scenario not read from a file"
            raise MemoError(
                f"{where}: {path} = {shortened(value)}: {what} has no folder on disk, so a case "
                "cannot name a file; expected throughput.measured.catalog_id or catalog_query "
                "(MLPerf rows shipped with econ) or a fixed throughput.tokens_per_s_per_gpu"
            )
        folder = Path(origin).parent
        roots = [folder, *allowed_folders()]
        table[key] = resolve_inside(value, folder, roots, file=where, field=path)


def tornado_paths(scenario: Scenario) -> list[str]:
    from econ.analysis.validation import field_specs

    specs = field_specs()
    paths = []
    for path in TORNADO_CANDIDATES:
        if path not in specs or specs[path].kind == "choice":
            continue
        node: object = scenario
        for part in path.split("."):
            node = getattr(node, part, None)
        if isinstance(node, int | float) and not isinstance(node, bool) and node:
            paths.append(path)
    financing = scenario.financing
    if not (financing.debt_share or financing.debt_usd):
        # debt_share's loan rate moves nothing where there is no such loan
        paths = [p for p in paths if p != "financing.debt_rate_annual"]
    elsewhere = scenario.set_elsewhere()  # (the tranches' own rates, a measured throughput)
    return [p for p in paths if p not in elsewhere]


def parse_montecarlo(n: int | None, dists: Sequence[str], seed: int) -> dict | None:
    """The Monte Carlo spec of `--montecarlo N --dist PATH=DIST ... --seed S` (None without)."""
    if n is None and not dists:
        return None
    if n is None or not dists:
        raise MemoError("Monte Carlo cases need both --montecarlo N and at least one --dist")
    if isinstance(n, bool) or not isinstance(n, int) or not 10 <= n <= MAX_DRAWS:
        raise MemoError(f"--montecarlo {n!r}: expected a whole number of draws, 10 to {MAX_DRAWS}")
    from econ.analysis.montecarlo import parse_dists

    # Refuse a bad path or distribution before any work, and empirical(FILE): a memo is
    # recomputed from its stamp alone (`econ verify`, on another machine), which holds no file.
    parse_dists(dists, files=False)
    distributions = {}
    for item in dists:
        path, text = (part.strip() for part in item.split("=", 1))
        distributions[path] = text
    # By path, as the plan draws them (MonteCarloPlan) and the stamp's JSON keeps its keys: the
    # memo lists them in the order `econ verify` reads them back.
    return {"n": n, "seed": seed, "distributions": dict(sorted(distributions.items()))}


PAYBACK = "payback_months"
"""A figure a draw lacks for one reason, that it never pays back within the horizon: such a draw
pays back after the horizon, later than any draw that does, and counts as such."""


def draw_percentiles(values, key: str) -> tuple[list[float | None], int]:
    """The PERCENTILES of one figure over all the draws, and how many draws have it (finite).

    A figure undefined in a draw (an IRR where the cash flows never turn, often a losing draw)
    cannot be ranked: percentiles over the draws that have it would leave the others out and
    flatter the figure, so where fewer than half the draws have it none is given (None), and
    the memo says how many draws it has (render). The payback (PAYBACK) of a draw that never pays
    back is beyond the horizon and is ranked last: a percentile that falls among those draws (or
    between the last that pays back and them) is None, "beyond the horizon"."""
    import numpy as np

    finite = np.isfinite(values)
    count = int(finite.sum())
    if key == PAYBACK:
        latest = float(values[finite].max()) if count else 0.0
        # (the largest float: an interpolation toward it is past every payback in the horizon)
        ranked = np.where(finite, values, np.finfo(float).max)
        shown = [float(np.quantile(ranked, q / 100)) for q in PERCENTILES]
        return [v if v <= latest and count else None for v in shown], count
    if 2 * count < len(values) or not count:
        return [None] * len(PERCENTILES), count
    return [float(np.quantile(values[finite], q / 100)) for q in PERCENTILES], count


def montecarlo_cases(
    scenario: Scenario, spec: Mapping, hold: bool = False, summary: Mapping | None = None
) -> dict[str, dict]:
    """P10, P50 and P90 of each case metric over the draws of `spec` (see parse_montecarlo), as
    draw_percentiles takes them; each case holds the number of draws and, by metric, how many of
    them have it (`defined`), which the memo says beside a metric some draws lack.

    Where `hold` (the base case sizes a loan the other cases hold) and the draws leave the loan's
    terms alone, every draw holds that loan too (`econ.analysis.committed.hold_job`), so the
    percentiles of the DSCR are the proposed loan's cover, as in the named cases. `summary` is
    the base case's: its construction loan adds a metric (`case_rows`)."""
    from econ.analysis.committed import loan_terms
    from econ.analysis.montecarlo import montecarlo

    keys = [key for key, *_ in case_rows(summary)]  # (`summary`: the base case's)
    holds = hold and not loan_terms(spec["distributions"])
    result = montecarlo(
        scenario,
        dict(spec["distributions"]),
        int(spec["n"]),
        seed=int(spec["seed"]),
        outputs=keys,
        keep_rows=True,
        hold_debt=holds,
    )
    n = len(result.rows)
    percentiles: dict[str, list[float | None]] = {}
    defined: dict[str, int] = {}
    for key in keys:
        percentiles[key], defined[key] = draw_percentiles(
            result.rows[key].to_numpy(dtype=float), key
        )
    cases = {}
    for i, q in enumerate(PERCENTILES):
        cases[f"p{q}"] = {
            "overrides": [],
            "summary": {key: percentiles[key][i] for key in keys},
            "montecarlo": True,
            "draws": n,
            "defined": defined,
            "holds_loan": holds,
            "moves_rate": any(rate_input(path, scenario) for path in spec["distributions"]),
        }
    return cases


def _raises_debt(scenario: Scenario) -> bool:
    """Whether the scenario raises debt: a loan it sizes (econ.analysis.committed.sizes_loan) may
    be sized to 0 USD (a maximum LTV the book value leaves no room for), which a projection
    tells; a loan given as a share or in USD is raised."""
    from econ.analysis.committed import sizes_loan
    from econ.engine import project

    if not sizes_loan(scenario.financing):
        return True
    summary = project([scenario], monthly=False).summary_records()[0]["summary"]
    return bool(summary.get("debt_usd"))


def _summary(scenario: Scenario) -> tuple[dict, pd.DataFrame]:
    from econ.engine import project

    projection = project([scenario])
    return projection.summary_records()[0]["summary"], projection.monthly.reset_index()


def _number(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def run_tornado(scenario: Scenario, paths: Sequence[str], swing_pct: float) -> dict:
    from econ.analysis.sensitivity import BOOK_SALE, TIED, UNMOVED, percent_ranges, tornado

    if not paths:
        return {"output": TORNADO_OUTPUT, "swing_pct": swing_pct, "rows": [], "notes": []}
    table = tornado(scenario, percent_ranges(scenario, list(paths), swing_pct), (TORNADO_OUTPUT,))
    rows = [
        {
            "input": r["input"],
            "low": _number(r["low"]),
            "high": _number(r["high"]),
            "output_low": _number(r["output_low"]),
            "output_high": _number(r["output_high"]),
            "output_base": _number(r["output_base"]),
            "swing": _number(r["swing"]),
            # what an end rests on (a sale at book value), as the CLI notes; a tie is said
            # once, in the run's notes
            "note": "; ".join(n for n in r["note"].split("; ") if n and n != TIED),
        }
        for r in table.table.to_dict("records")
    ]
    # the run's notes on what every end rests on (a base that sells at book value) or an input
    # without effect; a tie shows in the chart's equal bars
    notes = [
        n for n in table.run.metadata.get("notes", []) if BOOK_SALE in n or UNMOVED in n
    ]  # fmt: skip
    return {"output": TORNADO_OUTPUT, "swing_pct": swing_pct, "rows": rows, "notes": notes}


def _figure(summary: Mapping, key: str):
    """A summary's figure as the memo shows it: the months in covenant breach are n/a (None)
    where no covenant is tested (no debt, or neither a DSCR nor an LLCR floor: both headrooms
    null), not a 0 that reads as a covenant met."""
    if key == "covenant_breach_months" and (
        not summary.get("debt_usd")
        or (summary.get("dscr_headroom") is None and summary.get("llcr_headroom") is None)
    ):
        return None
    return summary.get(key)


def figures_of(summary: Mapping, cases: Mapping[str, dict], tornado: Mapping) -> dict:
    """Every figure the memo shows, by figure key: `base.<metric>`, `<case>.<metric>`,
    `tornado.<path>.low|high`."""
    figures = {f"base.{key}": _figure(summary, key) for key, *_ in shown(summary=summary)}
    for name, case in cases.items():
        for key, *_ in case_rows(summary):
            figures[f"{name}.{key}"] = _figure(case["summary"], key)
    for row in tornado["rows"]:
        figures[f"tornado.{row['input']}.low"] = row["output_low"]
        figures[f"tornado.{row['input']}.high"] = row["output_high"]
    return figures


def compute(
    scenario: Scenario,
    cases: Mapping[str, Sequence[str]],
    tornado_inputs: Sequence[str] | None = None,
    swing_pct: float = TORNADO_SWING_PCT,
    montecarlo: Mapping | None = None,
) -> Memo:
    """Project the scenario and its cases (named overrides, and P10/P50/P90 of a Monte Carlo
    when `montecarlo` is given) and run the tornado (same inputs, same results)."""
    from econ.analysis.committed import committed_loan, covenant_breach_price, holds

    text = dumps(scenario)
    summary, monthly = _summary(scenario)
    loan = committed_loan(scenario, summary, monthly["debt_balance_usd"].to_numpy())
    breach = None
    if summary.get("debt_usd"):
        breach = covenant_breach_price(scenario, loan) | {"holds_loan": loan is not None}
    case_results = {}
    for name, overrides in cases.items():
        case = with_overrides(text, overrides, name, loan, origin=scenario.source_file)
        case_summary, _ = _summary(case)
        case_results[name] = {
            "overrides": list(overrides),
            "summary": case_summary,
            "holds_loan": loan is not None and holds(overrides),
            "moves_rate": moves_rate(scenario, case),
        }
    if montecarlo is not None:
        case_results.update(
            montecarlo_cases(scenario, montecarlo, hold=loan is not None, summary=summary)
        )
    paths = tornado_paths(scenario) if tornado_inputs is None else list(tornado_inputs)
    if tornado_inputs is None and not summary.get("debt_usd"):
        # a loan sized to 0 USD (a maximum LTV the book value leaves no room for): no rate moves
        paths = [p for p in paths if p != LOAN_RATE_PATH]
    # Each end holds the base case's loan as the cases and the price cushion do.
    held = scenario
    if loan is not None:
        held = with_overrides(text, [], scenario.name, loan, origin=scenario.source_file)
    tornado = run_tornado(held, paths, swing_pct) | {"holds_loan": loan is not None}
    figures = figures_of(summary, case_results, tornado)
    if breach is not None:
        figures[f"base.{BREACH_PRICE[0]}"] = breach["price_usd_per_mtok"]
    if monthly["disposal_usd"].sum() > 0.5:  # (the ask's residual value row: render)
        unsold = without_sale(scenario, text, loan)
        if unsold is not None:
            figures[f"base.{RESIDUAL_NPV[0]}"] = _figure(_summary(unsold)[0], "npv_usd")
    return Memo(scenario, text, summary, monthly, case_results, tornado, figures, breach=breach)


def build_memo(
    scenario: Scenario,
    cases: Mapping[str, Sequence[str]] | None = None,
    created: str | None = None,
    montecarlo: Mapping | None = None,
) -> Memo:
    """The memo of a scenario, stamped: cases default to `default_cases` (none besides the
    Monte Carlo percentiles when `montecarlo` is given). A scenario that reads a measured curve
    file is the memo's as econ.embedding.embeddable gives it (the curve's figures, named by file
    name and SHA-256): the memo names no folder of this machine and `econ verify` recomputes it."""
    from econ.embedding import embeddable

    given, scenario = scenario, embeddable(scenario)
    if cases is not None and scenario is not given:
        for name, overrides in cases.items():
            problem = case_on_curve(name, overrides, given)
            if problem:
                raise MemoError(problem)
    if cases is None:
        cases = {} if montecarlo is not None else default_cases(scenario)
        if "rate-up" in cases and not _raises_debt(scenario):
            del cases["rate-up"]  # (no loan to pay the higher rate)
    if len(cases) > MAX_CASES:
        raise MemoError(
            f"{len(cases)} cases (--case); a memo holds at most {MAX_CASES}, each a column of "
            "its cases table: expected fewer cases, or several memos"
        )
    for name, overrides in cases.items():
        problem = case_too_large(name, overrides)
        if problem:
            raise MemoError(problem)
    memo = compute(scenario, cases, montecarlo=montecarlo)
    memo.stamp = {
        "kind": "econ-memo",
        "memo_format": MEMO_FORMAT,
        "econ_version": __version__,
        "econ_code": code_fingerprint(),
        "scenario_name": scenario.name,
        "scenario_sha256": scenario_sha256(scenario),
        "catalogs": dict(sorted(catalog_versions().items())),
        "created_utc": created or creation_time(),
        "scenario_toml": memo.scenario_toml,
        "summary": memo.summary,
        # (the stamp's keys are sorted: `position` keeps the cases in the memo's order)
        "cases": {
            name: {"overrides": c["overrides"], "position": i}
            for i, (name, c) in enumerate(memo.cases.items())
            if not c.get("montecarlo")
        },
        "montecarlo": None if montecarlo is None else dict(montecarlo),
        "tornado": {
            "output": memo.tornado["output"],
            "swing_pct": memo.tornado["swing_pct"],
            "inputs": [row["input"] for row in memo.tornado["rows"]],
        },
        "figures": memo.figures,
    }
    return memo
