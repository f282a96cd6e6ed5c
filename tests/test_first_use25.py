"""Review 25, a first-time user's: `econ app`'s host and port, a benchmark file given as a
scenario, a local NAME.toml beside a ready-made NAME, a misspelt or missing command, the table's
debt sizing in words, and doc figures that had gone stale (each recomputed here)."""

from __future__ import annotations

import argparse
import csv
import errno
import functools
import io
import json
import re
import socket

import numpy as np
import pytest

from econ import cli, load_scenario, project
from econ.cli import main
from tests.conftest import ROOT, econ_in_process

SCENARIOS = ROOT / "models" / "scenarios"
SEED = SCENARIOS / "deepseek-r1-gb200-nvl72.toml"
READY = "deepseek-r1-gb200-nvl72"
DOCS = ROOT / "docs"


@pytest.fixture
def run(capsys):
    """`econ ARGS...` in this process (`tests.conftest.econ_in_process`)."""
    return functools.partial(econ_in_process, capsys)


def page(name: str) -> str:
    """A docs page (or the README) with its line breaks as spaces, as a sentence reads."""
    path = ROOT / name if name == "README.md" else DOCS / name
    return " ".join(path.read_text(encoding="utf-8").split())


# --- 1. econ app refuses a host or port it cannot listen on, before starting Streamlit ------------


class Started(Exception):
    pass


@pytest.fixture
def started(monkeypatch):
    """What `econ app` would run; Started where it would replace this process with Streamlit."""
    seen = {}

    def execv(path, argv):
        seen.update(argv=list(argv))
        raise Started

    monkeypatch.setattr(cli.os, "execv", execv)
    monkeypatch.setattr(cli.os, "chdir", lambda folder: None)
    return seen


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    ("host", "said"),
    [
        ("", "--host '': an empty address listens on every interface"),
        (" ", "--host ' ': an empty address listens on every interface"),
        # no IPv4 address has a part above 255: a name, which does not resolve
        ("999.1.1.1", "--host '999.1.1.1': no such address or host name"),
        # TEST-NET-1 (RFC 5737): documentation addresses, assigned to no machine
        ("192.0.2.1", "--host '192.0.2.1': not an address of this machine"),
    ],
)
def test_a_host_the_app_cannot_listen_on_is_refused(run, started, host, said):
    # An empty host listened on 0.0.0.0 without a word ("URL: http://:8628"); the others ended
    # in a traceback with exit 1, the code of a figure `econ verify` cannot reproduce.
    done = run("app", "--host", host, "--port", str(_free_port()))
    assert done.returncode == 3 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: {said}"), done.stderr
    assert "expected an address of this machine, such as 127.0.0.1" in done.stderr
    assert "0.0.0.0 (every interface, on purpose)" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert "argv" not in started  # Streamlit never started


def test_a_port_in_use_is_refused_naming_a_free_one(run, started):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = run("app", "--port", str(port))
    assert done.returncode == 3 and "argv" not in started
    said = re.fullmatch(
        rf"error: --port {port}: already in use on 127\.0\.0\.1 \(another program listens "
        r"there\); expected a free port, such as --port (\d+)\n",
        done.stderr,
    )
    assert said, done.stderr
    with socket.socket() as probe:  # the port suggested was free
        probe.bind(("127.0.0.1", int(said.group(1))))


def test_a_port_this_user_may_not_listen_on_says_why(run, started, monkeypatch):
    # (as root every port binds: the refusal an ordinary user meets, made here)
    def bind(self, address):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(socket.socket, "bind", bind)
    done = run("app", "--port", "80")
    assert done.returncode == 3 and "argv" not in started
    assert done.stderr.startswith(
        "error: --host '127.0.0.1' --port 80: cannot listen there (permission denied: ports "
        "below 1024 need privileges); expected an address of this machine"
    )


@pytest.mark.parametrize("host", ["0.0.0.0", "localhost", "::1"])
def test_an_address_of_this_machine_still_starts_the_app(started, host):
    if host == "::1" and not socket.has_ipv6:
        pytest.skip("no IPv6")
    port = str(_free_port())
    with pytest.raises(Started):
        main(["app", "--host", host, "--port", port])
    argv = started["argv"]
    assert argv[argv.index("--server.address") + 1] == host
    assert argv[argv.index("--server.port") + 1] == port


# --- 2. the command line: a misspelt command or choice, a command without its action --------------


def _actions(command: str) -> list[str]:
    """The actions of `econ COMMAND`, from the parser itself."""
    parser = cli._parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    sub = commands.choices[command]
    (actions,) = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
    return list(actions.choices)


@pytest.mark.parametrize(
    ("argv", "typed", "meant"),
    [
        (["projcet", READY], "projcet", "project"),
        (["market", "lst"], "lst", "list"),
        (["project", READY, "--format", "jsn"], "jsn", "json"),
    ],
)
def test_a_misspelt_choice_suggests_the_closest(run, argv, typed, meant):
    done = run(*argv)
    assert done.returncode == 2
    assert f"invalid choice: {typed!r} (did you mean {meant!r}? choose from " in done.stderr


def test_a_choice_close_to_none_lists_them_as_argparse_does(run):
    done = run("frobnicate")
    assert done.returncode == 2 and "did you mean" not in done.stderr
    assert "invalid choice: 'frobnicate' (choose from 'project', " in done.stderr


@pytest.mark.parametrize("command", ["throughput", "market", "library", "benchmarks"])
def test_a_command_without_its_action_lists_them(run, command):
    # It said only "the following arguments are required: ACTION".
    done = run(command)
    assert done.returncode == 2
    names = _actions(command)
    listed = f"{', '.join(names[:-1])} or {names[-1]}"
    last = done.stderr.splitlines()[-1]
    assert re.fullmatch(rf"econ {command}: error: expected an? (ACTION|COMMAND): {listed}", last)
    assert all(name in done.stderr for name in names)  # the help above gives each its line
    assert done.stderr.startswith(f"usage: econ {command}")


# --- 3. a benchmark file given where a scenario goes ----------------------------------------------

DATA = ROOT / "tests" / "data" / "throughput"


@pytest.mark.parametrize(
    ("file", "kind"),
    [
        ("generic_curve_hand_example.csv", "generic curve CSV with units in the headers"),
        ("vllm_old_with_arrays.json", "vLLM benchmark_serving / vllm bench serve result JSON"),
        ("sglang_bench_serving.jsonl", "SGLang bench_serving JSONL"),
    ],
)
@pytest.mark.parametrize("command", ["project", "validate"])
def test_a_benchmark_file_given_as_a_scenario_is_named_as_one(run, file, kind, command):
    from econ.throughput.importers import FORMATS, detect_format
    from econ.throughput.importers._common import read_source

    path = DATA / file
    assert FORMATS[detect_format(read_source(path))][0] == kind  # as `throughput import` reads it
    done = run(command, str(path))
    assert done.returncode == 3 and "Traceback" not in done.stderr
    assert "malformed TOML" not in done.stderr  # it said "Expected '=' after a key ..."
    assert done.stderr == (
        f"error: {path}: a benchmark result ({kind}), not a scenario: a scenario is a TOML file "
        "(econ schema describes its fields); name this file in a scenario's "
        "throughput.measured.curve (relative to the scenario's folder), or read it with "
        f"`econ throughput import {path} --out curve.csv`\n"
    )


def test_a_malformed_scenario_is_still_malformed_toml(run, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nfleet = [\n', encoding="utf-8")
    done = run("project", str(bad))
    assert done.returncode == 3 and "malformed TOML" in done.stderr
    assert "benchmark result" not in done.stderr


# --- 4. NAME.toml in the working folder beside a ready-made NAME ----------------------------------


def test_a_local_name_toml_is_not_read_for_the_name_and_a_note_says_so(run, tmp_path, monkeypatch):
    mine = SEED.read_text(encoding="utf-8").replace(f'name = "{READY}"', 'name = "mine"', 1)
    (tmp_path / f"{READY}.toml").write_text(mine, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    done = run("project", READY, "--format", "json")
    assert done.returncode == 0
    assert json.loads(done.stdout)["scenarios"][0]["name"] == READY  # the ready-made one
    assert done.stderr.splitlines()[0] == (
        f"note: {READY} is the ready-made scenario {SEED}, not ./{READY}.toml in this folder; "
        f"give ./{READY}.toml to read that one"
    )
    local = run("project", f"./{READY}.toml", "--format", "json")
    assert json.loads(local.stdout)["scenarios"][0]["name"] == "mine"
    assert "note:" not in local.stderr


def test_no_note_without_a_local_name_toml(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = run("validate", READY)
    assert done.returncode == 0 and "note:" not in done.stderr


def test_the_readme_says_which_file_a_name_reads():
    text = page("README.md")
    assert "a file of that name in the working folder first" not in text
    assert (
        "A file named exactly NAME in the working folder is read instead of the ready-made one; "
        "NAME.toml there is not (a note on stderr says so): give `./NAME.toml` to read it."
    ) in text


# --- 5. the table says what sized the debt in words; JSON and CSV keep the code -------------------


def test_the_table_says_what_sized_the_debt_in_words(run):
    from econ.engine import CODED_METRICS
    from econ.labels import CONSTRAINT_WORDS

    names = ["deepseek-r1-gb200-nvl72", "hall-10mw-hgx-b200-air", "gpt-oss-120b-b200"]
    table = run("project", *names).stdout
    as_json = json.loads(run("project", *names, "--format", "json").stdout)
    codes = [s["summary"]["debt_sizing_constraint"] for s in as_json["scenarios"]]
    assert codes == [1, 2, 0]  # JSON keeps the code (a contract)
    words = [
        CONSTRAINT_WORDS[CODED_METRICS["debt_sizing_constraint"][c]].removeprefix("the ")
        for c in codes
    ]
    (row,) = [line for line in table.splitlines() if line.startswith("Debt sized by")]
    assert re.split(r"\s{2,}", row) == ["Debt sized by", *words]  # no "(0 none, 1 ...)" legend
    rows = csv.DictReader(io.StringIO(run("project", names[1], "--format", "csv").stdout))
    assert next(rows)["debt_sizing_constraint"] == "2.0"  # the CSV keeps it too


# --- 6. doc figures as the commands print them today ----------------------------------------------


def test_methodology_quotes_the_seeds_tax_expense_under_each_schedule():
    text = page("methodology.md")
    expense = {}
    for schedule in ("quarterly", "annual", "monthly"):
        scenario = load_scenario(SEED, {"financing.tax_payment": schedule})
        monthly = project(scenario).monthly
        expense[schedule] = (monthly["current_tax_usd"] + monthly["deferred_tax_usd"]).sum()
    quoted = (
        f"{expense['quarterly']:,.0f} USD with `quarterly`, {expense['annual']:,.0f} with "
        f"`annual` and {expense['monthly']:,.0f} with `monthly`"
    )
    assert quoted in text  # it said 81,262 with `annual`


def test_methodology_says_the_macrs_seed_is_retired_at_60_only_with_the_override():
    macrs = SCENARIOS / "deepseek-r1-gb200-nvl72-macrs.toml"
    assert load_scenario(macrs).fleet.retire_month is None  # the file keeps its GPUs to 72
    retired = project(load_scenario(macrs, {"fleet.retire_month": 60})).summary.iloc[0]
    text = page("methodology.md")
    said = (
        "retired at month 60 of 72 with `--set fleet.retire_month=60`, as the file keeps its "
        f"GPUs to month 72, pays 60 × 3,600 USD of staff, and its NPV, {retired['npv_usd']:,.0f} "
        "USD"
    )
    assert said in text


def _lease_figures(stem: str, price: float, upfront: float) -> dict[str, str]:
    """What `econ lease-vs-own` gives for a ready-made scenario at 36-month terms, with the
    figures the reviewed debt flows gave (tests/test_lease_review.py's by-hand lines)."""
    from tests.test_lease_review import (
        asset_cost_usd,
        compare,
        old_debt_cost_usd,
        present_value,
    )

    scenario = load_scenario(SCENARIOS / f"{stem}.toml")
    projection, result = compare(scenario, price, upfront_share=upfront)
    lines, t = projection.lines, scenario.financing.tax_rate
    own = result["pv_cost_own_usd"][0]
    old = present_value(asset_cost_usd(lines, t) + old_debt_cost_usd(lines, t), scenario)
    # p* = (PV(own) - PV((1 - t) renter's costs)) / PV(paid - t rent at a price of 1): a cost
    # of owning lower by d moves it by d / PV(the lease at 1 USD/GPU-hour, no renter's costs)
    _, per_price = compare(scenario, 1.0, upfront_share=upfront, renter_pays=())
    breakeven = result["breakeven_usd_per_gpu_hour"][0]
    old_breakeven = breakeven - (own - old) / per_price["pv_cost_lease_usd"][0]
    return {
        "own": f"{own:,.0f}",
        "old": f"{old:,.0f}",
        "breakeven": f"{breakeven:.4f}",
        "old_breakeven": f"{old_breakeven:.4f}",
    }


def test_financing_quotes_lease_versus_own_as_the_command_gives_it(run):
    text = page("financing.md")
    stack = _lease_figures("deepseek-r1-gb200-nvl72-capital-stack", 4.0, 0.25)
    assert (
        f"costs {stack['own']} USD to own, and those flows gave {stack['old']}" in text
        and f"(break-even {stack['breakeven']} USD/GPU-hour, {stack['old_breakeven']} with those "
        "flows)"
        in text
    )
    b200 = _lease_figures("hall-10mw-hgx-b200-air", 3.7, 0.0)
    assert (
        f"costs {b200['own']} to own, {b200['old']} with those flows (break-even "
        f"{b200['breakeven']}, {b200['old_breakeven']} with them)" in text
    )
    gb300 = _lease_figures("hall-10mw-gb300-nvl72-liquid", 3.7, 0.0)
    assert f"the GB300 hall {gb300['own']}, {gb300['old']} with them" in text
    # the command prints the same break-even at the sentence's options (its defaults otherwise)
    done = run("lease-vs-own", "hall-10mw-hgx-b200-air", "--price", "3.7")
    assert f"break-even rent: {b200['breakeven']} USD/GPU-hour" in done.stdout


def _deferred_warning(stem: str) -> str:
    warnings = project(load_scenario(SCENARIOS / f"{stem}.toml")).warnings[0]
    (warning,) = [w for w in warnings if w.startswith("the debt service falls short")]
    return warning


def test_financing_and_memo_quote_the_halls_first_month_as_the_warnings_give_it():
    gb300 = _deferred_warning("hall-10mw-gb300-nvl72-liquid")
    assert "(first in month 1)" in gb300
    cover = re.search(r"interest cover \(CFADS / interest\) is as low as ([\d.]+x)", gb300)
    b200 = _deferred_warning("hall-10mw-hgx-b200-air")
    assert "(first in month 1)" in b200 and "interest cover" not in b200
    assert "the cash flow available for debt service is negative" in b200
    financing, memo = page("financing.md"), page("memo.md")
    assert f"(the 10 MW GB300 hall's first month: {cover.group(1)})" in financing
    assert "the warning says that instead (the 10 MW B200 hall's first month)" in financing
    assert f"{cover.group(1)} in the 10 MW GB300 hall's month 1" in memo
    assert "0.73x" not in financing and "0.07x" not in financing + memo  # the old figures


def test_financing_says_where_the_seeds_sculpted_dscr_is_higher():
    projection = project(load_scenario(SEED))
    monthly = projection.monthly
    lowest = projection.summary["min_dscr"].iloc[0]
    dscr = monthly["dscr"].to_numpy()
    taxed = (monthly["tax_usd"].to_numpy() > 0) & ~np.isnan(dscr)
    untaxed = (monthly["tax_usd"].to_numpy() == 0) & ~np.isnan(dscr)
    assert np.allclose(dscr[untaxed], lowest, rtol=1e-9)  # PV(A) / D in every other month
    assert dscr[taxed].min() > lowest  # higher, not lower, where the tax is paid
    said = (
        f"its DSCR is {lowest:.4f} against a target of 1.30, its `min_dscr`; in the months a "
        "quarterly tax installment is paid it is higher, "
        f"{dscr[taxed].min():.2f}x to {dscr[taxed].max():.2f}x"
    )
    assert said in page("financing.md")


# --- 7. the README's documentation links ----------------------------------------------------------


def test_methodology_and_the_readme_link_the_exports_and_spreadsheet_pages():
    methodology = (DOCS / "methodology.md").read_text(encoding="utf-8")
    assert "](exports.md)" in methodology and "](excel.md)" in methodology
    documentation = (ROOT / "README.md").read_text(encoding="utf-8").split("## Documentation")[1]
    documentation = documentation.split("\n## ")[0]
    assert "](docs/exports.md)" in documentation and "](docs/excel.md)" in documentation


# --- 8. the glossary ------------------------------------------------------------------------------


@pytest.mark.parametrize("term", ["SOFR", "Sobol indices", "Morris screening", "Pareto frontier"])
def test_the_glossary_defines_the_terms_the_docs_use(term):
    rows = (DOCS / "glossary.md").read_text(encoding="utf-8").splitlines()
    assert any(row.startswith(f"| {term} | ") for row in rows), term


def test_a_deferral_the_cash_covers_is_said_to_be_the_sculpted_shape_not_a_shortfall():
    """The MACRS seed's sculpted loan pays 186.81 USD in month 48 against 15,334 USD of CFADS:
    the warning said the service fell short of the interest 'as low as 31.25x' and no more."""
    macrs = _deferred_warning("deepseek-r1-gb200-nvl72-macrs")
    cover = float(re.search(r"is as low as ([\d.]+)x", macrs).group(1))
    assert cover >= 1
    assert "the cash flow covers the interest; the sculpted service" in macrs
    gb300 = _deferred_warning("hall-10mw-gb300-nvl72-liquid")  # 0.63x: a real shortfall
    assert "the cash flow covers the interest" not in gb300
    assert f"cover {cover:.2f}x" in page("financing.md")
