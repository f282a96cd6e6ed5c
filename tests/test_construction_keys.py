"""What the lender is owed at conversion (a lender's review, 2026-12): with a construction period
the summary's debt is what is drawn, while the loan's balance when service starts also holds the
interest capitalized during construction. `construction_interest_usd` and
`debt_at_conversion_usd` say both, in every summary (JSON, CSV, workbook, the app's table)."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openpyxl import load_workbook

from econ import load_scenario, project
from econ.cli import main
from econ.scenario import apply_overrides, scenario_to_dict, validate_dict
from econ.workbook import workbook_bytes
from tests import test_app
from tests.conftest import ROOT
from tests.test_app import go
from tests.test_construction import built

app = test_app.app  # the AppTest fixture: the app run on the default scenario
SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
KEYS = ("construction_interest_usd", "debt_at_conversion_usd")
# The seed case built over months 0-3 (service from month 4), 30% paid in month 0 and 70% in
# month 2, its 70% loan at level payments (a construction loan is not sized).
BUILD = {
    "fleet.service_start_month": 4,
    "capex.payments": [{"month": 0, "share": 0.3}, {"month": 2, "share": 0.7}],
    "financing.size_to_min_dscr": None,
    "financing.max_ltv": None,
    "financing.repayment": "level_payment",
}
BUILD_ARGS = [
    "--set",
    "fleet.service_start_month=4",
    "--set",
    "capex.payments=[{month=0,share=0.3},{month=2,share=0.7}]",
    "--set",
    "financing.size_to_min_dscr=none",
    "--set",
    "financing.max_ltv=none",
    "--set",
    'financing.repayment="level_payment"',
]


def seed_built(changes=BUILD):
    return validate_dict(apply_overrides(scenario_to_dict(load_scenario(SEED)), changes))


def test_seed_built_owes_the_drawn_debt_plus_the_capitalized_interest():
    # The ledger by hand: capex 3,100,000 + 72 x (4,300 networking + 1,750 installation), 70% of
    # it lent and drawn with the payments; each month of construction adds the interest on the
    # balance at its start (10.75% nominal, 1/12 a month) to the balance, none paid.
    capex = 3_100_000.0 + 72 * (4_300.0 + 1_750.0)
    debt = 0.7 * capex
    draws = {0: 0.3 * debt, 2: 0.7 * debt}
    rate = 0.1075 / 12
    balance = capitalized = 0.0
    for month in range(4):  # months 0-3, service from month 4
        interest = balance * rate if month >= 1 else 0.0
        capitalized += interest
        balance += interest + draws.get(month, 0.0)
    assert debt == pytest.approx(2_474_920.0, abs=1e-6)
    assert capitalized == pytest.approx(35_653.14, abs=0.005)
    assert balance == pytest.approx(2_510_573.14, abs=0.005)

    summary = project(seed_built()).summary.iloc[0]
    assert summary["debt_usd"] == pytest.approx(debt, abs=1e-6)
    assert summary["construction_interest_usd"] == pytest.approx(capitalized, abs=1e-6)
    assert summary["debt_at_conversion_usd"] == pytest.approx(balance, abs=1e-6)
    # the balance the level payments amortize from month 4 on
    monthly = project(seed_built()).monthly
    assert monthly["debt_balance_usd"].iloc[3] == pytest.approx(balance, abs=1e-6)


def test_without_construction_nothing_is_capitalized_and_the_debt_is_owed():
    summary = project(load_scenario(SEED)).summary.iloc[0]
    assert summary["construction_interest_usd"] == 0
    assert summary["debt_at_conversion_usd"] == summary["debt_usd"] > 0


@given(
    start=st.integers(1, 8),
    rate=st.floats(0.0, 0.3),
    payments=st.sampled_from([None, [(0, 0.5), (1, 0.5)], [(0, 0.2), (2, 0.3), (3, 0.5)]]),
    debt_share=st.sampled_from([0.0, 0.4, 0.9]),
)
@settings(max_examples=25, deadline=None)
def test_owed_at_conversion_is_the_draws_plus_the_capitalized_interest(
    start, rate, payments, debt_share
):
    if payments is not None:
        start = max(start, max(m for m, _ in payments) + 1)  # every payment before service
    changes = {"financing.debt_rate_annual": rate}
    one = project(built(start, payments, debt_share, **changes)).summary.iloc[0]
    interest, owed, debt = (one[k] for k in (*KEYS, "debt_usd"))
    assert owed == pytest.approx(debt + interest, rel=1e-12, abs=1e-9)
    assert interest >= 0
    if start == 1 and payments is None or rate == 0 or debt_share == 0:
        assert interest == 0  # no month of construction after a draw, or nothing to accrue
    changes["financing.debt_rate_annual"] = rate + 0.01
    dearer = project(built(start, payments, debt_share, **changes)).summary.iloc[0]
    assert dearer["debt_usd"] == debt  # the draws do not move with the rate ...
    assert dearer["construction_interest_usd"] >= interest  # ... the interest on them does
    if debt_share > 0 and start > 1:
        assert dearer["construction_interest_usd"] > interest


@pytest.mark.parametrize("payments", [None, [(0, 0.5), (2, 0.5)]])
def test_the_capitalized_interest_grows_with_the_rate(payments):
    rates = (0.0, 0.05, 0.12, 0.2)
    got = [
        project(built(5, payments, 0.6, **{"financing.debt_rate_annual": r})).summary.iloc[0][
            "construction_interest_usd"
        ]
        for r in rates
    ]
    assert got[0] == 0
    assert all(a < b for a, b in zip(got, got[1:], strict=False))


def test_the_cli_table_prints_them_for_a_construction_scenario_only(capsys):
    assert main(["project", str(SEED), *BUILD_ARGS]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    debt = next(i for i, line in enumerate(lines) if line.startswith("Debt [USD]"))
    assert lines[debt].split()[-1] == "2,474,920"
    assert lines[debt + 1].startswith("Interest capitalized during construction [USD]")
    assert lines[debt + 1].split()[-1] == "35,653"
    assert lines[debt + 2].startswith("Debt owed when service starts [USD]")
    assert lines[debt + 2].split()[-1] == "2,510,573"
    assert main(["project", str(SEED)]) == 0
    plain = capsys.readouterr().out
    assert "Debt [USD]" in plain and "construction" not in plain.lower()


def test_json_and_csv_summaries_carry_both(tmp_path, capsys):
    assert main(["project", str(SEED), *BUILD_ARGS, "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)["scenarios"][0]["summary"]
    assert summary["construction_interest_usd"] == pytest.approx(35_653.14, abs=0.005)
    assert summary["debt_at_conversion_usd"] == pytest.approx(2_510_573.14, abs=0.005)
    out = tmp_path / "built.csv"
    assert main(["project", str(SEED), *BUILD_ARGS, "--out", str(out)]) == 0
    capsys.readouterr()
    text = next(p for p in tmp_path.glob("*summary*.csv")).read_text(encoding="utf-8")
    header = text.splitlines()[0].split(",")
    assert set(KEYS) <= set(header)


@pytest.mark.parametrize("build", [False, True])
def test_the_workbook_summary_writes_them_as_formulas_equal_to_the_engine(build):
    scenario = seed_built() if build else load_scenario(SEED)
    projection = project([scenario])
    sheet = load_workbook(io.BytesIO(workbook_bytes(projection, [scenario])))["Summary"]
    rows = {row[3].value: row for row in sheet.iter_rows() if len(row) > 3}
    cells = {k: rows[k][2].value for k in (*KEYS, "debt_usd")}
    assert cells["construction_interest_usd"].startswith("=SUM(Monthly!")
    assert cells["debt_at_conversion_usd"].startswith("=")
    assert rows["construction_interest_usd"][0].value == "Interest capitalized during construction"
    assert rows["debt_at_conversion_usd"][1].value == "USD"
    data = load_workbook(io.BytesIO(workbook_bytes(projection, [scenario])), data_only=True)[
        "Summary"
    ]
    values = {row[3].value: row[2].value for row in data.iter_rows() if len(row) > 3}
    expected = projection.summary.iloc[0]
    for key in KEYS:
        assert values[key] == pytest.approx(expected[key], abs=0.005)


def test_the_apps_every_summary_metric_table_lists_them(app):
    # The Results page's "Every summary metric" lists every key of the summary, labelled.
    go(app, "results")
    table = next(d.value for d in app.dataframe if "key" in d.value.columns)
    shown = dict(zip(table["key"], table["metric"], strict=True))
    assert shown["construction_interest_usd"] == "Interest capitalized during construction [USD]"
    assert shown["debt_at_conversion_usd"] == "Debt owed when service starts [USD]"
