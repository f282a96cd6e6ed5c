"""A capital stack's tranches in the outputs (a lender's review: only the stack's totals were
written): the workbook's Tranches and Tranche summary sheets, the tranche files beside an
`econ project --out` CSV or Parquet, and `Projection.tranches` / `tranche_summary`.

The tranche lines are econ.capital's own schedules of each tranche; here they are summed and
compared, to the cent, with the stack totals of the Monthly and Debt sheets, and the senior
notes' coupons, settlement and effective rate and the convertible's settlement are recomputed
from the scenario file's inputs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from econ import engine, load_scenario, project
from econ.capital import stack_schedule
from econ.cli import main
from econ.export import STAMP_COLUMNS, write_outputs
from econ.files import FROM_PYTHON, WriteError
from econ.tranche_tables import TRANCHE_COLUMNS, TRANCHE_LINES, TRANCHE_METRICS
from econ.units import HALF_CENT_USD, MONTHS_PER_YEAR
from econ.workbook import SHEETS
from tests.conftest import ROOT
from tests.test_memo_workbook import _forge, _verify

SCENARIOS = ROOT / "models" / "scenarios"
SEED = SCENARIOS / "deepseek-r1-gb200-nvl72.toml"
STACK = SCENARIOS / "deepseek-r1-gb200-nvl72-capital-stack.toml"
STACK_NAME = "deepseek-r1-gb200-nvl72-capital-stack"
KEYS = ["Scenario", "Tranche", "Kind", "Month", "Date"]
LABELS = {key: label for key, (label, _) in TRANCHE_COLUMNS.items()}
SUMMARY_LABELS = {key: label for key, (label, _) in TRANCHE_METRICS.items()}
# the stack totals on the Monthly sheet and the tranche line each adds up
TOTALS = {
    "interest_usd": "interest_expense_usd",
    "cash_interest_usd": "cash_interest_usd",
    "principal_usd": "principal_usd",
    "debt_service_usd": "debt_service_usd",
    "debt_balance_usd": "balance_usd",
    "commitment_fee_usd": "commitment_fee_usd",
}


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    """The seed (financing.debt_share's loan, no tranches) and the capital stack in one workbook,
    written by `econ project --out`."""
    path = tmp_path_factory.mktemp("tranches") / "book.xlsx"
    assert main(["project", str(SEED), str(STACK), "--out", str(path)]) == 0
    return path


@pytest.fixture(scope="module")
def sheets(book):
    return pd.read_excel(book, sheet_name=None)


def _annual_irr(flows: np.ndarray) -> float:
    """The monthly rate at which the flows' NPV is 0, by bisection (the NPV rises with the rate
    for a borrower's flows: cash in first, then out), annualized as (1 + m)^12 - 1."""
    months = np.arange(len(flows))
    low, high = 0.0, 0.05
    for _ in range(200):
        middle = (low + high) / 2
        if np.sum(flows / (1 + middle) ** months) < 0:
            low = middle
        else:
            high = middle
    return (1 + low) ** MONTHS_PER_YEAR - 1


def test_the_tranche_sheets_hold_the_stack_scenarios_tranches_in_order(sheets):
    assert list(sheets) == list(SHEETS)
    assert SHEETS.index("Tranches") == SHEETS.index("Debt schedule") + 1
    monthly, summary = sheets["Tranches"], sheets["Tranche summary"]
    assert list(monthly.columns) == KEYS + [LABELS[k] for k in TRANCHE_LINES]
    assert list(summary.columns) == KEYS[:3] + [SUMMARY_LABELS[k] for k in TRANCHE_METRICS]
    stack = load_scenario(STACK)
    names = [t.name for t in stack.financing.tranches]
    # the seed's loan is financing.debt_share's: the Monthly and Debt sheets', no tranche rows
    assert set(monthly["Scenario"]) == set(summary["Scenario"]) == {STACK_NAME}
    assert list(summary["Tranche"]) == names
    assert list(summary["Kind"]) == [t.type for t in stack.financing.tranches]
    assert list(dict.fromkeys(monthly["Tranche"])) == names
    months = stack.horizon_months + 1
    assert len(monthly) == len(names) * months
    assert list(monthly["Month"][:months]) == list(range(months))
    assert monthly["Date"].iloc[1] == pd.Timestamp(stack.start_date) + pd.DateOffset(months=1)


def test_the_tranche_lines_add_up_to_the_stack_totals_to_the_cent(sheets):
    monthly = sheets["Monthly"].set_index(["scenario", "month"]).loc[STACK_NAME]
    debt = sheets["Debt"].set_index(["scenario", "month"]).loc[STACK_NAME]
    tranches = sheets["Tranches"]
    summed = tranches.groupby("Month").sum(numeric_only=True)
    assert len(summed) == len(monthly)
    for total, line in TOTALS.items():
        gap = np.abs(summed[LABELS[line]].to_numpy() - monthly[total].to_numpy())
        assert gap.max() <= HALF_CENT_USD, (total, gap.max())
        assert np.abs(monthly[total]).sum() > 0 or total == "commitment_fee_usd"
    # the financing cash flow of the Debt sheet: proceeds less fees, capped calls, cash interest
    # and principal of every tranche (equity's are 0)
    flow = (
        summed[LABELS["proceeds_usd"]]
        - summed[LABELS["fees_usd"]]
        - summed[LABELS["capped_call_usd"]]
        - summed[LABELS["cash_interest_usd"]]
        - summed[LABELS["principal_usd"]]
    )
    gap = np.abs(flow.to_numpy() - debt["financing_cash_flow_usd"].to_numpy())
    assert gap.max() <= HALF_CENT_USD
    # the summary's totals are the monthly lines summed, tranche by tranche
    summary = sheets["Tranche summary"].set_index("Tranche")
    by_tranche = tranches.groupby("Tranche", sort=False).sum(numeric_only=True)
    for line in ("interest_expense_usd", "fees_usd", "principal_usd", "equity_issued_usd"):
        shown = summary[SUMMARY_LABELS[f"{line}_total"]]
        assert np.abs(shown - by_tranche[LABELS[line]]).max() <= HALF_CENT_USD
    # and the debt drawn, the Summary's debt_usd_total (the face of every debt tranche)
    drawn = summary.loc[summary["Kind"] != "equity", SUMMARY_LABELS["drawn_usd"]].sum()
    stack = project(load_scenario(STACK))
    assert drawn == pytest.approx(stack.metrics["debt_usd_total"][0], abs=HALF_CENT_USD)


def test_the_senior_notes_are_recomputed_from_their_inputs(sheets):
    """Semi-annual coupons of face x coupon / 2 six months apart from the issue, the face repaid
    in the horizon's last month (before its maturity), and the effective rate: the IRR of the
    notes' cash flows to their maturity (face less the upfront fee, coupons, face), annualized."""
    scenario = load_scenario(STACK)
    notes = next(t for t in scenario.financing.tranches if t.type == "senior_notes")
    capex = sheets["Monthly"].set_index("scenario").loc[STACK_NAME, "capex_usd"].sum()
    face = notes.share_of_capex * capex
    coupon = face * notes.coupon_annual / notes.coupons_per_year
    period = MONTHS_PER_YEAR // notes.coupons_per_year
    horizon = scenario.horizon_months
    rows = sheets["Tranches"].query("Tranche == @notes.name").set_index("Month")
    months = np.arange(horizon + 1)
    expected = np.where((months > 0) & (months % period == 0), coupon, 0.0)
    np.testing.assert_allclose(rows[LABELS["cash_interest_usd"]], expected, rtol=0, atol=1e-6)
    assert notes.maturity_month > horizon
    settled = np.where(months == horizon, face, 0.0)
    np.testing.assert_allclose(rows[LABELS["settlement_usd"]], settled, rtol=0, atol=1e-6)
    np.testing.assert_allclose(rows[LABELS["balance_usd"]][:-1], face, rtol=0, atol=1e-6)
    assert rows[LABELS["balance_usd"]].iloc[-1] == 0
    assert rows[LABELS["rate_annual"]].iloc[1:].eq(notes.coupon_annual).all()
    flows = np.zeros(notes.maturity_month + 1)
    flows[0] = face * (1 - notes.upfront_fee_share)
    flows[period::period] -= coupon
    flows[notes.maturity_month] -= face
    summary = sheets["Tranche summary"].set_index("Tranche").loc[notes.name]
    assert summary[SUMMARY_LABELS["effective_rate_annual"]] == pytest.approx(
        _annual_irr(flows), rel=1e-9
    )
    assert summary[SUMMARY_LABELS["fees_usd_total"]] == pytest.approx(
        face * notes.upfront_fee_share, abs=HALF_CENT_USD
    )


def test_the_convertible_settlement_is_recomputed_from_its_inputs(sheets):
    """The convertible notes settle in the horizon's last month (before their maturity), at the
    reference share price (no growth), below the conversion price (reference x (1 + premium)):
    repaid in cash, no shares; the capped call's premium is paid at issue."""
    scenario = load_scenario(STACK)
    notes = next(t for t in scenario.financing.tranches if t.type == "convertible_notes")
    capex = sheets["Monthly"].set_index("scenario").loc[STACK_NAME, "capex_usd"].sum()
    face = notes.share_of_capex * capex
    summary = sheets["Tranche summary"].set_index("Tranche").loc[notes.name]
    horizon = scenario.horizon_months
    assert notes.maturity_month > horizon and notes.share_price_growth_annual == 0
    assert summary[SUMMARY_LABELS["settlement_month"]] == horizon
    price = notes.reference_share_price_usd
    assert summary[SUMMARY_LABELS["share_price_at_settlement_usd"]] == price
    assert price < notes.reference_share_price_usd * (1 + notes.conversion_premium)
    assert summary[SUMMARY_LABELS["converted"]] == 0
    assert summary[SUMMARY_LABELS["net_shares"]] == 0
    assert summary[SUMMARY_LABELS["settlement_usd_total"]] == pytest.approx(face, abs=1e-6)
    rows = sheets["Tranches"].query("Tranche == @notes.name").set_index("Month")
    premium = rows[LABELS["capped_call_usd"]]
    assert premium[0] == pytest.approx(notes.capped_call_cost_share * face, abs=1e-6)
    assert premium[1:].eq(0).all()


def test_econ_verify_checks_the_tranche_sheets(book, tmp_path, capsys):
    code, out = _verify(capsys, book)
    assert code == 0, out
    header = list(pd.read_excel(book, sheet_name="Tranches", nrows=0).columns)
    column = header.index(LABELS["cash_interest_usd"]) + 1
    from openpyxl.utils import get_column_letter

    edited = tmp_path / "edited.xlsx"
    _forge(book, edited, "Tranches", f"{get_column_letter(column)}3")
    code, out = _verify(capsys, edited)
    assert code == 1
    assert (
        f"Tranches.{LABELS['cash_interest_usd']} of {STACK_NAME}, tranche ddtl, month 1 (sheet "
        "row 3): shown 123" in out
    )


def test_the_non_cash_line_is_labelled_as_what_it_holds():
    """`amortization_usd` was labelled "Amortized discount and costs" but holds the interest
    expense less cash interest and commitment fees, coupons accrued less paid included: the
    senior notes' month 1 is 5,408.51 (their costs are 8,839.00 in all), a coupon month
    -27,083.07 (found by review). The key stays; the label and its note say what it holds."""
    label, meaning = TRANCHE_COLUMNS["amortization_usd"]
    assert label == "Non-cash interest expense [USD]"
    assert "coupons accrued less coupons paid" in meaning
    assert TRANCHE_METRICS["amortization_usd_total"][0] == "Non-cash interest expense, total [USD]"
    notes = project(load_scenario(STACK)).tranches.xs("senior_notes", level="tranche")
    line = notes["amortization_usd"].to_numpy()
    np.testing.assert_allclose(
        line,
        notes["interest_expense_usd"] - notes["cash_interest_usd"] - notes["commitment_fee_usd"],
        atol=1e-9,
    )
    assert round(line[1], 2) == 5408.51 and round(line[6], 2) == -27083.07
    assert abs(line.sum() - notes["fees_usd"].sum() - notes["discount_usd"].sum()) <= HALF_CENT_USD


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_out_writes_the_tranche_tables_beside_the_schedule(tmp_path, suffix):
    out = tmp_path / f"stack{suffix}"
    assert main(["project", str(STACK), "--out", str(out)]) == 0
    read = pd.read_csv if suffix == ".csv" else pd.read_parquet
    tranches = read(tmp_path / f"stack.tranches{suffix}")
    summary = read(tmp_path / f"stack.tranches.summary{suffix}")
    schedule = read(out).set_index("month")
    assert list(tranches.columns) == [
        "scenario",
        "tranche",
        "kind",
        "month",
        "date",
        *TRANCHE_LINES,
        *STAMP_COLUMNS,
    ]
    assert list(summary.columns) == [
        "scenario",
        "tranche",
        "kind",
        *TRANCHE_METRICS,
        *STAMP_COLUMNS,
    ]
    assert (tranches["scenario_sha256"] == schedule["scenario_sha256"].iloc[0]).all()
    summed = tranches.groupby("month").sum(numeric_only=True)
    for total, line in TOTALS.items():
        assert np.abs(summed[line] - schedule[total]).max() <= HALF_CENT_USD, total
    stack = project(load_scenario(STACK))
    expected = stack.tranche_summary.reset_index()
    np.testing.assert_allclose(
        summary["effective_rate_annual"], expected["effective_rate_annual"], rtol=1e-15
    )


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_rerun_writes_the_tranche_tables_byte_for_byte(tmp_path, suffix):
    """The tranche files carry no creation time, so a rerun writes them byte for byte, as the
    docs say; the Parquet ones had `econ_created_utc` in their schema metadata, and two runs
    3 s apart differed (found by review). The schedule's Parquet file keeps its stamp."""
    import pyarrow.parquet as pq

    stack = project(load_scenario(STACK))
    names = ("tranches", "tranches.summary")
    files = {}
    for run, created in (("a", "2026-12-01T00:00:00Z"), ("b", "2026-12-02T12:34:56Z")):
        write_outputs(stack, {suffix[1:]: tmp_path / f"{run}{suffix}"}, created=created)
        files[run] = [(tmp_path / f"{run}.{name}{suffix}").read_bytes() for name in names]
    assert files["a"] == files["b"]
    if suffix == ".parquet":
        for name in names:
            assert (
                b"econ_created_utc" not in pq.read_schema(tmp_path / f"a.{name}{suffix}").metadata
            )
        main_stamp = pq.read_schema(tmp_path / f"a{suffix}").metadata
        assert main_stamp[b"econ_created_utc"] == b"2026-12-01T00:00:00Z"


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_scenario_without_tranches_writes_no_tranche_file(tmp_path, suffix):
    out = tmp_path / f"seed{suffix}"
    assert main(["project", str(SEED), "--out", str(out)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([out.name, f"seed.summary{suffix}"])


def _outputs(command: str, scenario, out, *force: str) -> list[str]:
    """`econ project SCENARIO --out OUT` or `econ export SCENARIO --csv|--parquet OUT`."""
    if command == "project":
        return ["project", str(scenario), "--out", str(out), *force]
    return ["export", str(scenario), f"--{out.suffix[1:]}", str(out), *force]


@pytest.mark.parametrize("command", ["project", "export"])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_force_removes_the_tranche_files_of_an_earlier_output(tmp_path, suffix, command, capsys):
    """A review: the capital stack's tranche files stayed beside the seed's schedule that
    replaced its own with --force, read as the seed's by whoever opens the folder."""
    out = tmp_path / f"r{suffix}"
    tranche_files = [tmp_path / f"r.tranches{suffix}", tmp_path / f"r.tranches.summary{suffix}"]
    assert main(_outputs(command, STACK, out)) == 0
    assert all(p.is_file() for p in tranche_files)
    capsys.readouterr()
    assert main(_outputs(command, SEED, out, "--force")) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([out.name, f"r.summary{suffix}"])
    err = capsys.readouterr().err
    assert f"removed {tranche_files[0]}, {tranche_files[1]} (from another output" in err


@pytest.mark.parametrize("command", ["project", "export"])
def test_without_force_the_tranche_files_of_an_earlier_output_are_refused(
    tmp_path, command, capsys
):
    out = tmp_path / "r.csv"
    assert main(_outputs(command, STACK, out)) == 0
    (tmp_path / "r.csv").unlink()
    (tmp_path / "r.summary.csv").unlink()
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    capsys.readouterr()
    assert main(_outputs(command, SEED, out)) == 3
    err = capsys.readouterr().err
    tranche_files = f"{tmp_path / 'r.tranches.csv'}, {tmp_path / 'r.tranches.summary.csv'}"
    assert f"{tranche_files} exist, from another output of this name; --force replaces them" in err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # nothing written


def test_the_refusal_names_the_schedule_and_the_tranche_files_of_an_earlier_output(tmp_path):
    out = tmp_path / "r.csv"
    assert main(["project", str(STACK), "--out", str(out)]) == 0
    seed = load_scenario(SEED)
    with pytest.raises(WriteError) as refused:
        write_outputs(project(seed), {"csv": out}, scenarios=[seed])
    assert str(refused.value) == (
        f"{out}, {tmp_path / 'r.summary.csv'} exist; {tmp_path / 'r.tranches.csv'}, "
        f"{tmp_path / 'r.tranches.summary.csv'} exist, from another output of this name; "
        f"--force replaces them {FROM_PYTHON}"
    )
    written = write_outputs(project(seed), {"csv": out}, overwrite=True, scenarios=[seed])
    assert written == [out, tmp_path / "r.summary.csv"]
    assert written.removed == [tmp_path / "r.tranches.csv", tmp_path / "r.tranches.summary.csv"]


def test_only_the_tranche_files_of_this_output_are_removed(tmp_path):
    """Nothing but a regular file of the two names beside this output: not a folder or a link
    of such a name, nor the tranche files of another output or of another suffix."""
    seed = load_scenario(SEED)
    kept = {
        "r.tranches.summary.csv": "folder",  # a folder: not a file of ours
        "r.tranches.csv": "link",  # a link to another file: neither it nor its target
        "target.csv": "file",
        "r.tranches.parquet": "file",
        "q.tranches.csv": "file",
        "r.tranches.csv.bak": "file",
        "r.csv.tranches.csv": "file",
    }
    for name, kind in kept.items():
        if kind == "folder":
            (tmp_path / name).mkdir()
        elif kind == "link":
            (tmp_path / name).symlink_to(tmp_path / "target.csv")
        else:
            (tmp_path / name).write_text("mine")
    out = tmp_path / "r.csv"
    written = write_outputs(project(seed), {"csv": out}, scenarios=[seed])
    assert written.removed == []
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*kept, "r.csv", "r.summary.csv"])
    assert (tmp_path / "r.tranches.csv").is_symlink()
    assert (tmp_path / "target.csv").read_text() == "mine"


def test_an_earlier_output_s_tranche_files_are_replaced_not_removed_by_a_stack(tmp_path):
    """An output with tranches of its own writes its tranche files over the earlier ones."""
    out = tmp_path / "r.parquet"
    assert main(["project", str(STACK), "--out", str(out)]) == 0
    stack = load_scenario(STACK)
    written = write_outputs(project(stack), {"parquet": out}, overwrite=True, scenarios=[stack])
    assert written.removed == []
    assert len(written) == 4


def test_projection_tables_without_tranches_summary_only_and_in_chunks(monkeypatch):
    seed = project(load_scenario(SEED))
    assert seed.tranches.empty and seed.tranche_summary.empty
    assert list(seed.tranches.columns) == ["kind", "date", *TRANCHE_LINES]
    assert list(seed.tranches.index.names) == ["scenario", "tranche", "month"]
    assert list(seed.tranche_summary.columns) == ["kind", *TRANCHE_METRICS]
    assert seed.tranche_counts.tolist() == [0]
    with pytest.raises(ValueError, match="kept only its summary"):
        project(load_scenario(STACK), monthly=False).tranches  # noqa: B018
    scenarios = [
        load_scenario(STACK),
        load_scenario(SEED),
        load_scenario(STACK, ['name="dearer tokens"', "market.price_usd_per_mtok=0.5"]),
    ]
    whole = project(scenarios)
    monkeypatch.setattr(engine, "CHUNK_SCENARIOS", 1)
    chunked = project(scenarios)
    assert chunked.tranche_counts.tolist() == whole.tranche_counts.tolist() == [4, 0, 4]
    pd.testing.assert_frame_equal(chunked.tranches, whole.tranches)
    pd.testing.assert_frame_equal(chunked.tranche_summary, whole.tranche_summary)
    order = list(dict.fromkeys(whole.tranches.index.get_level_values("scenario")))
    assert order == [STACK_NAME, "dearer tokens"]


def test_resized_scenarios_take_their_tranches_lines_too():
    """engine._with_rows puts the schedules of scenarios sized again into the stack: their
    tranches' lines too, so that the tranches still add up to the stack's totals (a tranche the
    resized schedule has not is zero there)."""
    months = np.arange(61)
    notes = {"type": "senior_notes", "name": "notes", "coupon_annual": 0.09, "maturity_month": 48}
    loan = {
        "type": "term_loan",
        "name": "loan",
        "rate_annual": 0.08,
        "maturity_month": 36,
        "amortization_months": 36,
    }
    profile = np.zeros((2, 61))
    profile[:, 0] = 1.0

    def schedule(specs, rows):
        return stack_schedule(specs, np.full(rows, 1e6), profile[:rows], months, [60] * rows)

    stack = schedule([{**notes, "amount_usd": 4e5}, {**loan, "amount_usd": 3e5}], 2)
    part = schedule([{**notes, "amount_usd": 1e5}], 1)
    merged = engine._with_rows(stack, part, np.array([1]))
    for line in ("interest_expense_usd", "balance_usd", "principal_usd", "debt_service_usd"):
        summed = sum(merged.tranches[name][line] for name in ("notes", "loan"))
        np.testing.assert_allclose(summed, merged.lines[line], rtol=0, atol=1e-9)
        np.testing.assert_array_equal(merged.tranches["notes"][line][1], part.lines[line][0])
        assert not merged.tranches["loan"][line][1].any()
        np.testing.assert_array_equal(
            merged.tranches["loan"][line][0], stack.tranches["loan"][line][0]
        )
    assert merged.tranche_metrics["notes"]["drawn_usd"].tolist() == [4e5, 1e5]
    assert np.isnan(merged.tranche_metrics["loan"]["drawn_usd"][1])
    assert stack.tranches["notes"]["balance_usd"][1, 1] == 4e5  # the stack given is unchanged


def test_the_monthly_memory_estimate_covers_a_capital_stacks_tranches(monkeypatch):
    """As tests/test_engine.py's estimate of the seed: the capital stack's projection, its
    monthly frame and its tranche frames, with the tranches' arrays the projection keeps for
    them (measured with tracemalloc)."""
    import tracemalloc

    from econ.batch import ScenarioBatch

    monkeypatch.setattr(engine, "CHUNK_SCENARIOS", 100)
    n = 400
    batch = ScenarioBatch.repeat(load_scenario(STACK), n, {})
    months = int(batch.horizon_months.max()) + 1
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = project(batch)
        result.monthly, result.summary, result.tranches, result.tranche_summary  # noqa: B018
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    freed = n * months * len(engine.MONTHLY_COLUMNS) * 8  # the chunks' lines, as there
    tranches = (len(batch.stack), engine._tranche_months(batch, months))
    estimate = engine.monthly_memory_bytes(n, months, *tranches)
    assert peak + freed <= estimate <= 1.5 * (peak + freed)
    assert engine.monthly_memory_bytes(n, months) < peak + freed  # the seed's count is short


def test_a_workbook_refuses_more_tranche_rows_than_it_holds(monkeypatch):
    """The tranche sheet has a row per tranche and month: 4 x 73 for the capital stack, where
    the Monthly sheet has 73; a limit between the two refuses it, naming the rows."""
    from econ import workbook

    scenario = load_scenario(STACK)
    projection = project(scenario)
    monkeypatch.setattr(workbook, "MAX_ROWS", 200)
    with pytest.raises(workbook.WorkbookError, match="make 292 rows of their capital stacks'"):
        workbook.workbook_bytes(projection, [scenario])
