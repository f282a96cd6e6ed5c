"""Resale value of used GPUs (econ.resale, econ.resale_index, market.resale_value_table).

Reference values by hand from the shipped GLRI H100 table (straight line between its published
points), the disposal month and the rental-versus-resale spread written out, the index file's
refusals (exit 3 naming the file, the line and the column), the lender's LTV on the resale value,
the impairment test at resale value, the refresh table, the band in Monte Carlo, and invariants
(proceeds monotone in the share; a table of ones sells at cost; LTV within max_ltv x collateral).
"""

from __future__ import annotations

import datetime as dt
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ import resale
from econ import resale_index as rx
from econ.batch import ScenarioBatch
from econ.cli import main
from econ.engine import project
from econ.fleet import refresh_analysis
from econ.scenario import ScenarioError, load_scenario, read_toml, validate_dict
from tests.conftest import ROOT

HEADER = "series,gpu,age_months,share,share_low,share_high,as_of,source\n"
GLRI_AGES = [12, 24, 36, 48, 60]
GLRI_MID = [0.625, 0.425, 0.30, 0.175, 0.125]  # midpoints of the published 60-65%, 40-45%, ...
REFRESH = ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"


def _index(tmp_path, body: str, header: str = HEADER):
    path = tmp_path / "resale.csv"
    path.write_text(header + body)
    return path


def _scenario(**market) -> dict:
    """Eight H100 at 30,000 USD (hardware only), sold in month 30 of a 36-month horizon."""
    return {
        "name": "h100-resale",
        "horizon_months": 36,
        "fleet": {"hardware": "h100-sxm", "gpu_count": 8, "retire_month": 30},
        "throughput": {"tokens_per_s_per_gpu": 1000.0},
        "capex": {"gpu_price_usd": 30000.0},
        "depreciation": {"life_years": 3.0},
        "market": {"price_usd_per_mtok": 1.0, **market},
    }


GLRI_TABLE = [
    {"age_months": 12, "share": 0.625, "share_low": 0.60, "share_high": 0.65},
    {"age_months": 24, "share": 0.425, "share_low": 0.40, "share_high": 0.45},
    {"age_months": 36, "share": 0.30, "share_low": 0.25, "share_high": 0.35},
]


# --- the curve ----------------------------------------------------------------------------------


def test_straight_line_on_the_published_glri_table():
    """GLRI H100 residuals (updated 2026-01-08): year 1 60-65%, year 2 40-45%, ... of MSRP."""
    ages = [0, 6, 12, 18, 30, 54, 60, 72]
    got = resale.resale_share(GLRI_AGES, GLRI_MID, ages)
    # by hand: 1 - 0.375 x 6/12; (0.625 + 0.425)/2; (0.425 + 0.30)/2; (0.175 + 0.125)/2; flat
    assert got == pytest.approx([1.0, 0.8125, 0.625, 0.525, 0.3625, 0.15, 0.125, 0.125])


def test_a_table_at_age_zero_replaces_the_new_price_and_rows_are_independent():
    ages = np.array([[0, 12, np.nan], [12, 24, 36], [np.nan] * 3])
    shares = np.array([[0.9, 0.5, np.nan], [0.6, 0.4, 0.3], [np.nan] * 3])
    got = resale.resale_share(ages, shares, [-1, 0, 6, 12, 48])
    assert got[0] == pytest.approx([1.0, 0.9, 0.7, 0.5, 0.5])
    assert got[1] == pytest.approx([1.0, 1.0, 0.8, 0.6, 0.3])
    assert np.isnan(got[2]).all()


def test_band_positions_pick_the_low_mid_and_high_curves():
    mid, low, high = np.array([[0.5]]), np.array([[0.4]]), np.array([[0.7]])
    bands = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    got = resale.band_shares(np.repeat(mid, 5, 0), low, high, bands)[:, 0]
    assert got == pytest.approx([0.4, 0.45, 0.5, 0.6, 0.7])
    # no published range: every band is the mid
    assert resale.band_shares(mid, np.nan, np.nan, np.array([1.0]))[0, 0] == 0.5


def test_rental_resale_spread_by_hand():
    # 2.00 USD/GPU-hour at 70% for a year = 2 x 8760 x 0.7 = 12,264; a 30,000 USD H100 loses
    # 1 - 0.625 of its price in its first year: 11,250; the spread is 1,014 USD per GPU.
    out = resale.rental_resale_spread(
        np.full((1, 12), 2.0), np.full((1, 12), 0.7), [1.0], [0.625], [30000.0]
    )
    assert out["rental_earnings_usd_per_gpu_year"][0] == pytest.approx(12264.0)
    assert out["resale_loss_usd_per_gpu_year"][0] == pytest.approx(11250.0)
    assert out["rental_resale_spread_usd_per_gpu_year"][0] == pytest.approx(1014.0)
    by_year = resale.spread_by_age_year(
        np.full(36, 2.0),
        np.full(36, 0.7),
        resale.resale_share(GLRI_AGES, GLRI_MID, range(37)),
        30000.0,
        3,
    )
    assert by_year["resale_loss_usd_per_gpu_year"] == pytest.approx([11250.0, 6000.0, 3750.0])
    assert by_year["rental_resale_spread_usd_per_gpu_year"][1] == pytest.approx(6264.0)


tables = st.lists(
    st.tuples(st.integers(1, 120), st.floats(0.0, 1.0)),
    min_size=1,
    max_size=6,
    unique_by=lambda p: p[0],
).map(lambda pts: sorted(pts))


@settings(max_examples=60, deadline=None)
@given(tables)
def test_curve_never_rises_and_stays_within_the_table(points):
    ages = [a for a, _ in points]
    shares = sorted((s for _, s in points), reverse=True)  # not rising with age
    curve = resale.resale_share(ages, shares, np.arange(0, 130))
    assert np.all(np.diff(curve) <= 1e-12)
    assert curve.max() <= 1.0 and curve.min() >= min(shares) - 1e-12
    assert curve[ages] == pytest.approx(shares)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(1.0, 1e6))
def test_proceeds_are_monotone_in_the_share(a, b, hardware):
    low, high = min(a, b), max(a, b)
    share = np.array([[low, high]])
    got = (
        resale.proceeds_at_retirement_usd([hardware], share, [0]),
        resale.proceeds_at_retirement_usd([hardware], share, [1]),
    )
    assert got[0][0] <= got[1][0]
    assert got[1][0] == pytest.approx(high * hardware)


# --- the index file -----------------------------------------------------------------------------


def test_the_shipped_index_reads_and_every_point_has_a_source():
    points = rx.load_catalog()
    assert {(p.series, p.gpu) for p in points} >= {
        ("GLRI/ResidualGuide", "H100"),
        ("SpotWire/VintageCurve", "H100"),
    }
    assert all(p.source and p.as_of for p in points)
    glri = rx.find_curve(points, "GLRI/ResidualGuide", "h100")
    assert glri.ages.tolist() == GLRI_AGES and glri.shares().tolist() == GLRI_MID


@pytest.mark.parametrize(
    ("body", "line", "column"),
    [
        ("A/B,H100,24,0.5,,,2026-01-01,x\nA/B,H100,12,0.6,,,2026-01-01,x\n", 3, "age_months"),
        ("A/B,H100,12,0.6,,,2026-01-01,x\nA/B,H100,12,0.5,,,2026-01-01,x\n", 3, "age_months"),
        ("A/B,H100,12,1.2,,,2026-01-01,x\n", 2, "share"),
        ("A/B,H100,12,-0.1,,,2026-01-01,x\n", 2, "share"),
        ("A/B,H100,12,nan,,,2026-01-01,x\n", 2, "share"),
        ("A/B,H100,12,inf,,,2026-01-01,x\n", 2, "share"),
        ("A/B,H100,12,0.5,,,2026-01-01,x\nA/B,H100,24,0.6,,,2026-01-01,x\n", 3, "share"),
        ("A/B,H100,12,0.5,0.6,,2026-01-01,x\n", 2, "share_low"),
        ("A/B,H100,12,0.5,,0.4,2026-01-01,x\n", 2, "share_high"),
        (
            "A/B,H100,12,0.5,0.4,0.6,2026-01-01,x\nA/B,H100,24,0.4,0.39,0.7,2026-01-01,x\n",
            3,
            "share_high",
        ),
        ("A/B,H100,1.5,0.5,,,2026-01-01,x\n", 2, "age_months"),
        ("A/B,H100,12,0.5,,,2026-13-01,x\n", 2, "as_of"),
        ("A/B,H100,12,0.5,,,2026-01-01,\n", 2, "source"),
        ("AB,H100,12,0.5,,,2026-01-01,x\n", 2, "series"),
    ],
)
def test_bad_index_rows_exit_3_naming_line_and_column(tmp_path, capsys, body, line, column):
    path = _index(tmp_path, body)
    with pytest.raises(rx.ResaleIndexError, match=rf"line {line}, column {column}: "):
        rx.read_index(path)
    assert main(["market", "resale", "--index", str(path)]) == 3
    err = capsys.readouterr().err
    assert f"line {line}, column {column}" in err and "Traceback" not in err


def test_a_band_rising_past_an_age_without_a_range_is_refused(tmp_path, capsys):
    """12 months 0.6 (0.5-0.7), 24 months 0.45 with no range, 36 months 0.44 (0.40-0.60): the
    curve's high is 0.7, 0.45, 0.60 as used (a point without a range is its share at every band
    position), and the check compared 0.60 with 0.7 only (an outside review)."""
    body = (
        "A/B,H100,12,0.6,0.5,0.7,2026-01-01,x\n"
        "A/B,H100,24,0.45,,,2026-01-01,x\n"
        "A/B,H100,36,0.44,0.40,0.60,2026-01-01,x\n"
    )
    path = _index(tmp_path, body)
    assert main(["market", "resale", "--index", str(path)]) == 3
    assert (
        "line 4, column share_high: 0.6 is above the 0.45 (its share: no range given) of the "
        "younger age on line 3 of the same series A/B, gpu H100; expected shares that do not rise"
    ) in capsys.readouterr().err
    # a band within the share of the age with no range is read; so is a band that narrows to it
    falling = body.replace("0.40,0.60", "0.40,0.45")
    assert [p.share_high for p in rx.read_index(_index(tmp_path, falling))] == [0.7, None, 0.45]


@pytest.mark.parametrize(
    ("cells", "column", "shown"),
    [
        ("12,1.6,,", "share", "'1.6'"),
        ("12,0.5,0.6,", "share_low", "'0.6'"),
        ("1.5,0.5,,", "age_months", "'1.5'"),
        ("-12,0.5,,", "age_months", "'-12'"),
        ("12,50%,,", "share", "'50%'"),
    ],
)
def test_a_bad_cell_is_quoted_in_the_refusal(tmp_path, capsys, cells, column, shown):
    path = _index(tmp_path, f"A/B,H100,{cells},2026-01-01,x\n")
    assert main(["market", "resale", "--index", str(path)]) == 3
    assert f"line 2, column {column}: {shown}; expected " in capsys.readouterr().err


@pytest.mark.parametrize("as_of", ["1900-01-01", "2537-07-31"])
def test_a_publication_date_out_of_range_is_refused_stating_the_range(tmp_path, as_of):
    path = _index(tmp_path, f"A/B,H100,12,0.5,,,{as_of},x\n")
    with pytest.raises(rx.ResaleIndexError) as raised:
        rx.read_index(path)
    assert f"line 2, column as_of: '{as_of}'; expected the publication date, a date " in str(
        raised.value
    )
    assert "from 2000-01-01 to 2100-12-31" in str(raised.value)


def test_a_publication_date_after_today_is_warned_of_as_a_rental_date_is(tmp_path, capsys):
    """A curve "as of 2062-01-08" (for 2026) was read without a word, where a rental index
    point dated after today is warned of."""
    path = _index(tmp_path, "A/B,H100,12,0.6,,,2062-01-08,x\nA/B,H100,24,0.4,,,2026-01-08,x\n")
    (warning,) = rx.date_warnings(rx.read_index(path), "r.csv", today=dt.date(2026, 12, 7))
    assert warning == (
        "r.csv: line 2, A/B H100 age 12 months: as_of 2062-01-08 is after today (2026-12-07); "
        "expected the date the curve was published (a mistyped year?)"
    )
    assert main(["market", "resale", "--index", str(path)]) == 0
    assert "as_of 2062-01-08 is after today" in capsys.readouterr().err
    many = "".join(f"A/B,H100,{12 * i},{1 - 0.1 * i:.1f},,,2062-01-08,x\n" for i in range(1, 9))
    (counted,) = rx.date_warnings(rx.read_index(_index(tmp_path, many)), "r.csv")
    assert counted.startswith("r.csv: 8 points are dated after today") and "and 5 more" in counted
    assert rx.date_warnings(rx.load_catalog(), today=dt.date(2026, 6, 4)) == []  # the shipped


def test_an_index_of_another_schema_is_refused(tmp_path, capsys):
    rental = ROOT / "models" / "market" / "rental_index.csv"
    assert main(["market", "resale", "--index", str(rental)]) == 3
    err = capsys.readouterr().err
    assert "line 1 (header)" in err and "resale index file" in err
    # the message names the file and what was expected, never the file's content
    assert "CCIR" not in err


def test_a_band_of_one_curve_stays_separate_from_another_publisher(tmp_path):
    path = _index(
        tmp_path,
        "A/X,H100,12,0.6,,,2026-01-01,a\nB/Y,H100,12,0.8,,,2026-01-01,b\n"
        "A/X,H100,24,0.4,,,2026-01-01,a\n",
    )
    found = rx.curves(rx.read_index(path))
    assert found[("A/X", "H100")].shares().tolist() == [0.6, 0.4]
    assert found[("B/Y", "H100")].shares().tolist() == [0.8]


def test_curve_frame_for_the_app():
    frame = rx.curve_frame(rx.find_curve(rx.load_catalog(), "GLRI/ResidualGuide", "H100"), band=1)
    assert list(frame.columns) == [
        "age_months",
        "share",
        "share_low",
        "share_high",
        "share_at_band",
    ]
    assert frame.age_months.iloc[-1] == 72
    assert frame.loc[frame.age_months == 18, "share_at_band"].item() == pytest.approx(0.55)
    table = validate_dict(_scenario(resale_value_table=GLRI_TABLE)).market.resale_value_table
    assert rx.curve_frame(table=table, ages=36).share.iloc[30] == pytest.approx(0.3625)


# --- the CLI ------------------------------------------------------------------------------------


def test_market_resale_list_and_show(capsys):
    assert main(["market", "resale", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)["series"]
    assert {"series": "GLRI/ResidualGuide", "gpu": "H100"}.items() <= listed[1].items()
    assert (
        main(["market", "resale", "GLRI/ResidualGuide", "--gpu", "H100", "--format", "json"]) == 0
    )
    shown = json.loads(capsys.readouterr().out)
    assert [p["age_months"] for p in shown["points"]] == GLRI_AGES
    assert shown["curve"][1] == {
        "age_months": 12,
        "share": 0.625,
        "share_low": 0.6,
        "share_high": 0.65,
        "share_at_band": 0.625,
    }
    assert main(["market", "resale", "GLRI/ResidualGuide"]) == 3  # two GPUs: --gpu needed
    assert "expected --gpu" in capsys.readouterr().err
    assert main(["market", "resale", "Nope/None", "--gpu", "H100"]) == 3
    assert "GLRI/ResidualGuide" in capsys.readouterr().err


def test_market_resale_says_where_the_curve_starts_and_when_a_band_does_nothing(tmp_path, capsys):
    path = _index(tmp_path, "A/B,H100,0,0.9,,,2026-01-01,x\nA/B,H100,12,0.6,,,2026-01-01,x\n")
    args = ["market", "resale", "A/B", "--index", str(path)]
    assert main([*args, "--band", "0.5"]) == 0
    text = capsys.readouterr().out
    assert "straight line between points from the file's 0.9 at age 0" in text
    assert "from 1.0" not in text
    assert "band 0.5: no effect, the series publishes no range" in text
    assert main([*args, "--band", "0.5", "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["curve"][0]["share_at_band"] == 0.9  # the file's age-0 point, not 1.0
    assert shown["warnings"] == [
        "--band 0.5 has no effect: A/B (H100) publishes no low-high range, so the curve at "
        "every band is its mid share"
    ]
    assert main([*args, "--format", "json"]) == 0  # band 0: nothing to say
    assert json.loads(capsys.readouterr().out)["warnings"] == []
    # a series with a range, from the new price at age 0: the band moves it, no warning
    glri = ["market", "resale", "GLRI/ResidualGuide", "--gpu", "H100", "--band", "0.5"]
    assert main(glri) == 0
    text = capsys.readouterr().out
    assert "from 1.0 (the new price) at age 0" in text and "no effect" not in text


# --- scenario validation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            [{"age_months": 24, "share": 0.5}, {"age_months": 12, "share": 0.6}],
            r"\[1\]\.age_months",
        ),
        ([{"age_months": 12, "share": 0.5}, {"age_months": 12, "share": 0.4}], "repeats"),
        ([{"age_months": 12, "share": 0.5}, {"age_months": 24, "share": 0.6}], r"\[1\]\.share"),
        ([{"age_months": 12, "share": 1.5}], r"1.5 is above 1; expected a fraction from 0 to 1"),
        ([{"age_months": 12, "share": -0.1}], r"-0.1 is below 0; expected a fraction from 0 to 1"),
        ([{"age_months": 12, "share": float("nan")}], "finite"),
        ([{"age_months": 12, "share": 0.5, "share_low": 0.6}], "share_low"),
    ],
)
def test_bad_resale_tables_are_refused(table, message):
    with pytest.raises(ScenarioError, match=message):
        validate_dict(_scenario(resale_value_table=table))


def test_resale_excludes_sale_value_share_and_resale_value_impairment_needs_a_table():
    data = _scenario(resale_value_table=GLRI_TABLE)
    data["depreciation"]["sale_value_share"] = 0.2
    with pytest.raises(ScenarioError, match="sale_value_share"):
        validate_dict(data)
    data = _scenario()
    data["depreciation"]["impairment"] = {
        "price_drop_threshold": 0.3,
        "fair_value_source": "resale_value",
    }
    with pytest.raises(ScenarioError, match="resale_value"):
        validate_dict(data)
    with pytest.raises(ScenarioError, match="one of the two"):
        validate_dict(_scenario(resale_value_table=GLRI_TABLE, resale_series="GLRI/ResidualGuide"))
    with pytest.raises(ScenarioError, match="resale_band"):
        validate_dict(_scenario(resale_band=0.5))


def test_an_unknown_series_or_gpu_is_an_input_error(capsys, tmp_path):
    path = tmp_path / "s.toml"
    data = _scenario(resale_series="GLRI/ResidualGuide")
    data["fleet"]["hardware"] = "b200"
    import tomli_w

    path.write_text(tomli_w.dumps(data))
    assert main(["project", str(path), "--format", "json"]) == 3
    err = capsys.readouterr().err
    assert "has no points for gpu B200" in err and "A100, H100" in err


# --- the engine ---------------------------------------------------------------------------------


def test_disposal_at_the_resale_value_of_the_month_by_hand():
    base = project(validate_dict(_scenario()))
    sold = project(validate_dict(_scenario(resale_value_table=GLRI_TABLE)))
    month = 30  # age 30: (0.425 + 0.30) / 2 = 0.3625 of 8 x 30,000 = 87,000 USD
    assert sold.lines["disposal_usd"][0, month] == pytest.approx(87000.0)
    assert sold.lines["disposal_usd"][0].sum() == pytest.approx(87000.0)
    # straight line over 36 months from month 1: carrying after month 30 is 6/36 of 240,000
    assert sold.lines["gain_on_disposal_usd"][0, month] == pytest.approx(87000.0 - 40000.0)
    assert base.lines["disposal_usd"][0, month] == pytest.approx(40000.0)  # at book value
    # the warning that the GPUs were sold at book value is not given when they sell at resale
    assert not any("assumed sold at book value" in w for w in sold.warnings[0])


def test_a_table_of_ones_sells_at_cost_and_bands_order_the_proceeds():
    ones = [{"age_months": 1, "share": 1.0}, {"age_months": 600, "share": 1.0}]
    sold = project(validate_dict(_scenario(resale_value_table=ones)))
    assert sold.lines["disposal_usd"][0, 30] == pytest.approx(240000.0)
    # networking and installation do not resell: the proceeds are the hardware's
    data = _scenario(resale_value_table=ones)
    data["capex"].update(
        networking_usd_per_gpu=5000.0, installation_usd_per_gpu=1750.0, spares_share=0.02
    )
    assert project(validate_dict(data)).lines["disposal_usd"][0, 30] == pytest.approx(
        8 * 30000.0 * 1.02
    )
    scenario = validate_dict(_scenario(resale_value_table=GLRI_TABLE))
    batch = ScenarioBatch.repeat(scenario, 5, {"market.resale_band": [-1, -0.5, 0, 0.5, 1]})
    proceeds = project(batch).lines["disposal_usd"][:, 30]
    # age 30: low (0.40 + 0.25)/2, mid 0.3625, high (0.45 + 0.35)/2 of 240,000
    assert proceeds[[0, 2, 4]] == pytest.approx([78000.0, 87000.0, 96000.0])
    assert np.all(np.diff(proceeds) > 0)
    compiled = project(validate_dict(_scenario(resale_value_table=GLRI_TABLE, resale_band=0.5)))
    assert compiled.lines["disposal_usd"][0, 30] == pytest.approx(proceeds[3])


def test_no_table_leaves_the_spread_null_with_one_warning_naming_it():
    scenario = load_scenario(ROOT / "models" / "scenarios" / "llama2-70b-h200.toml")
    summary = project(scenario).summary_records()[0]["summary"]
    for key in resale.SPREAD_KEYS:
        assert summary[key] is None
    said = [w for w in summary["warnings"] if "no resale curve" in w]
    assert len(said) == 1 and all(key in said[0] for key in resale.SPREAD_KEYS)


def test_spread_summary_keys_by_hand():
    data = _scenario(resale_value_table=GLRI_TABLE, rental_usd_per_gpu_hour=2.0)
    data["utilization"] = {"share": 0.7}
    summary = project(validate_dict(data)).summary_records()[0]["summary"]
    assert summary["rental_earnings_usd_per_gpu_year"] == pytest.approx(12264.0)
    assert summary["resale_loss_usd_per_gpu_year"] == pytest.approx(11250.0)
    assert summary["rental_resale_spread_usd_per_gpu_year"] == pytest.approx(1014.0)
    # a table but no rental market: null, and the warning says why
    summary = project(validate_dict(_scenario(resale_value_table=GLRI_TABLE))).summary_records()[0][
        "summary"
    ]
    assert summary["rental_resale_spread_usd_per_gpu_year"] is None
    assert any(
        "rental_resale_spread_usd_per_gpu_year" in w and "no market rental price" in w
        for w in summary["warnings"]
    )


def _levered(**market):
    data = _scenario(**market)
    data["financing"] = {"debt_share": 0.9, "max_ltv": 0.6, "debt_term_months": 36}
    return data


def test_ltv_sizing_on_resale_value_never_exceeds_max_ltv_times_collateral():
    sized = project(validate_dict(_levered(resale_value_table=GLRI_TABLE)))
    balance = sized.lines["debt_balance_usd"][0]
    ltv = sized.lines["ltv"][0]
    owed = balance > 1e-6
    assert np.all(ltv[owed] <= 0.6 + 1e-9)
    assert np.max(ltv[owed]) == pytest.approx(0.6)  # the limit binds somewhere
    assert sized.metrics["debt_sizing_constraint"][0] == 3  # ltv
    # collateral by hand at month 12: 240,000 x 0.625; the ltv line divides by it
    assert ltv[12] == pytest.approx(balance[12] / 150000.0)
    # a lower resale curve lends less
    low = project(validate_dict(_levered(resale_value_table=GLRI_TABLE, resale_band=-1)))
    assert low.metrics["debt_usd_total"][0] < sized.metrics["debt_usd_total"][0]
    assert any("60% of resale value" in w for w in sized.warnings[0])


@settings(max_examples=15, deadline=None)
@given(st.floats(0.05, 0.95), st.floats(-1.0, 1.0))
def test_ltv_within_the_limit_for_any_limit_and_band(max_ltv, band):
    data = _levered(resale_value_table=GLRI_TABLE, resale_band=band)
    data["financing"]["max_ltv"] = max_ltv
    sized = project(validate_dict(data))
    owed = sized.lines["debt_balance_usd"][0] > 1e-6
    assert np.all(sized.lines["ltv"][0][owed] <= max_ltv * (1 + 1e-9))


def test_impairment_at_resale_value_writes_the_gpus_down_to_it():
    data = _scenario(resale_value_table=GLRI_TABLE, price_decline_annual=0.9)
    data["market"]["price_usd_per_mtok"] = 0.05  # earns too little to recover the book value
    data["depreciation"]["life_years"] = 6.0  # the book value falls slower than the resale value
    data["depreciation"]["impairment"] = {
        "price_drop_threshold": 0.5,
        "trigger_price": "resale_value",
        "fair_value_source": "resale_value",
    }
    result = project(validate_dict(data))
    assert result.metrics["impairment_usd_total"][0] > 0
    month = int(np.flatnonzero(result.lines["impairment_usd"][0] > 0)[0])
    # the share falls by half from its in-service value (1 - 0.375/12) at age 21: 0.475
    assert month == 21
    carrying = 240000.0 - np.cumsum(
        result.lines["depreciation_usd"][0] + result.lines["impairment_usd"][0]
    )
    assert carrying[month] == pytest.approx(240000.0 * 0.475)


def test_refresh_table_shows_the_old_fleet_resale_value():
    data = read_toml(REFRESH)
    data["market"]["resale_series"] = "GLRI/ResidualGuide"
    data["market"]["resale_series_gpu"] = "H100"
    scenario = validate_dict(data)
    result = refresh_analysis(scenario, "gb300", months=[24, 36])
    hardware = 1024 * 310000.0 / 8  # H200 nodes: 310,000 USD per 8 GPUs, no spares
    assert result.table.sale_proceeds_usd.tolist() == pytest.approx(
        [hardware * 0.425, hardware * 0.30]
    )
    kept = refresh_analysis(load_scenario(REFRESH), "gb300", months=[24])
    assert kept.table.sale_proceeds_usd.iloc[0] != pytest.approx(hardware * 0.425)
    assert math.isfinite(kept.table.sale_proceeds_usd.iloc[0])


def test_each_generation_has_its_spread_in_the_vintage_table():
    data = read_toml(REFRESH)
    data["market"].update(
        resale_series="GLRI/ResidualGuide", resale_series_gpu="H100", rental_usd_per_gpu_hour=2.5
    )
    result = project(validate_dict(data))
    table = result.vintages.loc["h200-fleet-gb300-refresh"]
    # earnings: 2.5 x 8760 x 0.65 for both; losses: hardware per GPU x (1 - 0.625)
    assert table.rental_earnings_usd_per_gpu_year.tolist() == pytest.approx([14235.0, 14235.0])
    h200 = 310000.0 / 8
    gb300 = 3_000_000.0 / 72  # a GB300 NVL72 rack per GPU (its networking does not resell)
    assert table.resale_loss_usd_per_gpu_year.tolist() == pytest.approx(
        [h200 * 0.375, gb300 * 0.375]
    )
    assert result.metrics["rental_resale_spread_usd_per_gpu_year"][0] == pytest.approx(
        14235.0 - h200 * 0.375
    )
    # each generation sells at its own age: the H200s at 18 months (0.625 - 0.2 x 6/12), the
    # GB300s bought in month 18 at the horizon, 54 months old (0.175 - 0.05 x 6/12)
    disposal = result.lines["disposal_usd"][0]
    assert disposal[18] == pytest.approx(1024 * h200 * 0.525)
    assert disposal[72] == pytest.approx(720 * gb300 * 0.15)


def test_a_scenarios_own_curve_for_the_app():
    scenario = validate_dict(_scenario(resale_series="GLRI/ResidualGuide", resale_band=-1))
    frame = rx.scenario_curve_frame(scenario)
    assert frame.age_months.iloc[-1] == scenario.horizon
    assert frame.share_at_band.iloc[24] == pytest.approx(0.40)  # the low end at 24 months
    assert rx.scenario_curve_frame(validate_dict(_scenario())) is None


def test_montecarlo_and_refresh_on_the_command_line(tmp_path, capsys):
    import tomli_w

    path = tmp_path / "resale.toml"
    path.write_text(tomli_w.dumps(_scenario(resale_value_table=GLRI_TABLE)))
    args = ["montecarlo", str(path), "--dist", "market.resale_band=uniform(-1, 1)", "-n", "64"]
    assert main([*args, "--output", "npv_usd", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["metadata"]["plan"]["distributions"]["market.resale_band"]["dist"] == "uniform"
    # outside the field's bounds -1..1: refused with exit 3
    bad = ["montecarlo", str(path), "--dist", "market.resale_band=uniform(-2, 1)", "-n", "8"]
    assert main(bad) == 3
    assert "market.resale_band" in capsys.readouterr().err
    refresh = tmp_path / "refresh.toml"
    data = read_toml(REFRESH)
    data["market"].update(resale_series="GLRI/ResidualGuide", resale_series_gpu="H100")
    refresh.write_text(tomli_w.dumps(data))
    assert main(["refresh", str(refresh), "--vintage", "gb300", "--format", "json"]) == 0
    months = json.loads(capsys.readouterr().out)["months"]
    at_24 = next(m for m in months if m["refresh_month"] == 24)
    assert at_24["sale_proceeds_usd"] == pytest.approx(1024 * 310000.0 / 8 * 0.425)


def test_rows_with_and_without_a_table_in_one_batch_keep_their_own_figures():
    plain, resold = (
        validate_dict(_scenario()),
        validate_dict(_scenario(resale_value_table=GLRI_TABLE)),
    )
    again = plain.model_copy(update={"name": "again"})  # (a batch's names are distinct)
    together = project([plain, resold.model_copy(update={"name": "resold"}), again])
    alone = project(plain)
    for key in ("npv_usd", "irr_project_annual", "lcot_usd_per_mtok"):
        assert together.metrics[key][[0, 2]] == pytest.approx(
            [alone.metrics[key][0]] * 2, rel=1e-12
        )
        assert together.metrics[key][1] == pytest.approx(project(resold).metrics[key][0], rel=1e-12)
    assert together.warnings[0] == alone.warnings[0]


def test_a_bad_table_in_a_scenario_file_exits_3_naming_the_point(tmp_path, capsys):
    import tomli_w

    path = tmp_path / "bad.toml"
    table = [{"age_months": 12, "share": 0.5}, {"age_months": 24, "share": 0.7}]
    path.write_text(tomli_w.dumps(_scenario(resale_value_table=table)))
    assert main(["project", str(path)]) == 3
    err = capsys.readouterr().err
    assert "resale_value_table[1].share" in err and "Traceback" not in err


@settings(max_examples=12, deadline=None)
@given(
    st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3),
    st.floats(0.0, 0.3),
)
def test_a_higher_curve_sells_for_more_and_lends_no_less(shares, lift):
    shares = sorted(shares, reverse=True)
    low = [{"age_months": a, "share": s} for a, s in zip((12, 24, 36), shares, strict=True)]
    high = [{**p, "share": min(1.0, p["share"] + lift)} for p in low]  # still not rising
    got = [project(validate_dict(_levered(resale_value_table=t))) for t in (low, high)]
    assert got[0].lines["disposal_usd"][0, 30] <= got[1].lines["disposal_usd"][0, 30] + 1e-6
    assert got[0].metrics["debt_usd_total"][0] <= got[1].metrics["debt_usd_total"][0] + 1e-6


def test_varying_the_band_of_a_scenario_without_a_table_is_refused(tmp_path, capsys):
    import tomli_w

    from econ.errors import InputError

    with pytest.raises(InputError, match="gives no resale table"):
        ScenarioBatch.repeat(validate_dict(_scenario()), 2, {"market.resale_band": [-1, 1]})
    path = tmp_path / "plain.toml"
    path.write_text(tomli_w.dumps(_scenario()))
    args = ["montecarlo", str(path), "--dist", "market.resale_band=uniform(-1, 1)", "-n", "8"]
    assert main(args) == 3  # the sampler's own check of the draws against the scenario model
    assert "no resale_value_table or resale_series" in capsys.readouterr().err


def test_the_docs_say_glri_pages_disagree_and_quote_the_shipped_curve_as_it_is():
    """docs/market.md describes the source's quality: the shipped GLRI H100 curve is its
    calculator's, and its other pages give 65-75% (its residual page) or 70% (its index table)
    at 24 months. The figures it quotes for the shipped curve are those of the shipped file."""
    curve = rx.find_curve(rx.load_catalog(), "GLRI/ResidualGuide", "H100")
    ranges = [
        f"{round(low * 100)}-{round(high * 100)}%"
        for low, high in zip(
            curve.shares("share_low")[:3], curve.shares("share_high")[:3], strict=True
        )
    ]
    doc = " ".join((ROOT / "docs" / "market.md").read_text().split())
    said = doc[doc.index("**GLRI's own pages contradict each other**") :]
    said = said[: said.index("Cross-checks of the level")]
    assert (
        f"It is the depreciation calculator's ({', '.join(ranges)} of MSRP at 12, 24 and 36" in said
    )
    assert '"typically stay at 65-75% after 24 months"' in said
    assert "85% at 12 and 70% at 24 months" in said
    high_at_24 = curve.shares("share_high")[list(curve.ages).index(24)]
    assert f"even `resale_band = 1`, {round(high_at_24 * 100)}% at 24 months" in said
