"""The importers' shared plausibility checks (issue 15 items 9 and 10): values no measurement can
have are refused with the file, field and value named; possible but unusual ones are warned about;
a field that is present but not a number is an error, and a decimal comma is never guessed."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from econ.cli import main
from econ.errors import InputError
from econ.throughput.importers import import_file
from econ.throughput.importers._common import (
    MAX_LATENCY_S,
    UNKNOWN_HARDWARE_CEILING_TOKENS_PER_S_PER_GPU,
    ImplausibleValueError,
    NotANumberError,
    catalog_ceiling,
    catalog_hardware,
    catalog_model,
    ceiling_for,
    count_from_ratio,
    gpu_count_from_text,
    number,
)
from econ.throughput.simulator import speed_of_light
from tests.conftest import ROOT, SHARED_DATA, needs_shared_data

DATA = ROOT / "tests" / "data" / "throughput"
SGLANG = (
    SHARED_DATA
    / "samples"
    / "sglang"
    / "bowenwan6-sglang-dev-qwen3vl8b-image-conc1-with-server_info.jsonl"
)


def vllm_file(tmp_path: Path, **changes) -> Path:
    record = json.loads((DATA / "vllm_bench_serve_sweep.jsonl").read_text().splitlines()[0])
    record.update(changes)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(record))
    return path


def sglang_file(tmp_path: Path, **changes) -> Path:
    record = json.loads(SGLANG.read_text().splitlines()[0])
    record.update(changes)
    path = tmp_path / "sglang.jsonl"
    path.write_text(json.dumps(record))
    return path


# --- item 10: a present field that is not a number -------------------------------------------


@pytest.mark.parametrize("value", ["8,2", "abc", True, "many", [8.2], {"v": 1}, "8.2.1"])
def test_a_field_that_is_not_a_number_is_an_error_naming_the_field(tmp_path: Path, value):
    path = vllm_file(tmp_path, mean_tpot_ms=value)
    with pytest.raises(NotANumberError, match=r"run\.json: field 'mean_tpot_ms'"):
        import_file(path)


def test_locale_comma_is_never_guessed():
    with pytest.raises(NotANumberError, match="thousands separator"):
        number("8,2", field="mean_tpot_ms")
    with pytest.raises(NotANumberError):
        number("1,5e3")
    # thousands separators between groups of three digits, as GenAI-Perf's CSV writes them
    assert number("5,494.07") == 5494.07
    assert number("1,000") == 1000.0


def test_missing_markers_are_nan_and_infinity_is_refused_unless_allowed():
    for missing in (None, "", "null", "N/A", "nan", "-"):
        assert math.isnan(number(missing))
    with pytest.raises(NotANumberError, match="infinite"):
        number(float("inf"), field="output_throughput")
    assert number("inf", allow_inf=True) == math.inf
    with pytest.raises(NotANumberError, match="too large"):
        number(10**400)


def test_not_a_number_through_the_cli_is_exit_3(tmp_path: Path, capsys):
    path = vllm_file(tmp_path, output_throughput="many")
    assert main(["throughput", "import", str(path)]) == 3
    err = capsys.readouterr().err
    assert "output_throughput" in err and "run.json" in err and "Traceback" not in err


# --- item 9: what cannot be a measurement -------------------------------------------------------


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"mean_tpot_ms": 1e18}, "tpot_s_mean"),
        ({"p99_ttft_ms": 1e300}, "ttft_s_p99"),
        ({"completed": 1e-300}, "completed_requests"),
        ({"completed": 10.5}, "completed_requests"),
        ({"p99_ttft_ms": 40.0}, "ttft_s_p99"),  # below the median of 45 ms
        ({"mean_ttft_ms": -5.0}, "ttft_s_mean"),
        ({"output_throughput": 1e15}, "output_tokens_per_s_per_gpu"),
    ],
)
def test_absurd_vllm_values_are_refused(tmp_path: Path, changes: dict, field: str):
    with pytest.raises(InputError, match=rf"run\.json: the run: .*{field}"):
        import_file(vllm_file(tmp_path, **changes))


@needs_shared_data
def test_sglang_output_above_the_ceiling_is_refused_naming_field_and_value(tmp_path: Path):
    path = sglang_file(tmp_path, output_throughput=1e15)
    with pytest.raises(ImplausibleValueError) as info:
        import_file(path)
    message = str(info.value)
    assert "sglang.jsonl" in message and "output_tokens_per_s_per_gpu is 1e+15" in message
    assert f"{UNKNOWN_HARDWARE_CEILING_TOKENS_PER_S_PER_GPU:,.0f}" in message


@pytest.mark.parametrize("gpus", [1e-300, 2.5, 0, -8, math.inf, math.nan, 1e9])
def test_gpu_count_must_be_a_positive_integer(gpus):
    with pytest.raises(ImplausibleValueError, match=r"GPU count \(--gpus\)"):
        import_file(DATA / "vllm_bench_serve_sweep.jsonl", gpu_count=gpus)


def test_gpus_flag_through_the_cli_is_exit_3(capsys):
    code = main(
        ["throughput", "import", str(DATA / "vllm_bench_serve_sweep.jsonl"), "--gpus", "1e-300"]
    )
    assert code == 3
    assert "whole number of GPUs" in capsys.readouterr().err


def test_unusual_but_possible_values_are_kept_with_a_warning(tmp_path: Path):
    record = json.loads((DATA / "vllm_bench_serve_sweep.jsonl").read_text().splitlines()[0])
    curve = import_file(vllm_file(tmp_path, completed=5, mean_ttft_ms=700_000.0, p99_ttft_ms=9e5))
    assert curve.points["completed_requests"].iloc[0] == 5
    assert any("only 5 completed requests" in w for w in curve.warnings)
    assert any("mean TTFT 700 s is unusually long" in w for w in curve.warnings)
    assert record["completed"] != 5  # the mutation is what made it unusual


def test_latency_bound():
    assert MAX_LATENCY_S == 1e6


# --- the ceiling --------------------------------------------------------------------------------


def test_catalog_names():
    assert catalog_hardware("H200-SXM-141GBx8_TRT") == "h200-sxm"
    assert catalog_hardware("NVIDIA GB200 NVL72") == "gb200-nvl72"
    assert catalog_hardware("9x8xMI355X_2xEPYC_9575F") == "mi355x"
    assert catalog_hardware("NVIDIA L40S") == ""
    assert catalog_model("meta-llama/Llama-2-70b-chat-hf") == "llama2-70b"
    assert catalog_model("llama2-70b-99") == "llama2-70b"
    assert catalog_model("meta-llama/Meta-Llama-3.1-8B-Instruct") == "llama3.1-8b"
    # a distilled or resized variant never borrows a bigger model's ceiling
    assert catalog_model("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B") == ""
    assert catalog_model("meta-llama/Llama-3.2-3B-Instruct") == ""


def test_catalog_ceiling_is_the_largest_speed_of_light_over_lengths():
    ceiling = catalog_ceiling("h200-sxm", "llama2-70b")
    for isl, osl in ((128, 128), (1000, 300), (1024, 4096)):
        assert ceiling >= speed_of_light(
            "h200-sxm", "llama2-70b", input_tokens=isl, output_tokens=osl
        )
    assert ceiling < UNKNOWN_HARDWARE_CEILING_TOKENS_PER_S_PER_GPU
    assert ceiling_for("H200", "llama2-70b") == (
        ceiling,
        "the speed of light of llama2-70b on h200-sxm",
    )
    assert (
        ceiling_for("NVIDIA L40S", "llama2-70b")[0] == UNKNOWN_HARDWARE_CEILING_TOKENS_PER_S_PER_GPU
    )


def generic_curve(
    tmp_path: Path, per_gpu: float, hardware="NVIDIA H200", model="llama2-70b"
) -> Path:
    path = tmp_path / "curve.csv"
    path.write_text(
        "concurrency,output_tokens_per_s,gpu_count,hardware,model\n"
        f"8,{per_gpu * 8!r},8,{hardware},{model}\n"
    )
    return path


def test_per_gpu_above_the_catalog_speed_of_light_is_refused(tmp_path: Path):
    ceiling = catalog_ceiling("h200-sxm", "llama2-70b")
    with pytest.raises(ImplausibleValueError, match="speed of light of llama2-70b on h200-sxm"):
        import_file(generic_curve(tmp_path, ceiling * 1.01))
    curve = import_file(generic_curve(tmp_path, ceiling * 0.99))
    assert curve.points["output_tokens_per_s_per_gpu"].iloc[0] == pytest.approx(ceiling * 0.99)
    assert any("unusually high" in w for w in curve.warnings)
    # the same rate on hardware the catalog does not know is only bounded by 1e7
    assert (
        len(import_file(generic_curve(tmp_path, ceiling * 1.01, hardware="NVIDIA L40S")).points)
        == 1
    )


def test_system_rate_without_a_gpu_count_is_bounded(tmp_path: Path):
    path = tmp_path / "curve.csv"
    path.write_text("concurrency,output_tokens_per_s\n8,1e15\n")
    with pytest.raises(ImplausibleValueError, match="output_tokens_per_s is 1e\\+15"):
        import_file(path)


def test_gpu_counts_in_names():
    assert gpu_count_from_text("9x8xMI355X_2xEPYC_9575F") == (72.0, "a '<nodes>x<N>x<GPU>' pattern")
    assert gpu_count_from_text("2xEPYC_9575F_8xMI300X")[0] == 8.0
    assert gpu_count_from_text("H200-SXM-141GBx8_TRT")[0] == 8.0
    assert count_from_ratio(8000.0, 999.99) == 8.0
    assert math.isnan(count_from_ratio(8000.0, 1300.0))  # 6.15 GPUs is not a count


def test_no_published_mlperf_result_exceeds_its_ceiling():
    """Every tokens/s row of the MLPerf catalog (real results) stays under the ceiling that would
    refuse it; a ceiling below a published result would refuse real measurements."""
    from econ import benchmarks

    catalog = benchmarks.load_catalog()
    tokens = catalog[catalog["metric_unit"].astype(str).str.contains("token", case=False)]
    checked = 0
    for (hardware, family), group in tokens.groupby(["hardware_key", "benchmark_family"]):
        ceiling, basis = ceiling_for(str(hardware), str(family))
        assert group["tokens_per_s_per_gpu"].max() <= ceiling, (hardware, family, basis)
        checked += basis.startswith("the speed of light")
    assert checked >= 20  # the catalog ceilings, not only the 1e7 fallback, were tested
