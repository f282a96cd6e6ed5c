"""`econ market list|show|import|resale`: GPU-hour rental index series (econ.rental_index) and
used-GPU resale value series (econ.resale_index).

    econ market list                                   series, gpu, terms, dates, points, publisher
    econ market show CCIR/CRI-T2IF --gpu H100          the points and the fitted decay
    econ market import my_quotes.csv --out checked.csv validate an index file, write a clean copy
    econ market resale                                 resale value series (econ.resale_index)
    econ market resale GLRI/ResidualGuide --gpu H100   its points, sources and curve by age

`--index FILE` reads another index file instead of the shipped models/market/rental_index.csv
(for `resale`: models/market/resale_index.csv). Exit codes: 0 success, 3 an index file or a
series choice that cannot be used (the message names the file, the line and the column).
"""

from __future__ import annotations

import sys

from econ.commands import Number, add_format
from econ.text import clipped, printable


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "market",
        help="GPU-hour rental index series (list, show with the fitted decay, import) and "
        "used-GPU resale value series (resale)",
    )
    sub = p.add_subparsers(dest="market_command", metavar="ACTION", required=True)

    ls = sub.add_parser("list", help="the series of the index: gpu, terms, dates, points")
    _index_option(ls)
    add_format(ls, ("table", "json"))
    ls.set_defaults(run=cmd_list)

    sh = sub.add_parser("show", help="one series' points and its fitted decay with error band")
    sh.add_argument("series", metavar="SERIES", help="series name PUBLISHER/INDEX")
    sh.add_argument("--gpu", help="GPU (default: the series' only GPU, else required)")
    sh.add_argument(
        "--term",
        type=Number(int, what="a term", ge=0),
        help="term in months, 0 = on-demand (default: the only term)",
    )
    _index_option(sh)
    add_format(sh, ("table", "json"))
    sh.set_defaults(run=cmd_show)

    im = sub.add_parser(
        "import", help="validate an index file (date, series, gpu, term_months, ...) and copy it"
    )
    im.add_argument("file", metavar="FILE.csv", help="index CSV file")
    im.add_argument("--out", metavar="PATH", help="write the validated copy here")
    im.add_argument("--force", action="store_true", help="overwrite an existing --out file")
    im.set_defaults(run=cmd_import)

    rs = sub.add_parser(
        "resale",
        help="used-GPU resale value series (share of the new price by age): list, or one curve",
    )
    rs.add_argument(
        "series", metavar="SERIES", nargs="?", help="series name PUBLISHER/NAME (default: list)"
    )
    rs.add_argument("--gpu", help="GPU (default: the series' only GPU, else required)")
    rs.add_argument(
        "--band",
        type=Number(what="a band position", ge=-1, le=1),
        default=0.0,
        help="band position -1 (low) .. 0 (mid) .. 1 (high)",
    )
    rs.add_argument(
        "--index",
        metavar="FILE",
        help="resale index file (default: the shipped models/market/resale_index.csv)",
    )
    add_format(rs, ("table", "json"))
    rs.set_defaults(run=cmd_resale)


def _index_option(parser) -> None:
    parser.add_argument(
        "--index",
        metavar="FILE",
        help="rental index file (default: the shipped models/market/rental_index.csv)",
    )


def _summaries(points) -> list[dict]:
    from econ.rental_index import curves

    out: dict[tuple[str, str], dict] = {}
    for (series, gpu, term), curve in curves(points).items():
        row = out.setdefault(
            (series, gpu),
            {
                "series": series,
                "publisher": curve.publisher,
                "gpu": gpu,
                "terms_months": [],
                "first_date": curve.points[0].date.isoformat(),
                "last_date": curve.points[-1].date.isoformat(),
                "points": 0,
            },
        )
        row["terms_months"].append(term)
        row["first_date"] = min(row["first_date"], curve.points[0].date.isoformat())
        row["last_date"] = max(row["last_date"], curve.points[-1].date.isoformat())
        row["points"] += len(curve.points)
    return list(out.values())


def _table(header: list[str], rows: list[list[str]]) -> str:
    """Left-aligned columns, a rule under the header; each cell one printable line (index files
    refuse control characters when read; this is the net)."""
    header, *rows = [[printable(c, line=True) for c in row] for row in [header, *rows]]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(header, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


def cmd_list(args) -> int:
    from econ import strict_json
    from econ.rental_index import load_catalog

    rows = _summaries(load_catalog(args.index))
    if args.format == "json":
        print(strict_json.dumps({"series": rows}, indent=2))
        return 0
    print(
        _table(
            ["series", "gpu", "terms [months]", "first", "last", "points", "publisher"],
            [
                [
                    r["series"],
                    r["gpu"],
                    ",".join(str(t) for t in r["terms_months"]),
                    r["first_date"],
                    r["last_date"],
                    str(r["points"]),
                    r["publisher"],
                ]
                for r in rows
            ],
        )
    )
    print(
        "\nterm 0 = on-demand; series of different publishers are never averaged (docs/market.md)"
    )
    return 0


def _pick(values: list, given, what: str, series: str):
    from econ.rental_index import RentalIndexError

    if given is not None:
        return given
    if len(values) == 1:
        return values[0]
    raise RentalIndexError(
        f"rental series {series} has several {what}s ({', '.join(str(v) for v in values)}); "
        f"expected --{what} to choose one"
    )


def cmd_show(args) -> int:
    from econ import strict_json
    from econ.commands import say_warnings
    from econ.labels import duration
    from econ.rental_index import (
        BAND_Z,
        RentalIndexError,
        curves,
        find_curve,
        fit_decay,
        load_catalog,
        price_warnings,
    )

    points = load_catalog(args.index)
    found = curves(points)
    gpus = sorted({k[1] for k in found if k[0] == args.series})
    gpu = _pick(gpus, args.gpu.upper() if args.gpu else None, "gpu", args.series) if gpus else ""
    terms = sorted(k[2] for k in found if k[0] == args.series and k[1] == gpu)
    term = _pick(terms, args.term, "term", args.series) if terms else 0
    curve = find_curve(points, args.series, gpu or (args.gpu or ""), term)
    if args.index:
        say_warnings(f"warning: {w}" for w in price_warnings(curve.points, str(args.index)))
    try:
        fit = fit_decay(curve.years(curve.dates), curve.prices)
        why_not = None
    except RentalIndexError as exc:
        fit, why_not = None, str(exc)
    payload = {
        "series": curve.series,
        "publisher": curve.publisher,
        "gpu": curve.gpu,
        "term_months": curve.term_months,
        "points": [
            {
                "date": p.date.isoformat(),
                "usd_per_gpu_hour": p.usd_per_gpu_hour,
                "source": p.source,
            }
            for p in curve.points
        ],
        "fit": None
        if fit is None
        else {
            "model": fit.model,
            "origin_date": curve.points[0].date.isoformat(),
            "floor_usd_per_gpu_hour": fit.floor_usd_per_gpu_hour,
            "amplitude_usd_per_gpu_hour": fit.amplitude_usd_per_gpu_hour,
            "rate_annual": fit.rate_annual,
            "decline_annual": fit.decline_annual,
            "sigma_log": fit.sigma_log,
            "trend_annual": fit.trend_annual,
            "trend_sigma_log": fit.trend_sigma_log,
            "decline_held_at_zero": fit.decline_held_at_zero,
            "band_factors": fit.band_factors(),
            "montecarlo_dist": "market.rental_series_band_sigmas=normal(0, 1, low=-4, high=4)",
        },
        "fit_unavailable": why_not,
    }
    if args.format == "json":
        print(strict_json.dumps(payload, indent=2))
        return 0
    kind = "on-demand" if curve.term_months == 0 else f"{curve.term_months}-month contracts"
    print(printable(f"{curve.series} ({curve.publisher}), {curve.gpu}, {kind}", line=True))
    print(
        _table(
            ["date", "USD/GPU-hour", "source"],
            [[p.date.isoformat(), f"{p.usd_per_gpu_hour:.4f}", p.source] for p in curve.points],
        )
    )
    if fit is None:
        print(
            f"\nno decay fitted: {why_not}; a scenario using this series extends it with "
            "market.rental_decline_annual and rental_floor_usd_per_gpu_hour"
        )
        return 0
    band = fit.band_factors()
    print(f"\nfit (t in years since {curve.points[0].date}): {fit.description()}")
    if fit.decline_held_at_zero:
        print(
            "rising:          the decline is held at 0: a rising series is extended flat at its "
            "last price, never upwards (market.rental_decline_annual sets a decline instead)"
        )
    elif fit.trend_rate_annual > 0:
        print(
            f"rising:          the prices rise {fit.trend_text()}, though the floor fit above falls"
        )
    print(
        f"error band beyond the last point (5th-95th percentile, z = {BAND_Z:.3f}): "
        f"x{band['low']:.4f} to x{band['high']:.4f} of the extrapolated price"
    )
    span = float(curve.years([curve.points[-1].date])[0])
    print(
        f"caution:         the points span {duration(span)}; carried "
        f"further than that past {curve.points[-1].date}, the band leaves out the uncertainty "
        "of the decline rate (scenario warnings say when)"
    )
    print("Monte Carlo:     --dist market.rental_series_band_sigmas=normal(0, 1, low=-4, high=4)")
    return 0


def cmd_resale(args) -> int:
    from econ import strict_json
    from econ.commands import say_warnings
    from econ.resale_index import (
        ResaleIndexError,
        curve_frame,
        curves,
        date_warnings,
        find_curve,
        load_catalog,
    )

    points = load_catalog(args.index)
    if args.index:
        say_warnings(f"warning: {w}" for w in date_warnings(points, str(args.index)))
    found = curves(points)
    if args.series is None:
        rows = [
            {
                "series": c.series,
                "publisher": c.publisher,
                "gpu": c.gpu,
                "ages_months": [p.age_months for p in c.points],
                "band": c.has_band,
                "as_of": max(p.as_of for p in c.points).isoformat(),
            }
            for c in found.values()
        ]
        if args.format == "json":
            print(strict_json.dumps({"series": rows}, indent=2))
            return 0
        print(
            _table(
                ["series", "gpu", "ages [months]", "low-high band", "as of", "publisher"],
                [
                    [
                        r["series"],
                        r["gpu"],
                        ",".join(str(a) for a in r["ages_months"]),
                        "yes" if r["band"] else "no",
                        r["as_of"],
                        r["publisher"],
                    ]
                    for r in rows
                ],
            )
        )
        print(
            "\nshares of the new hardware price; series of different publishers are never "
            "averaged (docs/market.md)"
        )
        return 0
    if not -1.0 <= args.band <= 1.0 or args.band != args.band:
        raise ResaleIndexError(f"--band is {args.band}; expected a band position from -1 to 1")
    gpus = sorted(k[1] for k in found if k[0] == args.series)
    gpu = args.gpu.upper() if args.gpu else (gpus[0] if len(gpus) == 1 else None)
    if gpu is None and len(gpus) > 1:
        raise ResaleIndexError(
            f"resale series {args.series} has several gpus ({', '.join(gpus)}); expected --gpu "
            "to choose one"
        )
    curve = find_curve(points, args.series, gpu or "")
    frame = curve_frame(curve, band=args.band)
    yearly = frame[frame.age_months % 12 == 0]
    warnings = []
    if args.band != 0 and not curve.has_band:
        warnings.append(
            f"--band {args.band:g} has no effect: {curve.series} ({curve.gpu}) publishes no "
            "low-high range, so the curve at every band is its mid share"
        )
    payload = {
        "series": curve.series,
        "publisher": curve.publisher,
        "gpu": curve.gpu,
        "points": [
            {
                "age_months": p.age_months,
                "share": p.share,
                "share_low": p.share_low,
                "share_high": p.share_high,
                "as_of": p.as_of.isoformat(),
                "source": p.source,
            }
            for p in curve.points
        ],
        "band": args.band,
        "curve": yearly.to_dict(orient="records"),
        "warnings": warnings,
    }
    if args.format == "json":
        print(strict_json.dumps(payload, indent=2))
        return 0
    title = f"{curve.series} ({curve.publisher}), {curve.gpu}"
    print(printable(f"{title}: resale value as a share of the new price", line=True))
    fmt = lambda v: "" if v is None else f"{v:.3f}"  # noqa: E731
    print(
        _table(
            ["age [months]", "share", "low", "high", "as of", "source"],
            [
                [
                    str(p.age_months),
                    fmt(p.share),
                    fmt(p.share_low),
                    fmt(p.share_high),
                    p.as_of.isoformat(),
                    p.source,
                ]
                for p in curve.points
            ],
        )
    )
    start = (
        f"from the file's {curve.points[0].share:g} at age 0"
        if curve.points[0].age_months == 0
        else "from 1.0 (the new price) at age 0"
    )
    print(
        f"\ncurve by year of age (straight line between points {start}, flat after the last; "
        f"band {args.band:g}{': no effect, the series publishes no range' if warnings else ''}):"
    )
    print(
        _table(
            ["age [months]", "share", "low", "high", "at band"],
            [
                [str(int(r.age_months)), *(f"{v:.4f}" for v in r[1:])]
                for r in yearly.itertuples(index=False)
            ],
        )
    )
    print(
        "scenario: market.resale_series = "
        f'"{curve.series}"; Monte Carlo: --dist "market.resale_band=uniform(-1, 1)"'
    )
    return 0


def cmd_import(args) -> int:
    from econ.commands import say_warnings
    from econ.files import FORCE_ADVICE, atomic_write
    from econ.labels import counted
    from econ.rental_index import index_csv, price_warnings, read_index

    points = read_index(args.file)
    rows = _summaries(points)
    written = None
    # written first: "ok" is said only of an import that is saved where asked; an empty --out
    # is refused there, not taken as no --out
    if args.out is not None:
        written = atomic_write(
            args.out, index_csv(points).encode(), overwrite=args.force, advice=FORCE_ADVICE
        )
    say_warnings(f"warning: {w}" for w in price_warnings(points, str(args.file)))
    print(
        printable(
            f"{args.file}: ok, {counted(len(points), 'point')} in "
            f"{counted(len(rows), 'series x gpu', 'series x gpu')}"
        )
    )
    for r in rows:
        terms = ",".join(str(t) for t in r["terms_months"])
        line = (
            f"  {clipped(r['series'])} {clipped(r['gpu'])} terms {terms} months: "
            f"{counted(r['points'], 'point')} "
            f"{r['first_date']} to {r['last_date']}"
        )
        print(printable(line))
    if written:
        print(f"wrote {written}", file=sys.stderr)
    return 0
