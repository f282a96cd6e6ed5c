"""The app's Market page through Streamlit's AppTest: the shipped rental index one line per series
(never averaged), the fitted decay and band as econ.price_paths gives them, the scenario's own price
per GPU-hour from the library, pricing a GPU-hour scenario from a series (and back), and index
files uploaded: read by the reader `econ market import` uses, bad ones refused with st.error naming
the line, the column and the bad cell, never quoting the rest of the file.
"""

from __future__ import annotations

import datetime as dt
import json
import re

import numpy as np
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from econ import rental_index as ri
from econ.catalog import DEFAULT_SCENARIO, ready_made_scenarios
from econ.engine import project
from econ.price_paths import extension, scenario_price_paths
from econ.scenario import load_scenario
from econ.ui import state
from econ.ui.pages.market import SCENARIO_LINES, curve_label
from tests.conftest import ROOT
from tests.test_app import shown

APP = str(ROOT / "app.py")
PAGE = "econ/ui/pages/market.py"
SEED = ready_made_scenarios()[DEFAULT_SCENARIO]
H200 = ROOT / "models" / "scenarios" / "llama2-70b-h200.toml"
HEADER = ",".join(ri.COLUMNS) + "\n"
GPU_HOUR_EDITS = {
    "market": {
        "spot_sells": "gpu_hours",
        "contract_term_months": 12,
        "rental_usd_per_gpu_hour": 2.5,
    }
}
GPU_HOUR_OVERRIDES = [
    'market.spot_sells="gpu_hours"',
    "market.contract_term_months=12",
    "market.rental_usd_per_gpu_hour=0",
]


def market_page(scenario: str = DEFAULT_SCENARIO, edits: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["scenario"] = scenario
    if edits:
        at.query_params["edits"] = state.encode(edits)
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def errors(at: AppTest) -> list[str]:
    return [shown(e.value) for e in at.error]


def widget(elements, label: str):
    found = [w for w in elements if w.label == label]
    assert found, f"no widget {label!r}; have {[w.label for w in elements]}"
    return found[0]


def chart(at: AppTest) -> tuple[dict, list]:
    """The page's rental index chart (the one in USD/GPU-hour; the resale chart is in shares of the
    new price): its spec and its datasets as frames."""
    charts = [c for c in at.get("vega_lite_chart") if "USD/GPU-hour" in c.proto.spec]
    assert len(charts) == 1, f"{len(charts)} rental index charts"
    proto = charts[0].proto
    frames = [pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in proto.datasets]
    return json.loads(proto.spec), frames


def lines_of(frames) -> dict[tuple[str, str], object]:
    """(line label, kind) -> rows, from the chart's line data (points, fit and scenario)."""
    import pandas as pd

    data = pd.concat([f for f in frames if "kind" in f.columns and "price" in f.columns])
    data = data.drop_duplicates(subset=["date", "line", "kind"])
    return {key: rows.sort_values("date") for key, rows in data.groupby(["line", "kind"])}


def legend(spec: dict) -> list[str]:
    for layer in spec["layer"]:
        colour = layer["encoding"].get("color", {})
        if colour.get("legend"):
            return colour["scale"]["domain"]
    raise AssertionError("no legend")


def visible_text(at: AppTest) -> str:
    parts = [e.value for kind in ("caption", "error", "warning", "info", "markdown", "success")
             for e in getattr(at, kind)]  # fmt: skip
    return "\n".join(str(p) for p in parts)


# --- the index and the scenario's price --------------------------------------------------------


def test_the_seed_shows_its_generations_series_and_its_token_price_equivalent():
    at = market_page()
    assert at.title[0].value == "Market"
    assert not errors(at), errors(at)
    spec, frames = chart(at)
    gb200 = [k for k in ri.curves(ri.load_catalog()) if k[1] == "GB200"]
    own = SCENARIO_LINES["token_usd_per_gpu_hour"]
    assert legend(spec) == [curve_label(k) for k in gb200] + [own]
    lines = lines_of(frames)
    paths = scenario_price_paths(load_scenario(SEED))
    shown = lines[(own, "this scenario")]
    np.testing.assert_allclose(shown["price"], paths["token_usd_per_gpu_hour"], rtol=1e-12)
    assert shown["price"].iloc[0] == pytest.approx(4867.7 * 3600 * 0.70 * 0.3261 / 1e6)
    text = visible_text(at)
    assert "token price equivalent of a GPU-hour" in text
    assert "sells tokens, so a rental series would change none of its revenue" in text
    assert not any(b.label == "Use this series" for b in at.button)
    assert "Price [USD/GPU-hour]" in json.dumps(spec)


def test_every_h100_series_is_its_own_line_with_its_published_prices():
    at = market_page()
    widget(at.multiselect, "GPU generation").set_value(["H100"]).run()
    assert not at.exception and not errors(at), errors(at)
    spec, frames = chart(at)
    h100 = {k: c for k, c in ri.curves(ri.load_catalog()).items() if k[1] == "H100"}
    assert len({k[0].split("/")[0] for k in h100}) == 3  # three publishers, never averaged
    names = legend(spec)
    assert [n for n in names if not n.startswith("This scenario")] == [curve_label(k) for k in h100]
    lines = lines_of(frames)
    for key, curve in h100.items():
        published = lines[(curve_label(key), "published points")]
        assert list(published["price"]) == [p.usd_per_gpu_hour for p in curve.points]
    # the curve table lists each one, with its fit or why there is none
    table = at.dataframe[0].value
    assert len(table) == len(h100)
    models = {said.split(",")[0] for said in table["Decay fitted"]}  # ", held flat: ..." rising
    assert models <= {"log-linear", "to a floor", "too few points (3 needed)"}


def test_the_fitted_decay_and_its_band_are_the_librarys():
    at = market_page(H200.stem)
    widget(at.multiselect, "Series (publisher/index)").set_value(["CCIR/CRI-T2IF"]).run()
    assert not errors(at), errors(at)
    _, frames = chart(at)
    key = ("CCIR/CRI-T2IF", "H200", 0)
    curve = ri.curves(ri.load_catalog())[key]
    scenario = load_scenario(H200)
    end = dt.date(scenario.start_date.year + scenario.horizon // 12, scenario.start_date.month, 1)
    ext = extension(curve, max(end, dt.date.today().replace(day=1)))
    fitted = lines_of(frames)[(curve_label(key), "fitted decay (beyond the last point)")]
    np.testing.assert_allclose(fitted["price"], ext.mid, rtol=1e-12)
    band = next(f for f in frames if "low" in f.columns)
    band = band[band["line"] == curve_label(key)].sort_values("date")
    np.testing.assert_allclose(band["low"], ext.low[1:], rtol=1e-12)
    np.testing.assert_allclose(band["high"], ext.high[1:], rtol=1e-12)
    assert ext.fit.sigma_log > 0 and np.all(band["low"] < band["high"])
    # switched off, neither the dashed decay nor the band is drawn
    widget(at.toggle, "Fitted decay with its 5th–95th percentile band").set_value(False).run()
    _, frames = chart(at)
    assert not any(kind.startswith("fitted") for _, kind in lines_of(frames))
    assert not any("low" in f.columns for f in frames)


# --- pricing a scenario from a series ----------------------------------------------------------


def test_a_gpu_hour_scenario_is_priced_from_a_series_and_back():
    at = market_page(H200.stem, GPU_HOUR_EDITS)
    key = ("CCIR/CRI-T2IF", "H200", 0)
    widget(at.selectbox, "Series, GPU and term").set_value(key).run()
    assert not errors(at), errors(at)
    assert "CCIR/CRI-T2IF" in visible_text(at)
    widget(at.button, "Use this series").click().run()
    assert not at.exception and not errors(at), errors(at)
    data = at.session_state[state.DATA]["market"]
    assert data["rental_series"] == "CCIR/CRI-T2IF"
    assert data["rental_series_term_months"] == 0
    assert "rental_series_gpu" not in data  # H200 is the fleet's own GPU
    source = at.session_state[state.DATA]["sources"]["market.rental_series"]
    assert source.startswith("edited in the app on") and "CCIR/CRI-T2IF" in source
    # the link carries it, and the projection is the library's for the same scenario
    edits = state.decode(at.query_params["edits"])
    assert edits["market"]["rental_series"] == "CCIR/CRI-T2IF"
    overrides = [*GPU_HOUR_OVERRIDES, 'market.rental_series="CCIR/CRI-T2IF"']
    expected = scenario_price_paths(load_scenario(H200, overrides))
    spec, frames = chart(at)
    market_line = lines_of(frames)[
        (SCENARIO_LINES["market_rental_usd_per_gpu_hour"], "this scenario")
    ]
    np.testing.assert_allclose(
        market_line["price"], expected["market_rental_usd_per_gpu_hour"], rtol=1e-12
    )
    assert not re.search(r"\bmarket\.(?!md\b)[a-z_]+", visible_text(at)), visible_text(at)
    at.switch_page("econ/ui/pages/results.py").run()
    npv = project(load_scenario(H200, overrides)).summary.iloc[0].npv_usd
    assert [m.value for m in at.metric if m.label == "NPV [USD]"] == [f"{npv:,.0f}"]
    at.switch_page(PAGE).run()
    widget(at.button, "Back to the rental price before").click().run()
    market = at.session_state[state.DATA]["market"]
    assert "rental_series" not in market and market["rental_usd_per_gpu_hour"] == 2.5
    assert not errors(at), errors(at)


def test_a_gpu_hour_scenario_without_a_rental_price_is_made_valid_by_a_series():
    edits = {"market": {"spot_sells": "gpu_hours", "contract_term_months": 12}}
    at = market_page(H200.stem, edits)
    assert any("contracts renew at the market rental price" in e for e in errors(at))
    widget(at.selectbox, "Series, GPU and term").set_value(("CCIR/CRI-T1IF", "H200", 0)).run()
    widget(at.button, "Use this series").click().run()
    assert not errors(at), errors(at)
    overrides = [*GPU_HOUR_OVERRIDES[:2], 'market.rental_series="CCIR/CRI-T1IF"']
    expected = scenario_price_paths(load_scenario(H200, overrides))
    _, frames = chart(at)
    contract = lines_of(frames)[(SCENARIO_LINES["contract_usd_per_gpu_hour"], "this scenario")]
    np.testing.assert_allclose(contract["price"], expected["contract_usd_per_gpu_hour"])
    # the first contract keeps its own price; renewals after 12 months take the series'
    assert contract["price"].iloc[0] == pytest.approx(2.9)
    assert contract["price"].iloc[12] != pytest.approx(2.9)


def test_a_series_too_short_to_extend_needs_a_decline_said_in_the_apps_words():
    at = market_page(H200.stem, GPU_HOUR_EDITS)
    widget(at.selectbox, "Series, GPU and term").set_value(("SemiAnalysis/TCO", "H200", 36)).run()
    assert any("too few" in e and "“Rental decline [%/year]”" in e for e in errors(at)), errors(at)
    assert not re.search(r"\bmarket\.[a-z_]+|rental_decline_annual", "\n".join(errors(at)))
    assert not any(b.label == "Use this series" for b in at.button)
    widget(at.number_input, "Decline beyond the last point [%/year]").set_value(20.0).run()
    widget(at.number_input, "Floor [USD/GPU-hour]").set_value(1.5).run()
    assert not errors(at), errors(at)
    widget(at.button, "Use this series").click().run()
    market = at.session_state[state.DATA]["market"]
    assert market["rental_decline_annual"] == pytest.approx(0.2)
    assert market["rental_floor_usd_per_gpu_hour"] == 1.5
    assert market["rental_series_term_months"] == 36


def test_fitted_decays_carried_years_past_weeks_of_points_are_cautioned_once_per_wording():
    at = market_page(H200.stem, GPU_HOUR_EDITS)
    said = [c.value for c in at.caption if "Caution" in c.value]
    assert len(said) == 1, said
    cautions = re.findall(r"Caution, ([^:]+): the fit rests on 3 points over 6 weeks", said[0])
    # the two CCIR on-demand H200 series fitted (3 points each) share one sentence
    assert cautions and "CCIR/CRI-T1IF" in cautions[0] and "CCIR/CRI-T2IF" in cautions[0]


def test_a_floor_without_a_decline_is_refused_not_ignored():
    """A floor with the decline box empty (the fitted decay) was written to the scenario and did
    nothing: CCIR's tier-1 H200 series fell to 0.10 USD/GPU-hour below a floor of 1.22."""
    at = market_page(H200.stem, GPU_HOUR_EDITS)
    widget(at.selectbox, "Series, GPU and term").set_value(("CCIR/CRI-T1IF", "H200", 0)).run()
    widget(at.number_input, "Floor [USD/GPU-hour]").set_value(1.22).run()
    (said,) = [e for e in errors(at) if "cannot price this scenario" in e]
    assert "1.22" in said and "has no floor" in said and "“Rental decline [%/year]”" in said
    assert not any(b.label == "Use this series" for b in at.button)
    widget(at.number_input, "Decline beyond the last point [%/year]").set_value(20.0).run()
    assert not errors(at), errors(at)


def test_an_unset_decline_and_floor_show_empty_boxes_that_mean_none():
    at = market_page(H200.stem, GPU_HOUR_EDITS)
    decline = widget(at.number_input, "Decline beyond the last point [%/year]")
    floor = widget(at.number_input, "Floor [USD/GPU-hour]")
    assert decline.value is None and floor.value is None  # not a 0.00 the user did not give
    assert decline.placeholder == "the fitted decay" and floor.placeholder == "none"
    widget(at.selectbox, "Series, GPU and term").set_value(("CCIR/CRI-T1IF", "H200", 0)).run()
    widget(at.button, "Use this series").click().run()
    assert not errors(at), errors(at)
    market = at.session_state[state.DATA]["market"]
    assert market["rental_decline_annual"] == 0.0 and market["rental_floor_usd_per_gpu_hour"] == 0.0


def test_a_series_term_the_index_lacks_is_an_error_naming_the_terms_it_has():
    edits = {"market": {**GPU_HOUR_EDITS["market"], "rental_usd_per_gpu_hour": 0.0,
                        "rental_series": "CCIR/CRI-T2IF", "rental_series_term_months": 12}}  # fmt: skip
    at = market_page(H200.stem, edits)
    assert not at.exception
    found = [e for e in errors(at) if "no term of 12 months" in e]
    assert found and "0 months" in found[0], errors(at)
    assert "market." not in found[0] and "“Rental series”" in found[0]


# --- index files of your own -------------------------------------------------------------------


def upload(at: AppTest, name: str, content: bytes) -> AppTest:
    at.get("file_uploader")[0].upload(name, content, "text/csv").run()
    assert not at.exception, at.exception
    return at


GOOD = (
    HEADER
    + "2026-01-01,Mine/Quotes,H100,12,2.40,desk quote\n"
    + "2026-04-01,Mine/Quotes,H100,12,2.30,desk quote\n"
    + "2026-07-01,Mine/Quotes,H100,12,2.25,desk quote\n"
).encode()


def test_an_uploaded_index_is_shown_beside_the_shipped_one():
    at = market_page()
    upload(at, "quotes.csv", GOOD)
    assert not errors(at), errors(at)
    assert any("3 points read and checked" in s.value for s in at.success)
    widget(at.multiselect, "GPU generation").set_value(["H100"]).run()
    spec, frames = chart(at)
    mine = curve_label(("Mine/Quotes", "H100", 12), uploaded=True)
    assert mine in legend(spec)
    assert list(lines_of(frames)[(mine, "published points")]["price"]) == [2.40, 2.30, 2.25]
    widget(at.radio, "Index shown").set_value("Your file").run()
    spec, _ = chart(at)
    assert [n for n in legend(spec) if not n.startswith("This scenario")] == [mine]
    # a scenario names only shipped series
    options = (
        widget(at.selectbox, "Series, GPU and term").options
        if any(w.label == "Series, GPU and term" for w in at.selectbox)
        else []
    )
    assert not any("Mine/Quotes" in o for o in options)


def test_an_uploaded_price_above_the_plausible_bound_is_warned_of_as_the_cli_does():
    # `econ market import` warns of 3,000 USD/GPU-hour (a node-hour or a month, most likely);
    # the app read the same file with no word.
    at = market_page()
    upload(at, "quotes.csv", GOOD.replace(b"2.30", b"3000"))
    assert not errors(at), errors(at)
    (warning,) = [w.value for w in at.warning if "USD/GPU-hour is above" in w.value]
    assert "2026-04-01 Mine/Quotes H100 term 12 months: 3000 USD/GPU-hour" in warning
    upload(at, "quotes.csv", GOOD)
    assert not any("USD/GPU-hour is above" in w.value for w in at.warning)


def test_an_uploaded_series_of_the_gpu_shown_is_shown_at_once():
    """The Series box kept its earlier pick, so a file's series of the GPU shown stayed off the
    chart until added by hand (an outside review)."""
    at = market_page()
    gpu = widget(at.multiselect, "GPU generation").value[0]
    widget(at.multiselect, "Series (publisher/index)").set_value(
        widget(at.multiselect, "Series (publisher/index)").value[:1]
    ).run()
    own = HEADER + "".join(
        f"2026-0{m}-01,Mine/Quotes,{gpu},0,{3.0 - m / 10:.2f},desk quote\n" for m in (1, 4, 7)
    )
    upload(at, "quotes.csv", own.encode())
    assert not errors(at), errors(at)
    assert "Mine/Quotes" in widget(at.multiselect, "Series (publisher/index)").value
    spec, _ = chart(at)
    assert curve_label(("Mine/Quotes", gpu, 0), uploaded=True) in legend(spec)


SECRET = "SECRET-CONTENT-42"
BAD_UPLOADS = {
    "unsorted dates": (
        HEADER + f"2026-02-01,Pub/Idx,H100,0,3.0,{SECRET}\n2026-01-01,Pub/Idx,H100,0,2.9,s\n",
        "line 3, column date",
    ),
    "duplicate dates": (
        HEADER + f"2026-02-01,Pub/Idx,H100,0,3.0,{SECRET}\n2026-02-01,Pub/Idx,H100,0,2.9,s\n",
        "line 3, column date",
    ),
    "a term out of range": (  # the bad cell is quoted, the rest of the file is not
        HEADER + f"2026-02-01,Pub/Idx,H100,1.5,3.0,{SECRET}\n",
        "line 2, column term_months: '1.5'; expected",
    ),
    "a price that is no number": (
        HEADER + f"2026-02-01,Pub/Idx,H100,0,$3.00,{SECRET}\n",
        "line 2, column usd_per_gpu_hour: '$3.00'; expected",
    ),
    "another schema": (
        f"system,accelerator,benchmark,scenario,result\n{SECRET},b,c,d,1\n",
        "expected a rental index file",
    ),
    "a scenario file": ("[fleet]\ngpu_count = 8\n" + f'name = "{SECRET}"\n', "line 1 (header)"),
    "no rows": (HEADER, "no data rows"),
    "an unclosed quote": (
        HEADER + f'2026-02-01,Pub/Idx,H100,0,3.0,"{SECRET}\n2026-03-01,Pub/Idx,H100,0,2.9,s\n',
        "line 2: not a well-formed CSV record",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_UPLOADS))
def test_a_bad_index_file_is_refused_naming_the_line_and_column(case):
    content, where = BAD_UPLOADS[case]
    at = market_page()
    upload(at, "bad.csv", content.encode())
    found = [e for e in errors(at) if "bad.csv" in e]
    assert found and where in found[0], errors(at)
    everything = visible_text(at) + json.dumps([str(d.value) for d in at.dataframe])
    assert SECRET not in everything
    assert all("bad.csv" not in c.proto.spec for c in at.get("vega_lite_chart"))
    spec, _ = chart(at)  # the shipped index is still shown
    assert legend(spec)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"\xff\xfe\x00\x01garbage", "not UTF-8 text"),
        (b"", "the file is empty"),
        (
            HEADER.encode() + b"x" * (1024 * 1024 + 1),
            "larger than the 1 MB (1,048,576 bytes) limit",
        ),
    ],
)
def test_an_unreadable_or_too_large_index_file_is_refused(content, reason):
    at = market_page()
    upload(at, "odd.csv", content)
    assert any("odd.csv" in e and reason in e for e in errors(at)), errors(at)
    assert legend(chart(at)[0])


def test_a_curve_of_your_file_named_as_a_shipped_one_stays_its_own_line():
    key = ("CCIR/CRI-T2IF", "H100", 0)
    shipped = ri.curves(ri.load_catalog())[key]
    content = HEADER + "2026-06-24,CCIR/CRI-T2IF,H100,0,9.99,my own reading\n"
    at = market_page()
    upload(at, "same.csv", content.encode())
    widget(at.multiselect, "GPU generation").set_value(["H100"]).run()
    assert not errors(at), errors(at)
    assert any("each is its own line" in c.value for c in at.caption)
    lines = lines_of(chart(at)[1])
    ours = lines[(curve_label(key), "published points")]
    assert list(ours["price"]) == [p.usd_per_gpu_hour for p in shipped.points]
    assert list(lines[(curve_label(key, uploaded=True), "published points")]["price"]) == [9.99]


def test_an_invalid_scenario_a_series_cannot_fix_is_sent_to_the_scenario_page():
    edits = {"market": {**GPU_HOUR_EDITS["market"], "price_usd_per_mtok": -1.0}}
    at = market_page(H200.stem, edits)
    assert not at.exception
    assert any("Market › Price [USD/M tokens]" in e for e in errors(at))  # app-wide
    assert any("problems a rental series does not fix" in i.value for i in at.info)
    assert not any(b.label == "Use this series" for b in at.button)
    assert legend(chart(at)[0])  # the index is still shown


def test_a_series_that_prices_the_first_contract_is_not_told_to_price_it():
    """After "Use this series" with the first contract priced from it, the page still warned
    "the series would change no revenue: tick the box above", though the box was gone and the
    series had moved the NPV (an outside review)."""
    at = market_page(H200.stem)
    said = "the series would change no revenue"
    assert any(said in w.value for w in at.warning)  # the whole horizon on the file's price
    tick = next(c for c in at.checkbox if c.label.startswith("Price the first contract"))
    tick.check().run()
    widget(at.selectbox, "Series, GPU and term").set_value(("CCIR/CRI-T2IF", "H200", 0)).run()
    widget(at.button, "Use this series").click().run()
    assert at.session_state[state.DATA]["market"]["contract_usd_per_gpu_hour"] == 0.0
    assert not any(said in w.value for w in at.warning), [w.value for w in at.warning]
    assert not errors(at), errors(at)


def test_the_decline_and_floor_boxes_follow_the_scenarios_fields_changed_elsewhere():
    """The boxes kept the values they first showed: a rental decline changed to 10% on the
    Scenario page still read 30 here, and "Use this series" wrote 30% back over it (review 28)."""
    edits = {
        "market": {
            **GPU_HOUR_EDITS["market"],
            "rental_decline_annual": 0.3,
            "rental_floor_usd_per_gpu_hour": 1.2,
        }
    }
    at = market_page(H200.stem, edits)
    assert widget(at.number_input, "Decline beyond the last point [%/year]").value == 30.0
    at.switch_page("econ/ui/pages/scenario.py").run()
    widget(at.number_input, "Rental decline [%/year]").set_value(10.0).run()
    widget(at.number_input, "Rental floor [USD/GPU-hour]").set_value(0.8).run()
    at.switch_page(PAGE).run()
    assert widget(at.number_input, "Decline beyond the last point [%/year]").value == 10.0
    assert widget(at.number_input, "Floor [USD/GPU-hour]").value == 0.8
    widget(at.selectbox, "Series, GPU and term").set_value(("CCIR/CRI-T2IF", "H200", 0)).run()
    widget(at.number_input, "Floor [USD/GPU-hour]").set_value(0.5).run()  # a choice here stays
    widget(at.button, "Use this series").click().run()
    assert not errors(at), errors(at)
    market = at.session_state[state.DATA]["market"]
    assert market["rental_decline_annual"] == pytest.approx(0.1)
    assert market["rental_floor_usd_per_gpu_hour"] == 0.5


def test_a_rising_series_says_it_is_held_flat_as_econ_market_show_does():
    """SemiAnalysis' 12-month H100 prices rise 84.7% a year; `econ market show` says the decline
    is held at 0, the table said only "log-linear", 0.0% a year, as of a flat market (review 28)."""
    at = market_page()
    widget(at.multiselect, "GPU generation").set_value(["H100"]).run()
    table = at.dataframe[0].value.set_index(["Series", "Term"])
    row = table.loc[("SemiAnalysis/RentalIndex", "12-month contracts")]
    curve = ri.curves(ri.load_catalog())[("SemiAnalysis/RentalIndex", "H100", 12)]
    fit = ri.fit_decay(curve.years(curve.dates), curve.prices)
    assert fit.decline_held_at_zero
    said = f"log-linear, held flat: the prices rise {fit.trend_annual:+.1%} a year"
    assert row["Decay fitted"] == said == "log-linear, held flat: the prices rise +84.7% a year"
    assert row["Premium decline [%/year]"] == "0.0%"
    falling = table.loc[("CCIR/CRI-T1IF", "on-demand"), "Decay fitted"]
    assert falling == "log-linear"


def test_a_decline_above_99_percent_the_scenario_allows_is_shown_and_kept():
    """The box stopped at 99%/year where the scenario takes any decline below 100%: a scenario's
    99.5% read 0.00 and "Use this series" wrote 0, the fitted decay, over it (review 28)."""
    edits = {"market": {**GPU_HOUR_EDITS["market"], "rental_decline_annual": 0.995}}
    at = market_page(H200.stem, edits)
    assert widget(at.number_input, "Decline beyond the last point [%/year]").value == 99.5
    widget(at.selectbox, "Series, GPU and term").set_value(("CCIR/CRI-T2IF", "H200", 0)).run()
    widget(at.button, "Use this series").click().run()
    assert not errors(at), errors(at)
    assert at.session_state[state.DATA]["market"]["rental_decline_annual"] == pytest.approx(0.995)
    # 100% a year is the scenario's to refuse, in its words
    widget(at.number_input, "Decline beyond the last point [%/year]").set_value(100.0).run()
    (said,) = errors(at)
    assert "“Rental decline [%/year]” = 1.0" in said and "expected a yearly rate" in said, said
    assert not any(b.label == "Use this series" for b in at.button)


def test_an_uploaded_file_of_one_point_is_one_point():
    at = market_page()
    upload(at, "quote.csv", (HEADER + "2026-01-01,Mine/Quotes,H100,12,2.40,desk quote\n").encode())
    assert [s.value for s in at.success] == ["quote.csv: 1 point read and checked."]
