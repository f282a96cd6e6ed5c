"""The investment memo (econ memo) and its verification (econ verify), in-process.

The memo's figures, read back from the HTML (data-key/data-value and the shown text) and from the
PDF's text and attached stamp, must equal `econ project --format json`; a memo whose shown figure,
stamp or scenario was edited must fail `econ verify` (exit 1, naming the figure); bad input exits 3.
"""

from __future__ import annotations

import html as html_module
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from econ.cli import main
from econ.memo.figures import HEADLINES, format_figure, format_of, shown
from econ.memo.render import STAMP_FILE, attach_stamp, cash_waterfall
from econ.memo.verify import _Figures

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
HAS_CHROMIUM = shutil.which("chromium") is not None


def _project_summary(capsys, *extra) -> dict:
    assert main(["project", str(SEED), *extra, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)["scenarios"][0]["summary"]


@pytest.fixture(scope="module")
def memo_html(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("memo") / "memo.html"
    assert main(["memo", str(SEED), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def memo_pdf(tmp_path_factory) -> Path:
    if not HAS_CHROMIUM:
        pytest.skip("no chromium for the PDF")
    out = tmp_path_factory.mktemp("memo") / "memo.pdf"
    assert main(["memo", str(SEED), "--out", str(out)]) == 0
    return out


def _parsed(path: Path) -> _Figures:
    parser = _Figures()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def _verify(capsys, path: Path) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", str(path)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_html_figures_equal_project_json(memo_html, capsys):
    summary = _project_summary(capsys)
    figures = {key: (value, text) for key, value, text in _parsed(memo_html).figures}
    base = {k.removeprefix("base."): v for k, v in figures.items() if k.startswith("base.")}
    cushion_value, cushion_text = base.pop("covenant_breach_price_usd_per_mtok")
    assert set(base) == {key for key, *_ in shown()}
    assert {"lcot_usd_per_mtok", "npv_usd", "irr_project_annual", "min_dscr"} <= set(base)
    # The headline figures a committee reads (issue 16's keys): MIRR beside IRR, cost per
    # GPU-hour, the debt as sized and the covenant headroom.
    headline = {
        "mirr_project_annual",
        "mirr_equity_annual",
        "profitability_index",
        "cost_usd_per_gpu_hour",
        "debt_usd",
        "dscr_headroom",
    }
    assert headline <= set(base)
    assert "debt_usd_total" not in base  # the same figure as debt_usd, shown once
    for key, (value, text) in base.items():
        expected = summary[key]
        assert (None if value == "" else float(value)) == expected, key
        assert text == format_figure(format_of(f"base.{key}"), expected), key
    stamp = json.loads(_parsed(memo_html).stamp_text)
    assert stamp["summary"] == summary
    # The ask's price cushion: the seed's committed loan breaches below this month-1 price.
    from econ import load_scenario, project
    from econ.analysis.committed import committed_loan, covenant_breach_price

    seed = load_scenario(SEED)
    base = project([seed])
    loan = committed_loan(seed, summary, base.lines["debt_balance_usd"][0])
    expected = covenant_breach_price(seed, loan)["price_usd_per_mtok"]
    assert float(cushion_value) == expected
    # shown rounded up: the price named is never itself in breach
    assert float(cushion_text) >= expected and float(cushion_text) - expected < 1e-4
    text = memo_html.read_text(encoding="utf-8")
    below = 1 - expected / seed.market.price_usd_per_mtok
    assert (
        f"a covenant is breached, {below:.1%} under the base case&#39;s 0.3261 (the loan held"
        in text
    )


def test_the_breach_price_is_shown_rounded_up_and_other_figures_rounded():
    from econ.memo.figures import figure_text

    key = "base.covenant_breach_price_usd_per_mtok"
    # the B200 hall's breach price: 0.1442 would name a price in breach
    assert figure_text(key, 0.144232) == "0.1443"
    assert figure_text(key, 0.1443) == "0.1443"  # on the grid already: unchanged
    assert figure_text(key, 0.144300001) == "0.1444"
    # (within 1e-9 relative of the grid: the root search's precision, not a higher price)
    assert figure_text(key, 0.1443 * (1 + 1e-12)) == "0.1443"
    assert figure_text(key, None) == "n/a"
    assert figure_text("base.lcot_usd_per_mtok", 0.144232) == "0.1442"
    assert figure_text("downside.npv_usd", -163262.4) == "-163,262"


def test_the_tornado_says_what_an_end_rests_on_as_the_cli_does(memo_html):
    """A life of 6.6 years raised the seed's NPV through a sale at book value at the horizon,
    which `econ sensitivity` notes and the memo did not; a tie is said once, not per row."""
    from econ import load_scenario
    from econ.analysis.sensitivity import percent_ranges, tornado

    text = memo_html.read_text(encoding="utf-8")
    seed = load_scenario(SEED)
    paths = ["depreciation.life_years", "market.price_usd_per_mtok"]
    cli = tornado(seed, percent_ranges(seed, paths, 10.0), ("npv_usd",)).table
    [note] = cli.loc[cli.input == "depreciation.life_years", "note"]
    assert note == "at high, the remaining book value is assumed sold at book value"
    assert f'<p class="note">Depreciation › Life [years]: {note}.</p>' in text
    assert "tied" not in text and "share rank" not in text  # the chart's equal bars say so


def test_html_shows_cases_tornado_sources_warnings(memo_html, capsys):
    text = memo_html.read_text(encoding="utf-8")
    # the downside: the price 20% lower, holding the base case's loan (test below)
    from econ import load_scenario, project
    from econ.analysis.committed import committed_loan
    from econ.memo.build import with_overrides
    from econ.scenario import dumps

    seed = load_scenario(SEED)
    base = project(seed)
    loan = committed_loan(seed, base.summary.iloc[0], base.monthly["debt_balance_usd"].to_numpy())
    held = with_overrides(dumps(seed), [f"market.price_usd_per_mtok={0.3261 * 0.8!r}"], "d", loan)
    figures = {key: value for key, value, _ in _parsed(memo_html).figures}
    assert float(figures["downside.npv_usd"]) == project(held).summary["npv_usd"].iloc[0]
    assert any(k.startswith("tornado.market.price_usd_per_mtok.") for k in figures)
    assert text.count("<svg") >= 4  # DSCR, cost waterfall, cash waterfall, tornado
    assert "covenant floor 1.20x" in text  # the DSCR chart's rule
    assert "CoreWeave GPU useful life 6 years" in text  # a [sources] entry
    # every warning in the Warnings section, in readable words (the app's: summary keys by
    # their labels), but the line saying no covenant is breached, which is beside its figure
    from econ.labels import readable_warning
    from econ.memo.render import NO_BREACH

    shown = text.split('<section id="warnings">')[1].split("</section>")[0]
    shown = html_module.unescape(shown)
    warnings = _project_summary(capsys)["warnings"]
    assert NO_BREACH in warnings and "covenant is breached" not in shown
    for warning in warnings:
        if warning != NO_BREACH:
            assert readable_warning(warning) in shown, warning
    assert "npv_usd" not in shown and "irr_project_annual" not in shown
    assert "first_breach_month" not in shown


def test_memo_verifies(memo_html, capsys):
    code, out = _verify(capsys, memo_html)
    assert code == 0, out
    assert "ok" in out


def test_cases_keep_the_order_given_and_verify(tmp_path, capsys):
    # The stamp's keys are sorted; the cases are shown, and recomputed, in the order given.
    out = tmp_path / "ordered.html"
    args = ["memo", str(SEED), "--out", str(out), "--case", "zeta=utilization.share=0.5"]
    assert main([*args, "--case", "alpha=utilization.share=0.6"]) == 0
    section = out.read_text(encoding="utf-8").split('<section id="cases">')[1]
    header = re.search(r"<th[^>]*>Figure</th>(.*?)</tr>", section, re.S)
    names = re.findall(r'<th class="num">([^<]+)</th>', header.group(1))
    assert names == ["base", "zeta", "alpha"]
    code, text = _verify(capsys, out)
    assert code == 0, text


def test_a_residual_value_no_input_gives_is_listed_among_the_key_assumptions():
    # Found by a credit review: the refresh case's NPV rests on selling the H200s at book value
    # in month 18 (32.6M USD) and the GB300s at the horizon, and the memo did not say so.
    from econ import load_scenario
    from econ.memo.build import compute
    from econ.memo.render import _assumptions

    refresh = load_scenario(ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml")
    memo = compute(refresh, {}, tornado_inputs=[])
    row = _assumptions(memo)[-1]
    sold = memo.monthly["disposal_usd"].sum()
    assert row["label"] == "Residual value" and row["value"] == f"{sold:,.0f} USD"
    assert sold > 32_614_400 and row["source"].startswith("none given")
    # a sale value given, or a resale curve: the residual has an input, no row
    valued = load_scenario(
        ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml",
        {"depreciation.sale_value_share": 0.4},
    )
    memo = compute(valued, {}, tornado_inputs=[])
    assert all(r["label"] != "Residual value" for r in _assumptions(memo))
    # the seed is fully depreciated when its horizon ends: nothing is sold, no row
    memo = compute(load_scenario(SEED), {}, tornado_inputs=[])
    assert all(r["label"] != "Residual value" for r in _assumptions(memo))


def test_the_ask_states_each_tranche_s_terms_and_a_loan_s_draws():
    # Found by a credit review: the capital stack's ask gave names and shares only, and the
    # refresh case's read as one loan drawn upfront.
    from econ import load_scenario
    from econ.memo.build import compute
    from econ.memo.render import _ask

    scenarios = ROOT / "models" / "scenarios"
    stack = dict(
        _ask(compute(load_scenario(scenarios / "deepseek-r1-gb200-nvl72-capital-stack.toml"), {},
                     tornado_inputs=[]))
    )["Financing"]  # fmt: skip
    assert "ddtl (delayed draw term loan, 55% of capex, SOFR (its forward curve) + 2.25%" in stack
    assert "level payment, matures in month 60)" in stack
    assert (
        "senior_notes (senior notes, 20% of capex, 9.25% semi-annual coupon, bullet, matures in "
        "month 96, after the projection's month 72: the balance left then is repaid in month 72 "
        "from the equity cash flow and left out of the DSCR)"
    ) in stack
    assert "equity (equity, the rest of the capex)" in stack
    memo = compute(
        load_scenario(scenarios / "h200-fleet-gb300-refresh.toml"), {}, tornado_inputs=[]
    )
    loan = dict(_ask(memo))["Financing"]
    assert loan.endswith("; drawn with the capex: 7,657,191 USD in month 0 and 5,454,603 USD in "
                         "month 18")  # fmt: skip
    assert f"{memo.summary['debt_usd']:,.0f} USD" == "13,111,794 USD"  # the two draws' sum
    seed = dict(_ask(compute(load_scenario(SEED), {}, tornado_inputs=[])))["Financing"]
    assert "drawn with the capex" not in seed  # one draw, in month 0


def test_default_cases_are_a_credit_committee_s_where_the_scenario_takes_them():
    from econ import load_scenario
    from econ.memo.build import default_cases

    seed = load_scenario(SEED)  # price 0.3261, decline 30%, utilization 0.70, loan at 10.75%
    cases = default_cases(seed)
    assert cases == {
        "downside": ["market.price_usd_per_mtok=0.26088"],
        "upside": ["market.price_usd_per_mtok=0.39132"],
        "low-utilization": ["utilization.share=0.6"],
        "faster-decline": ["market.price_decline_annual=0.4"],
        "rate-up": ["financing.debt_rate_annual=0.1275"],
        "combined": [
            "market.price_usd_per_mtok=0.26088",
            "utilization.share=0.6",
            "market.price_decline_annual=0.4",
        ],
    }
    stack = load_scenario(SEED.with_name("deepseek-r1-gb200-nvl72-capital-stack.toml"))
    assert "rate-up" not in default_cases(stack)  # the tranches carry their own rates
    equity = load_scenario(SEED, {"financing.debt_share": 0.0})
    assert "rate-up" not in default_cases(equity)  # no loan to reprice
    idle = load_scenario(SEED, {"utilization.share": 0.15})
    assert "low-utilization" not in default_cases(idle)  # 10 points would leave 0.05
    steep = load_scenario(SEED, {"market.price_decline_annual": 0.95})
    assert "faster-decline" not in default_cases(steep)  # a decline of 100% or more is none


def _edited(memo_html: Path, tmp_path: Path, edit) -> Path:
    target = tmp_path / "edited.html"
    text = memo_html.read_text(encoding="utf-8")
    changed = edit(text)
    assert changed != text
    target.write_text(changed, encoding="utf-8")
    return target


def test_edited_shown_figure_fails(memo_html, tmp_path, capsys):
    def edit(text):
        return re.sub(
            r'(data-key="base.npv_usd" data-value="[^"]*">)([^<]*)<',
            lambda m: m.group(1) + "9,999,999<",
            text,
        )

    code, out = _verify(capsys, _edited(memo_html, tmp_path, edit))
    assert code == 1
    assert "base.npv_usd: shown as '9,999,999'" in out


def test_edited_shown_value_fails(memo_html, tmp_path, capsys):
    def edit(text):
        return re.sub(
            r'data-key="base.min_dscr" data-value="[^"]*"',
            'data-key="base.min_dscr" data-value="1.5"',
            text,
        )

    code, out = _verify(capsys, _edited(memo_html, tmp_path, edit))
    assert code == 1
    assert "base.min_dscr: shown value 1.5" in out


@pytest.mark.parametrize(
    "pattern, forged, shown",
    [
        # an input in Key assumptions, a figure of the ask, and a source: none has a data-key
        (r">0\.3261<", ">0.9999<", "0.9999"),  # market.price_usd_per_mtok
        (r"(debt at )([0-9.]+%)", r"\g<1>7.75%", "7.75%"),
        (r"S-1 / 10-K 2025", "audited", "audited"),
    ],
)
def test_edited_text_without_a_data_key_fails(memo_html, tmp_path, capsys, pattern, forged, shown):
    code, out = _verify(
        capsys, _edited(memo_html, tmp_path, lambda t: re.sub(pattern, forged, t, count=1))
    )
    assert code == 1, out
    assert f"shown '{shown}'" in out, out


def _edit_stamp(text: str, change) -> str:
    start = text.index('id="econ-stamp">') + len('id="econ-stamp">')
    end = text.index("</script>", start)
    stamp = json.loads(text[start:end])
    change(stamp)
    return text[:start] + json.dumps(stamp).replace("<", "\\u003c") + text[end:]


def test_edited_stamp_fails(memo_html, tmp_path, capsys):
    def change(stamp):
        stamp["summary"]["lcot_usd_per_mtok"] *= 0.9

    target = _edited(memo_html, tmp_path, lambda t: _edit_stamp(t, change))
    code, out = _verify(capsys, target)
    assert code == 1
    assert "summary.lcot_usd_per_mtok: stamped" in out


def test_changed_scenario_fails(memo_html, tmp_path, capsys):
    def change(stamp):
        stamp["scenario_toml"] = stamp["scenario_toml"].replace(
            "price_usd_per_kwh = 0.0806", "price_usd_per_kwh = 0.09"
        )

    code, out = _verify(capsys, _edited(memo_html, tmp_path, lambda t: _edit_stamp(t, change)))
    assert code == 1
    assert "scenario_sha256: stamped" in out and "(the scenario was changed)" in out
    assert "base.lcot_usd_per_mtok" in out  # the shown figure no longer reproduces


def test_other_econ_version_fails(memo_html, tmp_path, capsys):
    def change(stamp):
        stamp["econ_version"] = "0.0.1"

    code, out = _verify(capsys, _edited(memo_html, tmp_path, lambda t: _edit_stamp(t, change)))
    assert code == 1
    assert "econ_version: made by econ 0.0.1" in out


def test_scenario_that_no_longer_validates_exits_3(memo_html, tmp_path, capsys):
    def change(stamp):
        stamp["scenario_toml"] = stamp["scenario_toml"].replace("share = 0.7", "share = 7.0", 1)

    code, out = _verify(capsys, _edited(memo_html, tmp_path, lambda t: _edit_stamp(t, change)))
    assert code == 3
    assert "no longer validates" in out and "Traceback" not in out


@pytest.mark.parametrize(
    "content",
    [
        b"not a memo\n",
        b"<html><body>hello</body></html>",
        b"\xff\xfe\x00binary",
        b'<script type="application/json" id="econ-stamp">{"kind": "other"}</script>',
        b'<script type="application/json" id="econ-stamp">{not json</script>',
    ],
)
def test_not_a_memo_exits_3(tmp_path, capsys, content):
    path = tmp_path / "file.html"
    path.write_bytes(content)
    code, out = _verify(capsys, path)
    assert code == 3
    assert str(path) in out and "Traceback" not in out


def test_workbook_and_missing_file_exit_3(tmp_path, capsys):
    code, out = _verify(capsys, tmp_path / "absent.html")
    assert code == 3 and "no such file" in out
    import zipfile

    book = tmp_path / "book.xlsx"
    with zipfile.ZipFile(book, "w") as archive:
        archive.writestr("x", "y")
    code, out = _verify(capsys, book)
    assert code == 3 and "workbook" in out


def test_bad_out_and_cases_exit_3(memo_html, tmp_path, capsys):
    cases = [
        ["--out", str(tmp_path / "absent" / "memo.html")],
        ["--out", str(memo_html)],  # exists, no --force
        ["--out", str(tmp_path / "memo.txt")],
        ["--out", str(tmp_path / "m.html"), "--case", "downside"],
        ["--out", str(tmp_path / "m.html"), "--case", "down=no.such.path=1"],
        ["--out", str(tmp_path / "m.html"), "--case", "base=market.price_usd_per_mtok=1"],
    ]
    for extra in cases:
        capsys.readouterr()
        assert main(["memo", str(SEED), *extra]) == 3, extra
        assert "Traceback" not in capsys.readouterr().err
    assert main(["memo", str(tmp_path / "absent.toml"), "--out", str(tmp_path / "m.html")]) == 3
    assert not (tmp_path / "m.html").exists()


def test_more_cases_than_a_memo_holds_exit_3(tmp_path, capsys):
    from econ.memo.build import MAX_CASES

    out = tmp_path / "memo.html"
    cases = []
    for i in range(MAX_CASES + 1):
        cases += ["--case", f"case{i}=utilization.share=0.6"]
    capsys.readouterr()
    assert main(["memo", str(SEED), "--out", str(out), *cases]) == 3
    err = capsys.readouterr().err
    assert f"{MAX_CASES + 1} cases (--case); a memo holds at most {MAX_CASES}" in err, err
    assert "Traceback" not in err and not out.exists()


@pytest.mark.parametrize(
    "case, message",
    [
        ("big=" + ";".join(["utilization.share=0.6"] * 40), "'big' has 40 overrides"),
        ("long=description=" + "x" * 10_000, "'long' is 10,017 characters long"),
    ],
)
def test_a_case_larger_than_a_memo_takes_exits_3(tmp_path, capsys, case, message):
    # found by review: 5,000 overrides in one --case were projected and all printed in the memo
    out = tmp_path / "memo.html"
    capsys.readouterr()
    assert main(["memo", str(SEED), "--out", str(out), "--case", case]) == 3
    err = capsys.readouterr().err
    assert f"--case: case {message}; a case" in err and "at most" in err, err
    assert len(err) < 1000 and "Traceback" not in err and not out.exists()


def test_a_case_at_the_limits_is_taken():
    from econ.analysis.validation import field_specs
    from econ.memo.build import MAX_CASE_CHARS, MAX_CASE_OVERRIDES, MemoError, parse_case

    # (each path once: a path given twice in a case is refused)
    items = [f"{path}=1" for path in list(field_specs())[:MAX_CASE_OVERRIDES]]
    assert parse_case("full=" + ";".join(items)) == ("full", items)
    with pytest.raises(MemoError, match=f"at most {MAX_CASE_OVERRIDES} "):
        parse_case("over=" + ";".join([*items, "utilization.share=0.5"]))
    text = "d=description=" + "x" * (MAX_CASE_CHARS - len("d=description="))
    assert parse_case(text)[0] == "d"
    with pytest.raises(MemoError, match="characters long"):
        parse_case(text + "x")


def test_stamp_escapes_script_end_and_named_cases(tmp_path, capsys):
    out = tmp_path / "memo.html"
    args = [
        "memo",
        str(SEED),
        "--out",
        str(out),
        "--set",
        "description=a </script><b>x</b>",
        "--case",
        "stress=market.price_usd_per_mtok=0.2;utilization.share=0.5",
    ]
    assert main(args) == 0
    text = out.read_text(encoding="utf-8")
    assert text.count("</script>") == 1  # only the stamp's own end
    stamp = json.loads(_parsed(out).stamp_text)
    assert "a </script><b>x</b>" in stamp["scenario_toml"]
    assert list(stamp["cases"]) == ["stress"]
    stress = _project_summary(
        capsys, "--set", "market.price_usd_per_mtok=0.2", "--set", "utilization.share=0.5"
    )
    assert stamp["figures"]["stress.npv_usd"] == stress["npv_usd"]
    code, report = _verify(capsys, out)
    assert code == 0, report


@pytest.mark.skipif(not HAS_CHROMIUM, reason="no chromium")
def test_pdf_figures_equal_project_json(memo_pdf, capsys):
    from pypdf import PdfReader

    summary = _project_summary(capsys)
    reader = PdfReader(str(memo_pdf))
    assert 1 <= len(reader.pages) <= 6  # (Key assumptions: every input that moves a figure)
    text = f" {' '.join(chr(10).join(p.extract_text() for p in reader.pages).split())} "
    for key, *_ in shown():  # (a figure may be words: "55.10 trillion")
        assert f" {format_figure(format_of(f'base.{key}'), summary[key])} " in text, key
    stamp = json.loads(reader.attachments[STAMP_FILE][0])
    assert stamp["summary"] == summary
    code, out = _verify(capsys, memo_pdf)
    assert code == 0, out


@pytest.mark.skipif(not HAS_CHROMIUM, reason="no chromium")
def test_pdf_with_edited_stamp_fails(memo_pdf, tmp_path, capsys):
    from pypdf import PdfReader, PdfWriter

    reader = PdfReader(str(memo_pdf))
    stamp = json.loads(reader.attachments[STAMP_FILE][0])
    stamp["figures"]["base.npv_usd"] = 1.0
    writer = PdfWriter()
    for page in reader.pages:
        writer.add_page(page)
    plain = tmp_path / "plain.pdf"
    with plain.open("wb") as handle:
        writer.write(handle)
    edited = tmp_path / "edited.pdf"
    edited.write_bytes(attach_stamp(plain.read_bytes(), stamp))
    code, out = _verify(capsys, edited)
    assert code == 1
    assert "figures.base.npv_usd: stamped 1.0" in out


def test_rows_absent_from_the_engine_are_skipped():
    rows = (("no_such_metric", "x", "x", "{}"), ("npv_usd", "NPV", "USD", "{:,.0f}"))
    assert shown(rows) == (rows[1],)
    keys = [row[0] for row in HEADLINES]
    assert len(keys) == len(set(keys))


def test_cash_waterfall_ends_at_the_project_cash_flow():
    rng = np.random.default_rng(7)
    for _ in range(20):
        lines = {
            c: rng.uniform(0, 1e6, 13)
            for c in (
                "revenue_usd",
                "power_usd",
                "facility_usd",
                "opex_usd",
                "capex_usd",
                "tax_usd",
            )
        }
        lines["cash_flow_project_usd"] = rng.uniform(-1e6, 1e6, 13)
        parts = cash_waterfall(pd.DataFrame(lines))
        assert parts["value"].sum() * 1e6 == pytest.approx(
            lines["cash_flow_project_usd"].sum(), abs=1e-3
        )


MC_ARGS = [
    "--montecarlo",
    "64",
    "--seed",
    "11",
    "--dist",
    "market.price_decline_annual=triangular(0.15,0.3,0.5)",
    "--dist",
    "utilization.share=uniform(0.5,0.8)",
]


def test_montecarlo_cases_are_percentiles_of_the_draws(tmp_path, capsys):
    from econ.analysis.montecarlo import montecarlo
    from econ.scenario import load_scenario

    out = tmp_path / "mc.html"
    assert main(["memo", str(SEED), "--out", str(out), *MC_ARGS]) == 0
    stamp = json.loads(_parsed(out).stamp_text)
    assert stamp["cases"] == {} and stamp["montecarlo"]["n"] == 64
    rows = montecarlo(
        load_scenario(SEED),
        {
            "market.price_decline_annual": "triangular(0.15,0.3,0.5)",
            "utilization.share": "uniform(0.5,0.8)",
        },
        64,
        seed=11,
        outputs=("npv_usd", "min_dscr"),
        keep_rows=True,
        hold_debt=True,  # the draws hold the seed's sized loan, as the named cases do
    ).rows
    for q in (10, 50, 90):
        for key in ("npv_usd", "min_dscr"):
            assert stamp["figures"][f"p{q}.{key}"] == pytest.approx(
                np.quantile(rows[key], q / 100), rel=1e-12
            )
    assert stamp["figures"]["p10.min_dscr"] < 1.0  # sized again, every draw's would be >= 1.3
    assert "P10, p50 and p90 hold the base case&#39;s loan" in out.read_text(encoding="utf-8")
    npv = [stamp["figures"][f"p{q}.npv_usd"] for q in (10, 50, 90)]
    assert npv == sorted(npv)
    code, report = _verify(capsys, out)
    assert code == 0, report

    def change(stamp):
        stamp["montecarlo"]["seed"] = 12

    code, report = _verify(capsys, _edited(out, tmp_path, lambda t: _edit_stamp(t, change)))
    assert code == 1 and "p50.npv_usd" in report


def test_montecarlo_needs_draws_and_distributions(tmp_path, capsys):
    for extra in (
        ["--montecarlo", "100"],
        ["--dist", "utilization.share=uniform(0.5,0.8)"],
        ["--montecarlo", "3", "--dist", "utilization.share=uniform(0.5,0.8)"],
        ["--montecarlo", "100", "--dist", "no.such=uniform(0,1)"],
    ):
        assert main(["memo", str(SEED), "--out", str(tmp_path / "m.html"), *extra]) == 3, extra
        assert "Traceback" not in capsys.readouterr().err


def test_memo_charts_load_no_streamlit():
    """The memo draws the app's chart builders without importing Streamlit (econ.ui.charts)."""
    import subprocess
    import sys

    code = (
        "import sys, pandas as pd\n"
        "from econ.ui import charts\n"
        "from econ.memo import render\n"
        "chart = charts.waterfall({'a': 1.0, 'b': 2.0}, 'total', 'USD')\n"
        "svg = render._svg(chart)\n"
        "assert svg.startswith('<svg'), svg[:40]\n"
        "print('streamlit' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.strip() == "False"


def test_memo_of_a_library_version(tmp_path, capsys):
    from econ import provenance
    from econ.scenario import load_scenario

    library = f"sqlite:///{tmp_path / 'lib.db'}"
    assert main(["--library", library, "library", "save", str(SEED), "--message", "m"]) == 0
    out = tmp_path / "memo.html"
    name = "library:deepseek-r1-gb200-nvl72@1"
    assert (
        main(
            [
                "--library",
                library,
                "memo",
                name,
                "--out",
                str(out),
                "--case",
                "flat=market.price_decline_annual=0.0",
            ]
        )
        == 0
    )
    stamp = json.loads(_parsed(out).stamp_text)
    assert stamp["scenario_sha256"] == provenance.scenario_sha256(load_scenario(SEED))
    code, report = _verify(capsys, out)
    assert code == 0, report


def test_memo_of_an_all_equity_scenario(tmp_path, capsys):
    out = tmp_path / "equity.html"
    assert main(["memo", str(SEED), "--set", "financing.debt_share=0", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert 'id="no-debt"' in text and "all equity" in text
    figures = {key: value for key, value, _ in _parsed(out).figures}
    assert figures["base.min_dscr"] == ""  # undefined without debt service: n/a, not 0
    code, report = _verify(capsys, out)
    assert code == 0, report


def test_pdf_without_chromium_exits_3(tmp_path, capsys, monkeypatch):
    from econ.memo import render

    monkeypatch.setattr(render, "chromium", lambda: None)
    out = tmp_path / "memo.pdf"
    assert main(["memo", str(SEED), "--out", str(out)]) == 3
    assert "no Chromium found" in capsys.readouterr().err
    assert not out.exists()


def test_downside_and_upside_stress_the_loan_proposed_not_a_loan_sized_again():
    # Found by review: the downside re-sized the debt (1.86M against the base's 2.47M) and
    # showed a 1.30x minimum DSCR; the proposed loan's cover is far lower.
    from econ import load_scenario, project
    from econ.analysis.committed import committed_loan
    from econ.memo.build import compute, default_cases, with_overrides
    from econ.scenario import dumps

    seed = load_scenario(SEED)
    memo = compute(seed, default_cases(seed), tornado_inputs=[])
    base = project(seed).monthly
    loan = committed_loan(seed, memo.summary, base["debt_balance_usd"].to_numpy())
    for name in ("downside", "upside"):
        case = memo.cases[name]
        assert case["holds_loan"] and case["summary"]["debt_usd"] == memo.summary["debt_usd"]
        held = with_overrides(dumps(seed), case["overrides"], name, loan)
        m = project(held).monthly
        service = base["debt_service_usd"].to_numpy()
        np.testing.assert_allclose(m["debt_service_usd"], service, rtol=1e-9, atol=1e-6)
        owed = service > 0
        cover = ((m["ebitda_usd"] - m["tax_usd"]).to_numpy() / np.where(owed, service, 1))[owed]
        assert case["summary"]["min_dscr"] == pytest.approx(cover.min(), rel=1e-9)
    assert memo.cases["downside"]["summary"]["min_dscr"] < 1.0  # the loan is not covered
    # a case that sets the loan's own terms is sized as it says
    own = compute(seed, {"geared": ["financing.debt_share=0.5"]}, tornado_inputs=[])
    assert not own.cases["geared"]["holds_loan"]
    assert own.cases["geared"]["summary"]["debt_usd"] < memo.summary["debt_usd"]


def test_the_memo_says_its_cases_hold_the_base_loan(memo_html):
    text = re.sub(r"<[^>]+>", " ", memo_html.read_text()).replace("&#39;", "'")
    assert "hold the base case's loan: the debt sized there (2,474,920 USD)" in text


def test_an_irr_warning_stands_beside_the_irr_not_the_mirr_it_points_to():
    from econ.memo.render import _row_notes

    warnings = [
        "project cash flows change sign more than once (...): irr_project_annual is the only "
        "rate ...; judge it with npv_usd and mirr_project_annual",
        "mirr_equity_annual is null: no equity cash flow is positive",
    ]
    assert _row_notes(warnings, "irr_project_annual", raw=True) == warnings[:1]
    assert _row_notes(warnings, "mirr_project_annual", raw=True) == []
    assert _row_notes(warnings, "mirr_equity_annual", raw=True) == warnings[1:]
    # shown in the app's words (econ.labels.readable_warning), not the engine's keys
    assert _row_notes(warnings, "irr_project_annual") == [
        "Project cash flows change sign more than once (...): Project IRR is the only rate ...; "
        "judge it with NPV and Project MIRR"
    ]


def test_interest_added_to_the_loan_and_the_break_even_s_debt_stand_beside_their_figures():
    from econ import load_scenario, project
    from econ.memo.render import _row_notes

    # the 10 MW B200 hall: month 1's cash flow is negative, its service pays none of the
    # interest, the DSCR reads 1.30
    hall = load_scenario(ROOT / "models" / "scenarios" / "hall-10mw-hgx-b200-air.toml")
    result = project([hall])
    warnings = result.warnings[0]
    breakeven = float(result.metrics["breakeven_price_usd_per_mtok"][0])
    dscr_notes = _row_notes(warnings, "min_dscr")
    assert len(dscr_notes) == 1 and "is added to the loan rather than paid" in dscr_notes[0]
    assert (
        "the cash flow available for debt service is negative in some of those months"
        in (dscr_notes[0])
    )
    assert _row_notes(warnings, "breakeven_price_usd_per_mtok", breakeven) == [
        "Holds this debt as sized at the scenario's own token price (at another price the sizing "
        "would give another debt)"
    ]
    # a loan given as a share is not sized: no note on the break-even; beside the DSCR only
    # that the service is not covered in some months (review 26), no interest added to the loan
    fixed = load_scenario(
        SEED,
        {
            "financing.size_to_min_dscr": None,
            "financing.max_ltv": None,
            "financing.repayment": "level_payment",
        },
    )
    plain = project([fixed]).warnings[0]
    assert _row_notes(plain, "breakeven_price_usd_per_mtok") == []
    assert [note[:28] for note in _row_notes(plain, "min_dscr")] == ["Debt service not covered in "]


def test_the_memo_defines_the_lender_s_figures_from_the_scenario(memo_html):
    from types import SimpleNamespace

    from econ import load_scenario
    from econ.memo.render import _definitions

    text = re.sub(r"<[^>]+>", " ", memo_html.read_text()).replace("&#39;", "'")
    assert "How the lender's figures are defined" in text
    seed = load_scenario(SEED)
    terms = dict(_definitions(SimpleNamespace(scenario=seed, summary={"debt_usd": 2.0e6})))
    assert list(terms) == ["CFADS", "DSCR", "Covenant", "LLCR", "Project cash flow", "Not modelled"]
    assert "1.20x" in terms["Covenant"] and "trailing 12 months" in terms["Covenant"]
    assert "interest tax shield" in terms["Project cash flow"]
    quarterly = load_scenario(
        SEED,
        {
            "financing.covenants.test_months": 3,
            "financing.covenants.dscr_floor": 1.35,
            "financing.covenants.ltv_ceiling": 0.8,
        },
    )
    covenant = dict(_definitions(SimpleNamespace(scenario=quarterly, summary={"debt_usd": 1.0})))[
        "Covenant"
    ]
    assert "1.35x" in covenant and "trailing 3 months" in covenant and "at or below 80%" in covenant
    dated = load_scenario(SEED, {"financing.covenants.first_test_month": 12})
    covenant = dict(_definitions(SimpleNamespace(scenario=dated, summary={"debt_usd": 1.0})))[
        "Covenant"
    ]
    assert "The DSCR and LLCR tests start in month 12 (the facility's first test date)" in covenant
    assert "fewer in the first months" not in covenant  # the first test sees a full window
    none = load_scenario(SEED, {"financing.covenants.dscr_floor": None})
    covenant = dict(_definitions(SimpleNamespace(scenario=none, summary={"debt_usd": 1.0})))
    assert covenant["Covenant"].startswith("None: the scenario sets no covenant floor")
    # all equity: no lender, no definitions
    assert _definitions(SimpleNamespace(scenario=seed, summary={"debt_usd": 0.0})) == []


def test_the_tornado_leaves_out_a_loan_rate_no_loan_pays():
    from econ import load_scenario
    from econ.memo.build import tornado_paths

    stack = load_scenario(
        ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72-capital-stack.toml"
    )
    assert "financing.debt_rate_annual" not in tornado_paths(stack)
    assert "financing.debt_rate_annual" in tornado_paths(load_scenario(SEED))


def test_the_ask_states_a_loan_given_in_usd_as_drawn():
    """financing.debt_usd above the capex is drawn up to the capex: the ask says what is lent."""
    from econ import load_scenario
    from econ.memo.build import build_memo
    from econ.memo.render import _ask

    overrides = {
        "financing.size_to_min_dscr": "none",
        "financing.max_ltv": "none",
        "financing.repayment": "level_payment",
        "financing.debt_share": 0.0,
    }
    path = ROOT / "models" / "scenarios" / "llama2-70b-h200.toml"
    for asked in (3e6, 9e6):
        memo = build_memo(load_scenario(path, {**overrides, "financing.debt_usd": asked}), cases={})
        drawn = memo.summary["debt_usd"]
        assert drawn == min(asked, memo.summary["capex_usd_total"])
        assert dict(_ask(memo))["Financing"].startswith(
            f"{drawn:,.0f} USD of debt at 9.125% a year"
        )


@pytest.mark.skipif(not HAS_CHROMIUM, reason="no chromium")
def test_pdf_with_a_forged_figure_that_also_stands_elsewhere_fails(memo_html, tmp_path, capsys):
    """The headline NPV also stands in the cases table: a PDF printed with the headline forged
    still holds the true figure's text somewhere, and is caught where it stands."""
    from econ.memo import render

    text = memo_html.read_text(encoding="utf-8")
    parser = _Figures()
    parser.feed(text)
    stamp = json.loads(parser.stamp_text)
    true = next(t for key, _, t in parser.figures if key == "base.npv_usd")
    assert text.count(f">{true}<") >= 2  # the headline and the cases table
    forged = text.replace(f">{true}<", ">+1,234,567<", 1)
    path = tmp_path / "forged.pdf"
    path.write_bytes(render.pdf(forged, stamp))
    code, out = _verify(capsys, path)
    assert code == 1, out
    assert (
        "shown '+1,234,567'" in out and f"the memo recomputed from its stamp reads '{true}'" in out
    )


def test_pdf_without_chromium_says_what_it_did_not_check(memo_pdf, capsys, monkeypatch):
    from econ.memo import render

    monkeypatch.setattr(render, "chromium", lambda: None)
    code, out = _verify(capsys, memo_pdf)
    assert code == 0, out
    assert "note: Chromium is not installed" in out


# Found by security review: a PDF memo with a white FreeText annotation reading 9,999,999 over
# the NPV verified "ok" (only the page text is compared). A memo econ prints (Chromium) has no
# annotation, one content stream a page and no image (its charts are vectors): each is listed.


def _annotate(writer, page):
    from pypdf.annotations import FreeText

    box = FreeText(text="9,999,999", rect=(50, 700, 200, 720), background_color="ffffff")
    writer.add_annotation(page_number=0, annotation=box)


def _append_stream(writer, page):
    from pypdf.generic import ArrayObject, DecodedStreamObject, NameObject

    white_box = DecodedStreamObject()
    white_box.set_data(b"1 g 50 700 150 20 re f")
    contents = ArrayObject([page.raw_get("/Contents"), writer._add_object(white_box)])
    page[NameObject("/Contents")] = contents


def _draw_image(writer, page):
    from pypdf.generic import (
        DecodedStreamObject,
        DictionaryObject,
        NameObject,
        NumberObject,
    )

    image = DecodedStreamObject()
    image.set_data(b"\xff")
    image.update(
        {
            NameObject("/Type"): NameObject("/XObject"),
            NameObject("/Subtype"): NameObject("/Image"),
            NameObject("/Width"): NumberObject(1),
            NameObject("/Height"): NumberObject(1),
            NameObject("/ColorSpace"): NameObject("/DeviceGray"),
            NameObject("/BitsPerComponent"): NumberObject(8),
        }
    )
    resources = page["/Resources"]
    objects = resources.get("/XObject")
    if objects is None:
        objects = DictionaryObject()
        resources[NameObject("/XObject")] = objects
    objects.get_object()[NameObject("/Forged")] = writer._add_object(image)
    _edit_stream(page, lambda data: data + b"\nq 150 0 0 20 50 700 cm /Forged Do Q")


# Found by an outside review: a white box appended to page 1's own content stream (one stream, no
# annotation, no image) blanked out the ask, the LCOT, the NPV and the IRR, and verified "ok". A
# memo Chromium prints paints nothing over text it has drawn, and draws no text invisible.

WHITE_BOX = b"q 1 1 1 rg 0 0 2000 1800 re f Q"
"""The review's box: white, over the upper half of page 1 (Chromium's first cm scales it)."""


def _edit_stream(page, edit) -> None:
    from pypdf.generic import DecodedStreamObject

    drawn = DecodedStreamObject()
    drawn.set_data(edit(page.get_contents().get_data()))
    page.replace_contents(drawn)


def _box_over_text(writer, page):
    _edit_stream(page, lambda data: data + b"\n" + WHITE_BOX)


def _line_over_text(writer, page):  # a stroke as wide as the page's upper half is tall
    _edit_stream(page, lambda data: data + b"\nq 1 1 1 RG 1800 w 0 1800 m 2000 1800 l S Q")


def _box_under_text(writer, page):  # painted first, the text over it: as Chromium paints
    _edit_stream(page, lambda data: WHITE_BOX + b"\n" + data)


def _invisible_text(writer, page):
    _edit_stream(page, lambda data: b"3 Tr\n" + data)


@pytest.mark.skipif(not HAS_CHROMIUM, reason="no chromium")
@pytest.mark.parametrize(
    ("add", "message"),
    [
        (None, None),  # the memo re-saved by pypdf, nothing added: it verifies
        (_annotate, "page 1: an annotation (/FreeText) drawn over the page"),
        (_append_stream, "page 1: 2 content streams; a memo econ prints (Chromium) has one a page"),
        (_draw_image, "page 1: an image; a memo econ prints has none (its charts are vectors)"),
        (_box_over_text, "page 1: a filled shape painted over "),
        (_line_over_text, "page 1: a stroked line painted over "),
        (_box_under_text, None),
        (_invisible_text, "runs of text drawn invisible (text render mode 3 or 7"),
    ],
)
def test_pdf_with_a_page_addition_fails(memo_pdf, tmp_path, capsys, monkeypatch, add, message):
    from pypdf import PdfWriter

    from econ.memo import render

    writer = PdfWriter(clone_from=str(memo_pdf))
    if add is not None:
        add(writer, writer.pages[0])
    path = tmp_path / "added.pdf"
    with path.open("wb") as handle:
        writer.write(handle)
    # (the additions are read from the file's pages: the memo is not printed again to find them)
    monkeypatch.setattr(render, "chromium", lambda: None)
    code, out = _verify(capsys, path)
    if message is None:
        assert code == 0, out
    else:
        assert code == 1, out
        assert message in out, out


@pytest.mark.skipif(not HAS_CHROMIUM, reason="no chromium")
@pytest.mark.parametrize(
    "name", ["deepseek-r1-gb200-nvl72", "deepseek-r1-gb200-nvl72-capital-stack"]
)
def test_a_genuine_pdf_memo_paints_nothing_over_its_text(name, tmp_path, capsys):
    """The rule against a box over text raises no false alarm on the memos econ prints: the seed
    and the capital stack (every ready-made scenario's memo was checked when it was written;
    a chart, a table's stripes and rules, the cover's bands are painted before their text)."""
    from pypdf import PdfReader

    from econ.memo.verify import _page_additions

    path = tmp_path / f"{name}.pdf"
    assert main(["memo", str(SEED.with_name(f"{name}.toml")), "--out", str(path)]) == 0
    assert _page_additions(PdfReader(path)) == []
    code, out = _verify(capsys, path)
    assert code == 0, out


def _with_curve(stamp, curve):
    stamp["scenario_toml"] += f'\n[throughput.measured]\ncurve = "{curve}"\n'


@pytest.mark.parametrize(
    "change, message",
    [
        # a stamp's Monte Carlo reading a file of the machine that verifies it
        (
            lambda s: s.update(
                montecarlo={
                    "n": 10,
                    "seed": 1,
                    "distributions": {"market.price_decline_annual": "empirical(/etc/passwd)"},
                }
            ),
            "empirical(FILE) reads a file on this machine",
        ),
        (
            lambda s: s.update(
                montecarlo={
                    "n": 10**9,
                    "seed": 1,
                    "distributions": {"market.price_decline_annual": "uniform(0.1, 0.2)"},
                }
            ),
            "expected a whole number of draws, 10 to",
        ),
        # an embedded scenario or a case naming a file, existing or not: the same refusal
        (lambda s: _with_curve(s, "/etc/passwd"), "names a file (throughput.measured.curve)"),
        (lambda s: _with_curve(s, "/no/such/file.csv"), "names a file (throughput.measured.curve)"),
        (
            lambda s: s["cases"].update(
                evil={"overrides": ['throughput.measured = {curve = "/etc/passwd"}']}
            ),
            "names a file (throughput.measured.curve)",
        ),
    ],
)
def test_a_stamp_cannot_make_verify_open_a_file(memo_html, tmp_path, capsys, change, message):
    code, out = _verify(capsys, _edited(memo_html, tmp_path, lambda t: _edit_stamp(t, change)))
    assert code == 3 and message in out, out
    assert "root:" not in out and "Traceback" not in out


def test_a_memo_refuses_an_empirical_distribution(tmp_path, capsys):
    prices = tmp_path / "prices.csv"
    prices.write_text("price\n0.2\n0.3\n")
    out = tmp_path / "memo.html"
    code = main(
        [
            "memo",
            str(SEED),
            "--out",
            str(out),
            "--montecarlo",
            "10",
            "--dist",
            f"market.price_decline_annual=empirical({prices}, price)",
        ]
    )
    assert code == 3 and not out.exists()
    assert "empirical(FILE) reads a file" in capsys.readouterr().err


def test_the_ask_states_a_sized_loans_tenor_and_when_it_is_repaid(memo_html):
    """A lender read "Term 72 months" (the projection) beside a sized 60-month loan."""
    ask = dict(
        re.findall(r'<th style="width:22%">([^<]*)</th><td>([^<]*)</td>', memo_html.read_text())
    )
    assert "10.75% a year over 60 months, sculpted" in ask["Financing"]
    assert ask["Financing"].endswith("repaid by month 60")
    assert "Term" not in ask and ask["Projection"].startswith("72 months from 2026-04")


def test_contract_rates_are_shown_as_the_term_sheet_gives_them():
    """A loan at the midpoint of 8.500-9.750% is 9.125% a year; two decimals showed 9.12%, a rate
    no lender offered. Rates keep up to four decimals, and at least two."""
    from econ.memo.render import _rate

    assert [_rate(x) for x in (0.09125, 0.0925, 0.10, 0.0225, 0.0, 0.12345678)] == [
        "9.125%", "9.25%", "10.00%", "2.25%", "0.00%", "12.3457%"
    ]  # fmt: skip


def test_a_pdf_made_again_with_source_date_epoch_is_identical(tmp_path, monkeypatch):
    # Chromium dated the PDF by the clock, so two memos of one scenario differed in /CreationDate
    # and /ModDate even with SOURCE_DATE_EPOCH set; they now carry the stamp's creation time.
    if not HAS_CHROMIUM:
        pytest.skip("no chromium for the PDF")
    from pypdf import PdfReader

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # 2023-11-14T22:13:20Z
    made = []
    for name in ("a.pdf", "b.pdf"):
        assert main(["memo", str(SEED), "--out", str(tmp_path / name)]) == 0
        made.append((tmp_path / name).read_bytes())
    assert made[0] == made[1]
    info = PdfReader(tmp_path / "a.pdf").metadata
    assert info["/CreationDate"] == info["/ModDate"] == "D:20231114221320+00'00'"


def test_a_finance_review_s_memo_findings():
    """Found by a finance review (session 18): the refresh case's Ask named the H200 fleet only
    and its NPV per rack divided by 1,744 GPUs in racks of 32; the all-equity memo showed 0 months
    in breach of no covenant; llama2's n/a break-even carried the sized-debt note instead of its
    reason; the Key assumptions showed rates as fractions, 3.1e+06; the tornado sized the loan
    again at each end while the cases held it; a sale of assets read "Other" in the waterfall."""
    from econ import load_scenario
    from econ.memo.build import compute, with_overrides
    from econ.memo.render import _ask, _assumptions, _row_notes, cash_waterfall

    scenarios = ROOT / "models" / "scenarios"
    refresh = compute(
        load_scenario(scenarios / "h200-fleet-gb300-refresh.toml"), {}, tornado_inputs=[]
    )
    # (the hardware by its catalog name; the H200s sold in month 18 with the loan still owed)
    monthly = refresh.monthly.set_index("month")
    owed = monthly.loc[18, "debt_balance_usd"]
    assert owed > 0 and monthly.loc[19, "gpus_in_service"] < monthly.loc[18, "gpus_in_service"]
    assert dict(_ask(refresh))["Fleet"] == (
        "1,024 NVIDIA H200 SXM GPUs (32 racks of 32), in service to month 18 of 72, then sold "
        f"(the sale does not prepay the loan: {owed:,.0f} USD is still owed then, its service "
        "running on to its term, paid from the equity cash flow); then 720 NVIDIA GB300 (NVL72 "
        "rack) GPUs (10 racks of 72) bought in month 18, held to the projection's end (month 72)"
    )
    summary = refresh.summary
    assert summary["npv_usd_per_rack"] == pytest.approx(summary["npv_usd"] / 42, rel=1e-12)
    drivers = cash_waterfall(refresh.monthly).set_index("driver")["value"]
    assert "Other" not in drivers.index
    assert drivers["Sale of assets"] * 1e6 == pytest.approx(refresh.monthly["disposal_usd"].sum())

    equity = compute(load_scenario(scenarios / "gpt-oss-120b-b200.toml"), {}, tornado_inputs=[])
    assert equity.figures["base.covenant_breach_months"] is None  # no debt, no covenant
    seed = compute(load_scenario(SEED), {}, tornado_inputs=["market.price_usd_per_mtok"])
    assert seed.figures["base.covenant_breach_months"] == 0  # tested, never breached

    llama = compute(load_scenario(scenarios / "llama2-70b-h200.toml"), {}, tornado_inputs=[])
    key = "breakeven_price_usd_per_mtok"
    (note,) = _row_notes(llama.summary["warnings"], key, llama.figures[f"base.{key}"])
    assert note.startswith("NPV is positive at a zero token price")

    rows = {r["path"]: r for r in _assumptions(seed)}
    assert rows["utilization.share"]["value"] == "70.00%"
    assert rows["market.price_decline_annual"]["value"] == "30.00% a year"
    assert rows["capex.system_price_usd"]["value"] == "3,100,000"  # (not 3.1e+06)

    # The tornado's low price holds the base case's loan, as a case at that price does.
    from econ import project
    from econ.analysis.committed import committed_loan

    (row,) = seed.tornado["rows"]
    assert seed.tornado["holds_loan"]
    loan = committed_loan(seed.scenario, seed.summary, seed.monthly["debt_balance_usd"].to_numpy())
    low = with_overrides(
        seed.scenario_toml, [f"market.price_usd_per_mtok={row['low']!r}"], "low", loan
    )
    assert row["output_low"] == pytest.approx(float(project(low).metrics["npv_usd"][0]), rel=1e-12)
