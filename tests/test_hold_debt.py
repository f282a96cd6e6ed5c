"""Batch runs that hold the base case's sized loan (`--hold-debt`): a stress test of the committed
loan, where a plain run sizes each scenario's own."""

from __future__ import annotations

import json

import numpy as np
import pytest

from econ import load_scenario, project
from econ.analysis.committed import hold_job, loan_terms
from econ.analysis.montecarlo import montecarlo
from econ.analysis.sweeps import GridSweep, sweep
from econ.analysis.validation import BatchInputError
from econ.cli import main
from econ.scenario import apply_overrides, scenario_to_dict, validate_dict
from econ.scenario.io import dumps
from tests.conftest import ROOT
from tests.test_debt_sizing import covenant_dscr_low

SCENARIOS = ROOT / "models" / "scenarios"
SEED = SCENARIOS / "deepseek-r1-gb200-nvl72.toml"
PRICES = [0.2, 0.25, 0.3261, 0.4]


@pytest.fixture(scope="module")
def seed():
    return load_scenario(SEED)


def with_values(scenario, values):
    return validate_dict(apply_overrides(scenario_to_dict(scenario), values))


def test_each_scenario_borrows_the_base_loan_and_its_dscr_is_that_loans_cover(seed):
    held = sweep(seed, grid={"market.price_usd_per_mtok": PRICES}, hold_debt=True).rows
    sized = sweep(seed, grid={"market.price_usd_per_mtok": PRICES}).rows
    base = project([seed])
    debt = base.metrics["debt_usd"][0]
    assert debt > 0
    np.testing.assert_allclose(held["debt_usd"], debt, rtol=1e-12)
    assert sized["debt_usd"].nunique() > 1  # sized again, the loan follows the price
    service = base.lines["debt_service_usd"][0]
    owed = service > 1e-6
    held_base = hold_job(GridSweep(seed, {"market.price_usd_per_mtok": PRICES}))[0].base
    for price, row in zip(PRICES, held.itertuples(), strict=True):
        case = project([with_values(held_base, {"market.price_usd_per_mtok": price})])
        np.testing.assert_allclose(case.lines["debt_service_usd"][0], service, atol=1e-6)
        # By hand: the case's own cash available for debt service over the base's service.
        cfads = case.lines["ebitda_usd"][0] - case.lines["tax_usd"][0]
        assert row.min_dscr == pytest.approx(np.min(cfads[owed] / service[owed]), rel=1e-12)
    # At the base case's own price the held loan is the base case itself.
    at_base = held[held["market.price_usd_per_mtok"] == 0.3261].iloc[0]
    assert at_base["min_dscr"] == pytest.approx(base.metrics["min_dscr"][0], rel=1e-12)
    assert at_base["npv_usd"] == pytest.approx(base.metrics["npv_usd"][0], rel=1e-12)
    # Below the base price the committed loan is covered less than a loan sized again.
    low = held["market.price_usd_per_mtok"] < 0.3261
    assert (held["min_dscr"][low] < sized["min_dscr"][low]).all()


def test_the_held_loan_is_said_in_the_metadata(seed):
    result = sweep(seed, grid={"market.price_usd_per_mtok": [0.3]}, hold_debt=True)
    held = result.metadata["held_loan"]
    assert held["debt_usd"] == pytest.approx(project([seed]).metrics["debt_usd"][0])
    assert held["repayment"] == "balance_schedule" and held["schedule_months"] == 60
    assert "2,474,920 USD whatever its capex" in held["note"]
    plain = sweep(seed, grid={"market.price_usd_per_mtok": [0.3]})
    assert "held_loan" not in plain.metadata
    assert plain.metadata["fingerprint"] != result.metadata["fingerprint"]  # no resume mix-up


def test_a_level_payment_loan_keeps_its_schedule():
    scenario = load_scenario(SCENARIOS / "h200-fleet-gb300-refresh.toml")
    job, held = hold_job(GridSweep(scenario, {"market.price_usd_per_mtok": [0.2]}))
    assert held["repayment"] == "level_payment" and "on level payments" in held["note"]
    assert job.base.financing.size_to_min_dscr is None and job.base.financing.max_ltv is None
    assert project([job.base]).metrics["debt_usd"][0] == pytest.approx(held["debt_usd"])


def test_probability_of_covenant_breach_counts_the_breaching_scenarios(seed):
    dists = {"market.price_usd_per_mtok": "uniform(0.15, 0.45)"}
    outputs = ("npv_usd", "covenant_breach_months", "first_breach_month")
    held = montecarlo(seed, dists, 400, 3, outputs=outputs, keep_rows=True, hold_debt=True)
    breached = (held.rows["covenant_breach_months"] > 0).mean()
    assert 0 < breached < 1
    assert held.summary.covenant_breach_probability == pytest.approx(breached)
    sized = montecarlo(seed, dists, 400, 3, outputs=outputs)
    assert sized.summary.covenant_breach_probability < breached
    assert montecarlo(seed, dists, 20, outputs=("npv_usd",)).summary.covenant_breach_probability is None


def test_a_held_loan_run_from_python_has_the_clis_default_outputs(seed):
    """docs/batch.md: a Monte Carlo run that holds the loan adds the breach outputs to its
    defaults; from Python it left them out, and its breach probability was None."""
    from econ.analysis.runner import LOAN_STRESS_OUTPUTS, MAIN_OUTPUTS, default_outputs

    dists = {"market.price_usd_per_mtok": "uniform(0.15, 0.45)"}
    held = montecarlo(seed, dists, 64, 3, hold_debt=True)
    assert tuple(held.summary.metrics) == default_outputs(True) == (
        MAIN_OUTPUTS + LOAN_STRESS_OUTPUTS
    )
    assert held.summary.covenant_breach_probability is not None
    assert tuple(montecarlo(seed, dists, 64, 3).summary.metrics) == MAIN_OUTPUTS


@pytest.mark.parametrize(
    ("grid", "scenario", "expected"),
    [
        ({"financing.debt_share": [0.5]}, SEED, "the loan's own terms (financing.debt_share)"),
        ({"financing.size_to_min_dscr": [1.2]}, SEED, "financing.size_to_min_dscr"),
    ],
)
def test_what_cannot_be_held_is_refused(grid, scenario, expected):
    with pytest.raises(BatchInputError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        hold_job(GridSweep(load_scenario(scenario), grid))


def test_the_held_loan_keeps_its_dollars_whatever_the_capex(seed):
    """A lender commits dollars: a scenario with dearer GPUs borrows the same loan (its equity
    pays the difference), a cheaper one too, until the loan would exceed the capex."""
    base_debt = project([seed]).metrics["debt_usd"][0]
    price = seed.capex.system_price_usd
    prices = [price * 0.8, price, price * 1.25, 1000.0]  # the last: GPUs cheaper than the loan
    rows = sweep(seed, grid={"capex.system_price_usd": prices}, hold_debt=True).rows
    np.testing.assert_allclose(rows["debt_usd"][:3], base_debt, rtol=1e-12)
    assert rows["debt_usd"].iloc[3] == pytest.approx(rows["capex_usd_total"].iloc[3], rel=1e-12)
    assert rows["debt_usd"].iloc[3] < base_debt
    # each row is the scenario holding debt_usd, projected alone
    for value, row in zip(prices, rows.itertuples(), strict=True):
        alone = project([with_values(hold_job(GridSweep(seed, {"capex.system_price_usd": [value]}))
                                     [0].base, {"capex.system_price_usd": value})])
        assert row.npv_usd == pytest.approx(alone.metrics["npv_usd"][0], rel=1e-12)


def test_a_loan_as_an_amount_and_as_a_share_are_one_loan(seed):
    """financing.debt_usd = D is the loan debt_share = D / capex draws: the same ledger."""
    given = {"financing.size_to_min_dscr": None, "financing.max_ltv": None,
             "financing.repayment": "level_payment"}
    share = project([with_values(seed, {**given, "financing.debt_share": 0.4})])
    capex = share.metrics["capex_usd_total"][0]
    amount = project([with_values(seed, {**given, "financing.debt_share": 0.0,
                                         "financing.debt_usd": 0.4 * capex})])
    for key in ("debt_usd", "npv_usd", "irr_equity_annual", "min_dscr"):
        assert amount.metrics[key][0] == pytest.approx(share.metrics[key][0], rel=1e-12), key
    with pytest.raises(Exception, match="give the term loan either as debt_usd"):
        with_values(seed, {"financing.debt_usd": 1e6})  # the seed gives debt_share too


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("-5", "--set financing.debt_usd=-5 (over deepseek-r1-gb200-nvl72.toml): -5 is below 0; "
         "expected a number at least 0 [USD]"),
        ("inf", "--set financing.debt_usd=inf (over deepseek-r1-gb200-nvl72.toml): expected a "
         "finite number"),
        ('"3e6"', '--set financing.debt_usd="3e6" (over deepseek-r1-gb200-nvl72.toml): a number '
         "written as text"),
    ],
)
def test_a_bad_loan_amount_names_the_file_the_field_and_the_value(value, expected, capsys):
    code = main(["project", str(SEED), "--set", "financing.debt_share=0",
                 "--set", f"financing.debt_usd={value}"])
    err = capsys.readouterr().err
    assert code == 3 and expected in err and str(SEED.name) in err
    assert "Traceback" not in err


def test_a_loan_above_the_capex_is_cut_to_it_and_said(seed):
    given = {"financing.size_to_min_dscr": None, "financing.max_ltv": None,
             "financing.repayment": "level_payment", "financing.debt_share": 0.0}
    result = project([with_values(seed, {**given, "financing.debt_usd": 9e6})])
    capex = result.metrics["capex_usd_total"][0]
    assert result.metrics["debt_usd"][0] == pytest.approx(capex, rel=1e-12)
    assert (f"financing.debt_usd of 9,000,000 USD is more than the capex of {capex:,.0f} USD: "
            "the loan drawn is the capex") in result.warnings[0]
    within = project([with_values(seed, {**given, "financing.debt_usd": 1e6})])
    assert not any("financing.debt_usd" in w for w in within.warnings[0])
    # a base given as an amount and not sized: held as it is, and the note says so
    job = GridSweep(with_values(seed, {**given, "financing.debt_usd": 1e6}),
                    {"capex.system_price_usd": [2e6]})
    same, held = hold_job(job)
    assert same is job and "borrows its loan of 1,000,000 USD (at most its capex)" in held["note"]


def test_an_unsized_loan_is_left_as_given(seed):
    given = with_values(seed, {"financing.size_to_min_dscr": None, "financing.max_ltv": None,
                               "financing.repayment": "level_payment"})
    job = GridSweep(given, {"market.price_usd_per_mtok": [0.3]})
    same, held = hold_job(job)
    assert same is job and held["note"].startswith("no loan to hold: ")
    assert "sizes no loan" in held["note"]


def test_a_capital_stack_given_is_left_as_given_and_a_sized_one_is_held_scaled():
    stack = load_scenario(SCENARIOS / "deepseek-r1-gb200-nvl72-capital-stack.toml")
    job = GridSweep(stack, {"market.price_usd_per_mtok": [0.3]})
    same, held = hold_job(job)
    assert same is job and "capital stack's tranches as given" in held["note"]
    sized = with_values(stack, {"financing.max_ltv": 0.5})
    base = project([sized]).metrics
    as_given = project([stack]).metrics["debt_usd"][0]
    assert 0 < base["debt_usd"][0] < 0.1 * as_given  # the LTV test scales the stack down
    held_job, held = hold_job(GridSweep(sized, {"market.price_usd_per_mtok": [0.2, 0.5]}))
    assert held["tranches"] == ["ddtl", "senior_notes", "convertible_notes", "equity"]
    assert held_job.base.financing.max_ltv is None
    scale = base["debt_usd"][0] / as_given
    for given, kept in zip(
        stack.financing.tranches[:3], held_job.base.financing.tranches[:3], strict=True
    ):
        assert kept.share_of_capex == pytest.approx(given.share_of_capex * scale, rel=1e-12)
    again = project([held_job.base]).metrics
    for key in ("debt_usd", "min_dscr", "npv_usd", "irr_equity_annual"):
        assert again[key][0] == pytest.approx(base[key][0], rel=1e-12, nan_ok=True)
    rows = sweep(sized, grid={"market.price_usd_per_mtok": [0.2, 0.5]}, hold_debt=True).rows
    np.testing.assert_allclose(rows["debt_usd"], base["debt_usd"][0], rtol=1e-12)
    resized = sweep(sized, grid={"market.price_usd_per_mtok": [0.2, 0.5]}).rows
    np.testing.assert_allclose(resized["debt_usd"], base["debt_usd"][0], rtol=1e-12)  # LTV-bound
    with pytest.raises(BatchInputError, match=r"loan's own terms \(financing\.max_ltv\)"):
        hold_job(GridSweep(sized, {"financing.max_ltv": [0.4, 0.6]}))


def test_loan_terms_are_found_with_their_sub_paths():
    assert loan_terms(["market.price_usd_per_mtok", "financing.tranches.0.amount_usd",
                       "financing.debt_share"]) == [
        "financing.tranches.0.amount_usd", "financing.debt_share"]


def test_cli_hold_debt(capsys, tmp_path):
    code = main(["montecarlo", str(SEED), "--dist", "market.price_usd_per_mtok=uniform(0.15,0.45)",
                 "-n", "300", "--hold-debt", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0 and err.startswith("held loan: every scenario holds deepseek-r1-gb200-nvl72")
    data = json.loads(out)
    assert data["metadata"]["held_loan"]["debt_usd"] == pytest.approx(2474920.0)
    assert "covenant_breach_months" in data["metrics"]  # the loan's outputs join the defaults
    assert 0 < data["probability_of_covenant_breach"] < 1
    code = main(["sweep", str(SEED), "--grid", "financing.debt_share=0.5,0.6", "--hold-debt"])
    out, err = capsys.readouterr()
    assert code == 3 and "Traceback" not in err
    assert err == (
        "error: holding the base case's loan, a run cannot vary the loan's own terms "
        "(financing.debt_share): leave out --hold-debt to size each scenario's own loan\n"
    )


def test_cli_sweep_table_shows_the_held_loans_cover(capsys):
    code = main(["sweep", str(SEED), "--grid", "market.price_usd_per_mtok=0.3,0.4", "--hold-debt"])
    out, err = capsys.readouterr()
    header = out.splitlines()[0].split()
    assert code == 0 and header[-2:] == ["min_dscr", "covenant_breach_months"]
    main(["sweep", str(SEED), "--grid", "market.price_usd_per_mtok=0.3,0.4"])
    assert "min_dscr" not in capsys.readouterr().out.splitlines()[0]


def test_the_memo_cases_hold_a_stack_sized_to_a_minimum_dscr():
    from econ.memo.build import compute

    data = scenario_to_dict(load_scenario(SCENARIOS / "deepseek-r1-gb200-nvl72-capital-stack.toml"))
    ddtl, *_, equity = data["financing"]["tranches"]
    data["financing"] |= {"tranches": [ddtl, equity], "size_to_min_dscr": 1.3}
    data["market"]["price_usd_per_mtok"] = 0.45
    sized = validate_dict(data)
    memo = compute(sized, {"downside": ["market.price_usd_per_mtok=0.35"]}, tornado_inputs=[])
    downside, debt = memo.cases["downside"], memo.summary["debt_usd"]
    assert downside["holds_loan"] and debt > 0
    assert downside["summary"]["debt_usd"] == pytest.approx(debt, rel=1e-12)
    resized = project([with_values(sized, {"market.price_usd_per_mtok": 0.35})]).metrics
    assert resized["debt_usd"][0] < 0.5 * debt  # sized again, the stack would shrink
    assert downside["summary"]["min_dscr"] < resized["min_dscr"][0]


def test_reports_say_the_loan_is_held(tmp_path, capsys):
    args = ["--hold-debt", "--report", str(tmp_path / "mc")]
    dist = ["--dist", "market.price_usd_per_mtok=uniform(0.15,0.45)", "-n", "200"]
    assert main(["montecarlo", str(SEED), *dist, *args]) == 0
    text = (tmp_path / "mc.md").read_text()
    assert "Held loan: Every scenario holds deepseek-r1-gb200-nvl72's sized loan" in text
    assert "- probability_of_covenant_breach: " in text
    args[-1] = str(tmp_path / "sweep")
    assert main(["sweep", str(SEED), "--grid", "market.price_usd_per_mtok=0.3,0.4", *args]) == 0
    assert "Held loan: Every scenario holds" in (tmp_path / "sweep.md").read_text()
    assert main(["sweep", str(SEED), "--grid", "market.price_usd_per_mtok=0.3", "--report",
                 str(tmp_path / "plain")]) == 0
    assert "Held loan" not in (tmp_path / "plain.md").read_text()


# ---------------------------------------------------------------------------------------------
# the token price below which the committed loan breaches a covenant
# ---------------------------------------------------------------------------------------------


def window_dscr_low(projection):
    """The covenant's lowest trailing-window DSCR of a one-scenario projection, by hand."""
    lines = projection.lines
    return covenant_dscr_low(lines["ebitda_usd"][0] - lines["tax_usd"][0], lines["debt_service_usd"][0])


def test_the_breach_price_is_where_the_committed_loans_covenant_test_reaches_its_floor(seed):
    from econ.analysis.committed import (
        BREACH_PRICE_SPAN,
        BREACH_PRICE_STEPS,
        committed_loan,
        covenant_breach_price,
        hold,
    )

    base = project([seed])
    loan = committed_loan(seed, base.summary_records()[0]["summary"],
                          base.lines["debt_balance_usd"][0])
    found = covenant_breach_price(seed, loan)
    assert covenant_breach_price(seed) == found  # the committed loan found when not given
    price, step = found["price_usd_per_mtok"], (
        BREACH_PRICE_SPAN * seed.market.price_usd_per_mtok / BREACH_PRICE_STEPS**3
    )
    assert found["reason"] is None and 0 < price < seed.market.price_usd_per_mtok
    assert found["cushion_share"] == pytest.approx(1 - price / seed.market.price_usd_per_mtok)
    held = hold(scenario_to_dict(seed), loan)
    at, below = (
        project([validate_dict(apply_overrides(held, {"market.price_usd_per_mtok": p}))])
        for p in (price, price - step)
    )
    floor = seed.financing.covenants.dscr_floor
    assert at.metrics["covenant_breach_months"][0] == 0
    assert below.metrics["covenant_breach_months"][0] > 0
    assert window_dscr_low(below) < floor <= window_dscr_low(at) < floor + 1e-3
    # The seed sizes its loan to 1.3x against a 1.2x covenant: the cushion is thin.
    assert 1 - price / seed.market.price_usd_per_mtok < 0.05


@pytest.mark.parametrize(
    ("scenario", "changes", "reason"),
    [
        ("gpt-oss-120b-b200", {}, "no debt to breach a covenant"),
        ("deepseek-r1-gb200-nvl72", {"financing.covenants.dscr_floor": None}, "no covenant"),
        ("deepseek-r1-gb200-nvl72", {"market.price_usd_per_mtok": 0.0}, "no month-1 token price"),
        # an LTV ceiling the held loan never reaches, and no DSCR covenant: no price breaches
        ("deepseek-r1-gb200-nvl72",
         {"financing.covenants.dscr_floor": "none", "financing.covenants.ltv_ceiling": 0.95},
         "no covenant is breached at any month-1 token price from 0"),
        ("deepseek-r1-gb200-nvl72-capital-stack", {"financing.covenants.dscr_floor": 9.0},
         "breached even at 4 times"),
    ],
)
def test_no_breach_price_says_why(scenario, changes, reason):
    from econ.analysis.committed import covenant_breach_price

    found = covenant_breach_price(with_values(load_scenario(SCENARIOS / f"{scenario}.toml"), changes))
    assert found["price_usd_per_mtok"] is None and reason in found["reason"]


def test_the_memo_says_when_the_base_case_itself_is_in_breach():
    from econ.memo import render
    from econ.memo.build import build_memo

    stack = load_scenario(SCENARIOS / "deepseek-r1-gb200-nvl72-capital-stack.toml")
    assert project([stack]).metrics["covenant_breach_months"][0] > 0
    text = render.html(build_memo(stack))
    price = build_memo(stack).breach["price_usd_per_mtok"]
    above = price / stack.market.price_usd_per_mtok - 1
    assert above > 0
    assert f"{above:.1%} above the base case&#39;s 0.3261, which is in breach" in text


def _project_json(capsys, *args: str) -> tuple[int, dict, str]:
    code = main(["project", *args, "--format", "json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out)["scenarios"][0]["summary"] if code == 0 else {}), err


def test_project_hold_debt_is_the_sweeps_held_case(seed, capsys, tmp_path):
    """`econ project --hold-debt --set` holds the loan sized for the scenario as written, as
    `econ sweep --hold-debt` does (the same rows), where plain --set sizes it again."""
    price = "market.price_usd_per_mtok"
    rows = sweep(seed, grid={price: [0.25]}, hold_debt=True).rows.iloc[0]
    code, held, err = _project_json(capsys, str(SEED), "--hold-debt", "--set", f"{price}=0.25")
    assert code == 0
    assert err.startswith("held loan: the projection holds deepseek-r1-gb200-nvl72's sized loan")
    for key in ("debt_usd", "min_dscr", "npv_usd", "cost_of_debt_annual", "covenant_breach_months"):
        assert held[key] == pytest.approx(rows[key], rel=1e-12), key
    assert held["debt_usd"] == pytest.approx(project([seed]).metrics["debt_usd"][0], rel=1e-12)
    _, sized, _ = _project_json(capsys, str(SEED), "--set", f"{price}=0.25")
    assert sized["debt_usd"] < held["debt_usd"] and sized["min_dscr"] > held["min_dscr"]
    # no loan sized: nothing held, and said
    level = tmp_path / "level.toml"
    level.write_text(dumps(load_scenario(SEED, LEVEL_50)), encoding="utf-8")
    code, given, err = _project_json(capsys, str(level), "--hold-debt", "--set", f"{price}=0.25")
    assert code == 0 and err.startswith("held loan: no loan to hold")
    assert given == _project_json(capsys, str(level), "--set", f"{price}=0.25")[1]
    code = main(["project", str(SEED), "--hold-debt", "--set", "financing.debt_share=0.5"])
    assert code == 3 and "loan's own terms (financing.debt_share)" in capsys.readouterr().err


LEVEL_50 = {
    "financing.size_to_min_dscr": None,
    "financing.max_ltv": None,
    "financing.repayment": "level_payment",
}
