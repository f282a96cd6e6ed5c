"""`econ memo` (the investment memo of a scenario, HTML or PDF) and `econ verify` (recompute a
memo's figures from the scenario it embeds). Thin: econ.memo builds, renders and checks.

    econ memo models/scenarios/deepseek-r1-gb200-nvl72.toml --out memo.pdf
    econ memo library:deepseek-r1-gb200-nvl72@3 --out memo.html \\
        --case "downside=market.price_usd_per_mtok=0.25;utilization.share=0.6"
    econ verify memo.pdf
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from econ.commands import (
    SCENARIO_HELP,
    LazyHelp,
    Number,
    add_overrides,
    lazy,
    say_warnings,
    scenario_path,
)
from econ.errors import InputError

build = lazy("econ.memo.build")

EXIT_OK, EXIT_DIFFERS = 0, 1
SUFFIXES = (".html", ".htm", ".pdf")


def register(subparsers) -> None:
    m = subparsers.add_parser(
        "memo",
        help="write the investment memo of a scenario (HTML or PDF)",
        description="One to six pages for a credit or investment committee: the ask, headline "
        "figures, cases, DSCR chart, waterfalls, tornado, sources, warnings and a stamp that "
        "`econ verify` recomputes.",
    )
    m.add_argument("file", metavar="SCENARIO", help=SCENARIO_HELP)
    m.add_argument("--out", required=True, metavar="FILE", help="memo.html or memo.pdf")
    m.add_argument(
        "--case",
        dest="cases",
        action="append",
        default=[],
        metavar="NAME=PATH=VALUE[;PATH=VALUE]",
        help=LazyHelp(
            "a named case by overrides of the scenario, e.g. "
            "'downside=market.price_usd_per_mtok=0.25;utilization.share=0.6'; repeat for several "
            "(default, those the scenario can take: %(default_cases)s)",
            default_cases=lambda: build.default_cases_text(),
        ),
    )
    add_overrides(m, "override a field of the scenario itself (TOML value)")
    m.add_argument(
        "--montecarlo",
        # bounds left to parse_montecarlo (10 to MAX_DRAWS): one refusal, saying the real range
        type=Number(int, what="a number of draws"),
        metavar="N",
        help="add P10/P50/P90 cases: percentiles of each figure over N Monte Carlo draws of the "
        "--dist distributions (instead of the default cases)",
    )
    m.add_argument(
        "--dist",
        dest="dists",
        action="append",
        default=[],
        metavar="PATH=DIST",
        help="a distribution for --montecarlo, e.g. market.price_decline_annual=triangular(0.15,"
        "0.3,0.5); repeat for several",
    )
    m.add_argument(
        "--seed",
        type=Number(int, what="a seed", ge=0),
        default=0,
        help="root seed of the Monte Carlo (default 0)",
    )
    m.add_argument("--force", action="store_true", help="overwrite an existing --out file")
    m.set_defaults(run=run_memo)

    v = subparsers.add_parser(
        "verify",
        help="recompute a memo's or workbook's figures from the scenario it embeds",
        description="Exit 0 when every figure shown and stamped reproduces with this econ, 1 "
        "listing each one that differs, 3 for a file that is not an econ memo or workbook.",
    )
    v.add_argument(
        "file",
        metavar="FILE",
        help="a memo written by econ memo (.html or .pdf) or an econ workbook (.xlsx)",
    )
    v.set_defaults(run=run_verify)


def _check_out(out: str, force: bool) -> Path:
    from econ.files import check_targets

    path = Path(out)
    if path.suffix.lower() not in SUFFIXES:
        raise InputError(f"--out {out or repr(out)}: expected a file ending in .html or .pdf")
    return check_targets([path], overwrite=force)[0]


def run_memo(args: argparse.Namespace) -> int:
    from econ.files import atomic_write
    from econ.memo import render
    from econ.memo.build import build_memo, parse_cases, parse_montecarlo
    from econ.scenario import load_scenario

    path = _check_out(args.out, args.force)  # before the work: a bad --out fails at once
    as_pdf = path.suffix.lower() == ".pdf"
    if as_pdf and render.chromium() is None:
        raise render.RenderError(render.NO_CHROMIUM)
    cases = parse_cases(args.cases)
    montecarlo = parse_montecarlo(args.montecarlo, args.dists, args.seed)
    scenario = load_scenario(scenario_path(args.file), args.overrides)
    memo = build_memo(scenario, cases, montecarlo=montecarlo)
    text = render.html(memo)
    data = render.pdf(text, memo.stamp) if as_pdf else text
    atomic_write(path, data, overwrite=args.force)
    print(f"wrote {path}", file=sys.stderr)
    say_warnings(f"warning: {warning}" for warning in memo.summary.get("warnings", []))
    return EXIT_OK


def run_verify(args: argparse.Namespace) -> int:
    from econ.memo.verify import verify

    report = verify(args.file)
    say_warnings(f"note: {note}" for note in report.notes)
    if report.ok:
        print(f"{report.file}: ok, {report.checked} figures reproduce ({report.kind})")
        return EXIT_OK
    print(
        f"{report.file}: {len(report.differences)} of {report.checked} figures differ "
        f"({report.kind})"
    )
    for line in report.differences:
        print(f"  {line}")
    return EXIT_DIFFERS
