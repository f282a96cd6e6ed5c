"""The input boundary (DESIGN.md §5-6): scenarios never make econ read files outside their folder,
non-finite and meaningless inputs are refused with the field named, every null has its reason, and
parser-breaking input (NUL bytes, deep nesting, a byte-order mark, a cut-short file) gets exit 3.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import tomli_w
from streamlit.testing.v1 import AppTest

from econ import files, load_scenario, project
from econ.cli import main
from econ.index_files import read_text
from econ.rental_index import RentalIndexError
from econ.scenario import ScenarioError, read_toml, validate_dict
from econ.scenario.paths import allow_paths, resolve_inside
from econ.strict_json import dumps, finite
from econ.throughput.importers import _common
from econ.throughput.importers._common import CurveError, read_source
from econ.ui import state
from econ.undefined import REASONS, explain, mask_infinite
from scripts import fuzz_scenarios
from tests.conftest import ROOT

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
CURVE = ROOT / "tests" / "data" / "app" / "sample_curve.csv"
SECRET = "root:x:0:0:secret-first-line"


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A file outside the scenario's folder whose content must never appear in a message."""
    path = tmp_path / "outside" / "passwd"
    path.parent.mkdir()
    path.write_text(SECRET + "\nsecond line\n")
    return path


@pytest.fixture
def scenario_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    shutil.copy(SEED, folder / "seed.toml")
    shutil.copy(CURVE, folder / "curve.csv")
    return folder


# --- 1. paths inside a scenario ------------------------------------------------------------------


@pytest.mark.parametrize("exists", [True, False])
def test_a_scenario_cannot_name_a_file_outside_its_folder(capsys, secret, scenario_dir, exists):
    target = secret if exists else secret.with_name("absent")
    code, out, err = run(
        capsys,
        "project",
        str(scenario_dir / "seed.toml"),
        "--set",
        f'throughput.measured.curve="{target}"',
    )
    assert code == 3
    assert SECRET not in err and "Traceback" not in err
    assert "throughput.measured.curve" in err and "must stay inside" in err
    # The refusal reads the same whether or not the file exists: it says nothing about the server.
    assert "not found" not in err and "no such file" not in err.lower()


def test_the_refusal_does_not_depend_on_existence(capsys, secret, scenario_dir):
    messages = []
    for target in (secret, secret.with_name("absent"), "../outside/passwd", "../nope/x"):
        code, _, err = run(
            capsys,
            "project",
            str(scenario_dir / "seed.toml"),
            "--set",
            f'throughput.measured.curve="{target}"',
        )
        assert code == 3
        messages.append(err.replace(str(target), "PATH"))
    assert len(set(messages)) == 1, messages


def test_dot_dot_and_symlinks_that_leave_the_folder_are_refused(secret, scenario_dir):
    (scenario_dir / "link.csv").symlink_to(secret)
    for value in ("../outside/passwd", "sub/../../outside/passwd", "link.csv"):
        with pytest.raises(ScenarioError, match="must stay inside") as info:
            resolve_inside(value, scenario_dir, [scenario_dir], file="s.toml", field="f")
        assert SECRET not in str(info.value)
    # Inside the folder, relative and absolute spellings resolve to the same file.
    inside = resolve_inside("curve.csv", scenario_dir, [scenario_dir], file=None, field="f")
    assert inside == str(scenario_dir / "curve.csv")
    assert resolve_inside(inside, scenario_dir, [scenario_dir], file=None, field="f") == inside


def test_a_curve_in_the_scenario_folder_is_read(capsys, scenario_dir):
    code, out, err = run(
        capsys,
        "project",
        str(scenario_dir / "seed.toml"),
        "--set",
        'throughput.measured.curve="curve.csv"',
        "--format",
        "json",
    )
    assert code == 0, err
    warnings = json.loads(out)["scenarios"][0]["summary"]["warnings"]
    assert any("curve.csv" in w for w in warnings)


@pytest.mark.parametrize("where", ["before", "after", "equals"])
def test_allow_paths_opens_a_folder_on_purpose(capsys, tmp_path, scenario_dir, where):
    other = tmp_path / "curves"
    other.mkdir()
    shutil.copy(CURVE, other / "run.csv")
    args = [
        "project",
        str(scenario_dir / "seed.toml"),
        "--set",
        f'throughput.measured.curve="{other / "run.csv"}"',
        "--format",
        "json",
    ]
    assert run(capsys, *args)[0] == 3
    if where == "before":
        args = ["--allow-paths", str(other), *args]
    elif where == "after":
        args = [*args, "--allow-paths", str(other)]
    else:
        args = [f"--allow-paths={other}", *args]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert json.loads(out)["scenarios"][0]["summary"]["lcot_usd_per_mtok"] > 0


def test_allow_paths_through_the_python_api(tmp_path, scenario_dir):
    other = tmp_path / "curves"
    other.mkdir()
    shutil.copy(CURVE, other / "run.csv")
    override = {"throughput.measured.curve": str(other / "run.csv")}
    with pytest.raises(ScenarioError, match="must stay inside"):
        load_scenario(scenario_dir / "seed.toml", override)
    assert load_scenario(scenario_dir / "seed.toml", override, allow_paths=[other])
    with allow_paths([other]):
        assert load_scenario(scenario_dir / "seed.toml", override)


def test_every_vintage_path_is_checked(secret):
    data = read_toml(ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml")
    from econ.scenario.paths import path_fields, resolve_paths

    data["vintages"][0].setdefault("throughput", {})["measured"] = {"curve": str(secret)}
    assert [f for f, _, _ in path_fields(data)] == ["vintages[0].throughput.measured.curve"]
    with pytest.raises(ScenarioError, match=r"vintages\[0\]\.throughput\.measured\.curve"):
        resolve_paths(data, ROOT / "models" / "scenarios", file="refresh.toml")


def test_the_app_refuses_server_paths_from_data(secret):
    data = read_toml(SEED)
    data["throughput"]["measured"] = {"curve": str(secret)}
    result = state.validate(data)
    assert not result.ok
    assert SECRET not in result.message and "models/" in result.message
    # A ready-made scenario's own folder is fine, and nothing outside models/ is.
    data["throughput"]["measured"] = {"curve": "../../../../../../etc/passwd"}
    assert not state.validate(data).ok


def test_a_link_naming_etc_passwd_shows_no_file_content():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.query_params["scenario"] = SEED.stem
    at.query_params["edits"] = state.encode({"throughput": {"measured": {"curve": "/etc/passwd"}}})
    at.run()
    assert not at.exception
    shown = " ".join(e.value for e in at.error)
    assert "throughput.measured.curve" in shown and "models/" in shown
    first_line = (
        Path("/etc/passwd").read_text().splitlines()[0]
        if Path("/etc/passwd").exists()
        else "root:x:"
    )
    everything = " ".join(str(e.value) for e in [*at.error, *at.warning, *at.info, *at.markdown])
    assert first_line not in everything and "root:x:" not in everything


def test_an_unrecognized_file_is_named_not_quoted(tmp_path):
    from econ.throughput.importers import CurveError, import_files

    path = tmp_path / "notes.txt"
    path.write_text(SECRET + "\n")
    with pytest.raises(CurveError) as info:
        import_files([path])
    assert "notes.txt" in str(info.value) and SECRET not in str(info.value)
    path.write_text(json.dumps({"secret_key_name": SECRET}))
    with pytest.raises(CurveError) as info:
        import_files([path])
    assert "secret_key_name" not in str(info.value) and SECRET not in str(info.value)


def test_an_unrecognized_inferencex_json_is_named_not_quoted(capsys, tmp_path):
    # the importer listed the object's keys ("keys: SECRETKEY_A, ...")
    path = tmp_path / "obj.json"
    path.write_text(json.dumps({"SECRETKEY_A": SECRET, "SECRETKEY_B": [1, 2], "conc": "x"}))
    code, _, err = run(capsys, "throughput", "import", "--format", "inferencex", str(path))
    assert code == 3 and f"{path}: record 1 is an object with 3 keys" in err
    assert "'hw' and 'conc'" in err and "not an InferenceX result" in err
    assert "SECRETKEY" not in err and SECRET not in err and "Traceback" not in err


# --- 3. inf and NaN; strict JSON -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("throughput.tokens_per_s_per_gpu", "inf"),
        ("opex.staff_usd_per_month", "inf"),
        ("capex.gpu_price_usd", "nan"),
        ("market.price_usd_per_mtok", "-inf"),
    ],
)
def test_non_finite_inputs_are_refused_with_the_field(capsys, tmp_path, field, value):
    code, out, err = run(
        capsys,
        "project",
        str(SEED),
        "--set",
        f"{field}={value}",
        "--format",
        "json",
        "--out",
        str(tmp_path / "x.csv"),
    )
    assert code == 3
    assert f"--set {field}={value} (over {SEED.name}): " in err and "finite" in err
    assert "Traceback" not in err and not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize(
    ("field", "value", "key"),
    [
        ("facility.m2_per_rack", "1e-310", "revenue_usd_per_m2_year"),
        # (a gain rate of 1e300 overflowed too, before its bound of 4: econ.scenario.gain_models)
        ("market.price_usd_per_mtok", "1e300", "npv_usd"),
    ],
)
def test_overflowing_inputs_give_named_nulls_in_strict_json(capsys, field, value, key):
    code, out, err = run(
        capsys, "project", str(SEED), "--set", f"{field}={value}", "--format", "json"
    )
    assert code == 0, err
    assert "Warning" not in err  # no numpy RuntimeWarning noise

    def refuse(token):
        raise AssertionError(f"non-strict JSON token {token}")

    summary = json.loads(out, parse_constant=refuse)["scenarios"][0]["summary"]
    assert summary[key] is None
    assert any(key in w and "overflow" in w for w in summary["warnings"])


def test_finite_replaces_every_non_finite_number():
    import numpy as np

    value = {"a": float("nan"), "b": [1.0, float("inf"), np.float64("-inf")], "c": np.float32(2)}
    assert finite(value) == {"a": None, "b": [1.0, None, None], "c": 2.0}
    assert "NaN" not in dumps(value) and "Infinity" not in dumps(value)


# --- 4. nulls with reasons; meaningless discount rates --------------------------------------------


def test_every_null_names_its_key_in_a_warning():
    for path in sorted((ROOT / "models" / "scenarios").glob("*.toml")):
        for record in project(load_scenario(path)).summary_records():
            summary = record["summary"]
            said = " ".join(summary["warnings"])
            for key, value in summary.items():
                if value is None:
                    assert key in said, (path.name, key, summary["warnings"])


def test_tiny_debt_explains_the_missing_dscr():
    summary = project(load_scenario(SEED, {"financing.debt_share": 1e-12})).summary_records()
    s = summary[0]["summary"]
    assert s["min_dscr"] is None
    assert any(w.startswith("min_dscr") and "debt service" in w for w in s["warnings"])


def test_explain_groups_reasons_and_skips_named_keys():
    import numpy as np

    metrics = {
        "min_dscr": np.array([np.nan, 1.2]),
        "min_llcr": np.array([np.nan, 1.5]),
        "first_breach_month": np.array([np.nan, np.nan]),
    }
    out = explain([["no debt: min_dscr is null"], []], metrics)
    assert out[0] == [
        "no debt: min_dscr is null",
        f"min_llcr is null: {REASONS['min_llcr']}",
        f"first_breach_month is null: {REASONS['first_breach_month']}",
    ]
    assert out[1] == [f"first_breach_month is null: {REASONS['first_breach_month']}"]
    # A key that only appears inside a longer name is not taken as named.
    assert len(explain([["min_dscr_floor was set"]], {"min_dscr": np.array([np.nan])})[0]) == 2


def test_mask_infinite_marks_rows():
    import numpy as np

    metrics = {"a": np.array([1.0, np.inf, -np.inf]), "b": np.array([1.0, 2.0, 3.0])}
    overflowed = mask_infinite(metrics)
    assert list(overflowed) == ["a"] and overflowed["a"].tolist() == [False, True, True]
    assert np.isnan(metrics["a"][1:]).all()
    out = explain([[], [], []], metrics, overflowed)
    assert out[0] == [] and "overflow" in out[1][0]


@pytest.mark.parametrize("rate", ["-0.999999999", "-0.6", "1.5"])
def test_meaningless_discount_rates_are_refused_with_bounds(capsys, rate):
    code, _, err = run(
        capsys, "project", str(SEED), "--set", f"financing.discount_rate_annual={rate}"
    )
    assert code == 3 and "discount_rate_annual" in err
    assert "-0.5" in err or "1" in err


# --- 5-7. parser-breaking input ---------------------------------------------------------------------


def test_a_nul_byte_in_a_path_exits_3(capsys):
    code, _, err = run(capsys, "validate", "models/scenarios/a\x00b.toml")
    assert code == 3 and "NUL" in err and "Traceback" not in err
    code, _, err = run(capsys, "project", str(SEED), "--set", 'throughput.measured.curve="a\x00b"')
    assert code == 3 and "NUL" in err


@pytest.mark.parametrize("kind", ["array", "table"])
def test_toml_nested_5000_deep_exits_3(capsys, tmp_path, kind):
    path = tmp_path / "deep.toml"
    if kind == "array":
        path.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    else:
        path.write_text("a = " + "{b = " * 5000 + "1" + "}" * 5000 + "\n")
    code, _, err = run(capsys, "validate", str(path))
    assert code == 3 and "nested too deeply" in err and str(path) in err


def test_an_override_nested_5000_deep_exits_3(capsys):
    code, _, err = run(capsys, "project", str(SEED), "--set", "x=" + "[" * 5000 + "]" * 5000)
    assert code == 3 and "nested too deeply" in err


def test_a_link_nested_5000_deep_is_refused():
    import base64
    import zlib

    text = "{" + '"a":{' * 5000 + "}" * 5001
    raw = base64.urlsafe_b64encode(zlib.compress(text.encode())).decode().rstrip("=")
    with pytest.raises(ScenarioError, match="not an encoded scenario"):
        state.decode(raw)


def test_a_cut_short_file_is_refused_and_defaults_are_listed(capsys, tmp_path):
    head = tmp_path / "head.toml"
    head.write_text("\n".join(SEED.read_text().splitlines()[:20]) + "\n")
    code, _, err = run(capsys, "project", str(head))
    assert code == 3 and "[capex]" in err and "[market]" in err and str(head) in err
    comments = tmp_path / "comments.toml"
    comments.write_text("# just a comment\n")
    code, out, err = run(capsys, "validate", str(comments))
    assert code == 3 and "ok" not in out and "[fleet]" in err
    # A file with the four required tables validates and says which sections are defaults.
    data = read_toml(SEED)
    minimal = {k: data[k] for k in ("name", "fleet", "throughput", "capex", "market")}
    import tomli_w

    small = tmp_path / "small.toml"
    small.write_text(tomli_w.dumps(minimal))
    code, out, err = run(capsys, "validate", str(small))
    assert code == 0, err
    assert "defaults for utilization, depreciation, power, facility, opex, financing" in out
    code, out, err = run(capsys, "project", str(small), "--format", "json")
    warnings = json.loads(out)["scenarios"][0]["summary"]["warnings"]
    assert any(w.startswith("sections taken from defaults") and "opex" in w for w in warnings)


def test_a_byte_order_mark_is_accepted(capsys, tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + SEED.read_bytes())
    code, out, err = run(capsys, "validate", str(path))
    assert code == 0, err
    assert validate_dict(read_toml(path)) == load_scenario(SEED)


# --- 8. errors raised at projection time name the file ---------------------------------------------


def test_errors_at_projection_time_name_the_file(capsys, tmp_path):
    path = tmp_path / "history.toml"
    path.write_text(SEED.read_text())
    code, _, err = run(
        capsys,
        "project",
        str(path),
        "--set",
        'throughput.history={model="nonsense", scenario="Server"}',
    )
    assert code == 3 and err.startswith(f"error: {path}: throughput.history")
    scenario = load_scenario(path)
    assert scenario.source_file == str(path)
    assert scenario == validate_dict(read_toml(path))  # the file is not part of equality


# --- the harness -----------------------------------------------------------------------------------


def test_generated_scenarios_are_refused_or_project_to_explained_strict_json():
    counts, failures = fuzz_scenarios.run(cases=int(os.environ.get("ECON_FUZZ_CASES", 300)), seed=7)
    assert not failures, failures[:3]
    assert counts["refused"] > 0 and counts["projected"] > 0


@pytest.mark.parametrize("parts", [33, 500, 5000])
def test_dotted_keys_and_table_headers_nested_deep_exit_3(capsys, tmp_path, parts):
    for name, text in (
        ("dotted.toml", ".".join(["a"] * parts) + " = 1\n"),
        ("header.toml", "[" + ".".join(["a"] * parts) + "]\n"),
    ):
        path = tmp_path / name
        path.write_text(text)
        code, _, err = run(capsys, "validate", str(path))
        assert code == 3 and "nested too deeply" in err and str(path) in err, err
        assert "Traceback" not in err


def test_a_device_or_an_oversized_file_is_refused_unread(capsys, tmp_path):
    code, _, err = run(capsys, "validate", "/dev/zero")
    assert code == 3 and "/dev/zero: not a regular file" in err
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)  # opening it to read would wait for a writer forever
    code, _, err = run(capsys, "validate", str(fifo))
    assert code == 3 and "not a regular file" in err
    big = tmp_path / "big.toml"
    with big.open("wb") as handle:  # sparse: no disk used
        handle.truncate(17 * 1024 * 1024)
    code, _, err = run(capsys, "validate", str(big))
    assert code == 3 and "larger than 1 MB" in err


def test_the_command_line_and_the_app_take_scenario_files_of_1_mb(capsys, tmp_path):
    """A 14 MB file, one array of 7 million integers, took tomllib 23 s and 640 MB before its
    unknown field was refused (the limit was 16 MB); the app's upload box took 1 MB."""
    from econ.scenario.io import MAX_SCENARIO_BYTES
    from econ.ui.pages import scenario as page

    assert MAX_SCENARIO_BYTES == 2**20 and page.MAX_SCENARIO_BYTES is MAX_SCENARIO_BYTES
    largest = max(p.stat().st_size for p in (ROOT / "models" / "scenarios").glob("*.toml"))
    assert largest < MAX_SCENARIO_BYTES // 50
    # a table with a point in every month a point may name (-600 to 1,200), as econ writes it
    table = [{"month": m, "price_usd_per_mtok": 0.1 + (m + 600) / 7e3} for m in range(-600, 1201)]
    assert len(tomli_w.dumps({"market": {"price_table": table}})) < MAX_SCENARIO_BYTES // 5
    text = SEED.read_text(encoding="utf-8")
    pad = MAX_SCENARIO_BYTES - len(text.encode())
    exact = tmp_path / "exact.toml"
    exact.write_text(text + "#" * (pad - 1) + "\n", encoding="utf-8")
    assert exact.stat().st_size == MAX_SCENARIO_BYTES
    code, out, err = run(capsys, "validate", str(exact))
    assert code == 0 and ": ok (" in out, err
    over = tmp_path / "over.toml"
    over.write_text(text + "#" * pad + "\n", encoding="utf-8")
    code, out, err = run(capsys, "validate", str(over))
    assert code == 3 and out == ""
    assert err == f"error: {over}: larger than 1 MB; expected a TOML scenario file\n"


def test_a_long_value_is_cut_in_a_message(capsys, tmp_path):
    path = tmp_path / "long.toml"
    path.write_text("nonsense = '" + "A" * 100_000 + "'\n" + SEED.read_text())
    code, _, err = run(capsys, "validate", str(path))
    assert code == 3 and "nonsense" in err
    assert len(err) < 2_000 and "(100,002 characters)" in err


# --- 9. names reach terminals; dates reach spreadsheets --------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", "\x1b[31mRED\x1b[0m\r\nfake line"),  # ANSI colour and a forged line
        ("name", "osc\x1b]52;c;ZWNobyBwd25lZA==\x07"),  # OSC 52 writes the clipboard
        ("name", "tab\there"),
        ("name", "c1\x9b2J"),  # the one-byte CSI
        ("vintages", [{"name": "gb300\x1b[2J"}]),
        ("fleet.hardware", "gb200-nvl72\x1b[2J"),
        ("sources.capex.system_price_usd", "a quote\rforged line"),
        ("throughput.source", "MLPerf\x1b]8;;http://x\x07"),
    ],
)
def test_control_characters_in_names_are_refused(capsys, tmp_path, field, value):
    import tomli_w

    data = read_toml(SEED)
    section, _, key = field.partition(".")
    if key:
        data.setdefault(section, {})[key] = value
    else:
        data[field] = value
    path = tmp_path / "ansi.toml"
    path.write_text(tomli_w.dumps(data))
    code, out, err = run(capsys, "validate", str(path))
    assert code == 3 and "a control character" in err
    assert "expected a name or one-line text of printable" in err
    assert not any(c in out + err for c in "\x1b\x07\x9b\r\t")  # quoted escaped, never raw
    assert field.split(".")[-1] in err and str(path) in err


def test_a_description_takes_lines_and_tabs_but_no_escape_sequence(capsys, tmp_path):
    import tomli_w

    data = read_toml(SEED)
    data["description"] = "First line\n\tindented second line"
    path = tmp_path / "lines.toml"
    path.write_text(tomli_w.dumps(data))
    assert load_scenario(path).description == "First line\n\tindented second line"
    data["description"] = "Looks fine\x1b[8m hidden until the terminal is reset"
    path.write_text(tomli_w.dumps(data))
    code, out, err = run(capsys, "validate", str(path))
    assert code == 3 and "description = 'Looks fine\\x1b[8m" in err
    assert "expected text of printable characters, line feeds and tabs" in err
    assert "\x1b" not in out + err


def test_printable_names_of_any_script_are_accepted():
    for name in ("Ωmega-gb300 (ラック 2)", "a name with spaces", "ü/é"):
        assert load_scenario(SEED, {"name": name}).name == name


@pytest.mark.parametrize(
    ("start", "expected"),
    [
        ("0001-01-01", "start_date = 0001-01-01: expected a date from 1900-01-01 on"),
        ("1899-12-31", "start_date = 1899-12-31: expected a date from 1900-01-01 on"),
        ("9999-12-01", "with a horizon of 72 months ends in 10005-12; expected a start_date"),
        ("9994-01-01", "ends in 10000-01"),
    ],
)
def test_start_date_is_bounded_by_the_dates_spreadsheets_show(capsys, start, expected):
    # 9999-12-01 wrote CSV dates up to 10005-12-01, and 0001-01-01 dates no spreadsheet shows
    code, out, err = run(capsys, "project", str(SEED), "--set", f"start_date={start}")
    assert code == 3 and expected in err and str(SEED) in err and out == ""


@pytest.mark.parametrize("start", ["1900-01-01", "9993-12-01"])
def test_the_first_and_last_start_dates_project(start):
    scenario = load_scenario(SEED, {"start_date": start})
    assert scenario.horizon == 72  # 9993-12 + 72 months = 9999-12, the last month shown
    seed = load_scenario(SEED)
    npv = project(scenario).summary.iloc[0]["npv_usd"]
    # the calendar changes nothing in the seed's figures (its prices fall by month, not by date)
    assert npv == pytest.approx(project(seed).summary.iloc[0]["npv_usd"], rel=1e-9)


# --- 10. every input is read as a bounded, regular file ---------------------------------------------


@contextlib.contextmanager
def unblocked(fifo: Path):
    """While inside, a reader that opens `fifo` waiting for a writer is let go at once (a writer
    opens it and closes it: the reader sees an empty file), so a test of a reader that blocks
    fails instead of hanging the suite."""
    stop = threading.Event()

    def writer():
        while not stop.wait(0.05):
            try:  # ENXIO while no reader has it open
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@pytest.mark.parametrize("command", ["project", "memo"])
def test_a_scenario_whose_curve_is_a_fifo_in_its_folder_exits_3(capsys, scenario_dir, command):
    fifo = scenario_dir / "fifo.csv"
    os.mkfifo(fifo)
    args = [
        command,
        str(scenario_dir / "seed.toml"),
        "--set",
        'throughput.measured.curve="fifo.csv"',
    ]
    if command == "memo":
        args += ["--out", str(scenario_dir / "memo.html")]
    with unblocked(fifo):
        code, out, err = run(capsys, *args)
    assert code == 3 and "Traceback" not in err
    assert str(fifo) in err and "not a regular file but a FIFO" in err and "256 MB" in err
    assert not (scenario_dir / "memo.html").exists()


def _scenario_with_curve(folder: Path, curve: str, fmt: str = "auto") -> Path:
    from econ.scenario import apply_overrides, toml_ready

    sets = [f"throughput.measured.curve={json.dumps(curve)}", f'throughput.measured.format="{fmt}"']
    data = apply_overrides(read_toml(SEED), sets)
    path = folder / f"with-{curve}.toml"
    path.write_text(tomli_w.dumps(toml_ready(data)), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("curve", "fmt", "make", "said"),
    [
        ("missing.csv", "auto", None, "missing.csv: no such file"),
        ("missing.zip", "auto", None, "missing.zip: no such file"),  # project: a traceback
        ("fifo.csv", "auto", os.mkfifo, "fifo.csv: not a regular file but a FIFO"),
        ("fifo.zip", "auto", os.mkfifo, "a zipped MLPerf Endpoints submission tree, a regular"),
        ("folder.csv", "generic-csv", os.mkdir, "folder.csv: is a folder, expected a benchmark"),
        ("big.csv", "auto", lambda p: p.write_bytes(b"x" * 2048), "big.csv: larger than 1 kB"),
    ],
)
def test_validate_fails_as_project_fails_on_a_curve_file_it_cannot_open(
    capsys, scenario_dir, monkeypatch, curve, fmt, make, said
):
    # validate said ok of a scenario whose curve file was missing, and project then failed
    if make:
        make(scenario_dir / curve)
    monkeypatch.setattr(_common, "MAX_SOURCE_BYTES", 1024)
    path = _scenario_with_curve(scenario_dir, curve, fmt)
    code, out, validated = run(capsys, "validate", str(path))
    assert code == 3 and out == "" and "Traceback" not in validated
    with contextlib.ExitStack() as stack:
        if make is os.mkfifo:
            stack.enter_context(unblocked(scenario_dir / curve))
        code, _, projected = run(capsys, "project", str(path))
    assert code == 3 and projected == validated  # the same message, naming the file
    assert validated.startswith(f"error: {path}: throughput.measured: {scenario_dir}/{curve}: ")
    assert said in validated


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file of any mode")
def test_validate_fails_on_a_curve_file_it_may_not_read(capsys, scenario_dir):
    (scenario_dir / "curve.csv").chmod(0)
    path = _scenario_with_curve(scenario_dir, "curve.csv")
    code, _, err = run(capsys, "validate", str(path))
    assert code == 3 and "curve.csv: cannot be read (Permission denied)" in err


def test_validate_passes_a_real_curve_file(capsys, scenario_dir):
    code, out, err = run(capsys, "validate", str(_scenario_with_curve(scenario_dir, "curve.csv")))
    assert code == 0 and ": ok (" in out, err


@pytest.mark.parametrize("curve", ["tree", "wrong.csv"])
def test_validate_reads_a_curve_file_as_project_does(capsys, scenario_dir, curve):
    # validate opened the file but did not read it: an empty submission folder and a CSV that
    # is no benchmark's output passed validate ("ok") and failed at projection
    if curve == "tree":
        (scenario_dir / "tree").mkdir()
    else:
        (scenario_dir / curve).write_text("a,b\n1,2\n", encoding="utf-8")
    path = _scenario_with_curve(scenario_dir, curve)
    code, out, validated = run(capsys, "validate", str(path))
    assert code == 3 and out == "" and "Traceback" not in validated
    code, _, projected = run(capsys, "project", str(path))
    assert code == 3 and projected == validated
    assert validated.startswith(f"error: {path}: throughput.measured: {scenario_dir}/{curve}: ")


def test_throughput_import_refuses_a_fifo_a_folder_and_an_oversized_file(
    capsys, tmp_path, monkeypatch
):
    fifo = tmp_path / "result.json"
    os.mkfifo(fifo)
    with unblocked(fifo):
        code, _, err = run(capsys, "throughput", "import", str(fifo))
    assert code == 3 and f"{fifo}: not a regular file but a FIFO" in err
    with pytest.raises(CurveError, match="is a folder"):
        read_source(tmp_path)
    big = tmp_path / "big.csv"
    big.write_bytes(b"x" * 2048)
    monkeypatch.setattr(_common, "MAX_SOURCE_BYTES", 1024)
    code, _, err = run(capsys, "throughput", "import", str(big))
    assert code == 3 and f"{big}: larger than 1 kB" in err


def test_throughput_import_of_dev_zero_stops_at_once():
    """Before the bound, /dev/zero was read until memory ran out: run in a child process with
    2 GB of address space and a time limit, so that a regression fails instead of swapping."""

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (2_000_000_000, 2_000_000_000))

    done = subprocess.run(
        [sys.executable, "-m", "econ", "throughput", "import", "/dev/zero"],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit_memory,
        cwd=ROOT,
    )
    assert done.returncode == 3, done.stderr[-500:]
    assert "/dev/zero: not a regular file but a character device" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_market_index_that_is_a_fifo_or_a_device_is_refused(tmp_path):
    fifo = tmp_path / "index.csv"
    os.mkfifo(fifo)
    with unblocked(fifo), pytest.raises(RentalIndexError, match="not a regular file but a FIFO"):
        read_text(fifo, "rental index file", RentalIndexError)
    with pytest.raises(RentalIndexError, match="character device.*at most 1 kB"):
        read_text("/dev/zero", "rental index file", RentalIndexError, limit=1024)
    big = tmp_path / "big.csv"
    big.write_bytes(b"x" * 1025)
    with pytest.raises(RentalIndexError, match=f"{big}: larger than 1 kB"):
        read_text(big, "rental index file", RentalIndexError, limit=1024)


def test_read_regular_checks_again_after_opening_and_never_waits(tmp_path, monkeypatch):
    fifo = tmp_path / "swapped"
    os.mkfifo(fifo)
    real, calls = files._check_regular, []

    def regular_at_first(path, info, limit, expected):
        calls.append(path)
        if len(calls) > 1:  # the check by path passes, as for a file swapped for a FIFO after it
            real(path, info, limit, expected)

    monkeypatch.setattr(files, "_check_regular", regular_at_first)
    with pytest.raises(files.ReadError, match="FIFO"):  # (a blocking open would wait forever)
        files.read_regular(fifo, 100, "a file")
    assert len(calls) == 2
    monkeypatch.undo()
    exact = tmp_path / "exact"
    exact.write_bytes(b"y" * 100)
    assert files.read_regular(exact, 100, "a file") == b"y" * 100
    with pytest.raises(files.ReadError, match="larger than 99 bytes; expected a file"):
        files.read_regular(exact, 99, "a file")
    with pytest.raises(IsADirectoryError):
        files.read_regular(tmp_path, 100, "a file")
    with pytest.raises(files.ReadError, match="/dev/null: not a regular file but a character"):
        files.read_regular("/dev/null", 100, "a file")


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_project_on_stdout_names_no_folder_of_the_machine(capsys, scenario_dir, fmt):
    # --format json/csv on stdout (redirected to share) named the curve by this machine's folder
    # in its warnings, where the --out file of the same projection names it by its file name
    path = _scenario_with_curve(scenario_dir, "curve.csv")
    code, out, _ = run(capsys, "project", str(path), "--format", fmt)
    assert code == 0 and "curve.csv" in out and str(scenario_dir) not in out
    written = scenario_dir / f"p.{fmt}"
    code, _, _ = run(capsys, "project", str(path), "--out", str(written))
    file_text = (written.with_name(f"p.summary.{fmt}") if fmt == "csv" else written).read_text()

    def stable(text):  # the creation time differs between the two runs
        return re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z?", "T", text)

    assert code == 0 and stable(out) == stable(file_text)


def test_a_source_given_for_the_curve_travels_with_its_figures(capsys, scenario_dir):
    # A [sources] line for throughput.measured.curve (the curve's origin, or `--set`'s record
    # "overridden") made every file econ writes refuse the scenario: the embedded scenario, its
    # curve resolved to figures, named a field it no longer had
    from econ.embedding import embeddable
    from econ.scenario import load_scenario

    path = _scenario_with_curve(scenario_dir, "curve.csv")
    text = path.read_text(encoding="utf-8")
    text = text.replace("[sources]\n", '[sources]\n"throughput.measured" = "vLLM run, rack 12"\n')
    path.write_text(text, encoding="utf-8")
    code, _, err = run(capsys, "project", str(path), "--out", str(scenario_dir / "p.json"))
    assert code == 0, err
    sources = embeddable(load_scenario(path)).sources
    assert not [key for key in sources if key.startswith("throughput.measured")]
    said = sources["throughput.tokens_per_s_per_gpu"]
    assert said.startswith("measured curve curve.csv (SHA-256 ")
    assert "throughput.measured: vLLM run, rack 12" in said
    assert "throughput.measured.curve: overridden (was: not set)" in said


def test_a_curve_scenarios_outputs_join_on_one_hash_and_name_no_folder(capsys, scenario_dir):
    # A sweep's metadata hashed the scenario as read, `econ project` its outputs the scenario
    # as embedded (the curve resolved), so the two no longer joined; and `--format csv` and
    # `--out` printed warnings naming this machine's folder on stderr
    path = _scenario_with_curve(scenario_dir, "curve.csv")
    code, out, err = run(capsys, "project", str(path), "--format", "json")
    assert code == 0, err
    projected = json.loads(out)["provenance"]["scenarios"][0]["sha256"]
    grid = ("--grid", "utilization.share=0.5,0.6", "--format", "json")
    code, out, err = run(capsys, "sweep", str(path), *grid)
    assert code == 0, err
    assert json.loads(out)["metadata"]["scenario_sha256"] == projected
    for args in (("--format", "csv"), ("--out", str(scenario_dir / "p.csv"))):
        code, _, err = run(capsys, "project", str(path), *args)
        warned = "\n".join(line for line in err.splitlines() if line.startswith("warning"))
        assert code == 0 and "curve.csv" in warned and str(scenario_dir) not in warned, err
