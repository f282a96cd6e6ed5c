"""MLPerf Inference LoadGen logs: `mlperf_log_summary.txt` and `mlperf_log_detail.txt`.

The summary is `Key : value` text; the detail log holds `:::MLLOG {json}` lines with `key`/`value`.
Latencies are nanoseconds (the summary says so in each key). Throughput is for the whole system
under test: the GPU count is not in the log, only in the submission's system description
(`systems/<Platform>.json`) or the platform name in the results path
(`.../results/<Platform>/<benchmark>/<scenario>/...`, e.g. `H200-SXM-141GBx8_TRT` or the multi-node
`9x8xMI355X_2xEPYC_9575F`), which also names the benchmark and the scenario: LoadGen logs an
Interactive run as Server, and the SUT name can be a generic `PySUT`. Server and Interactive runs
report completed tokens/s at the scheduled Poisson rate; Offline runs report tokens/s with no
latency bound. LoadGen 6.x prints "Time per Output Token" where earlier versions print "Time to
Output Token".
`result_token_throughput` in v4.1 detail logs is a bogus 8e-09 and is never used.
See ../shared/data/samples/FORMATS.md and the MLPerf Inference LoadGen documentation.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from econ.files import inside_folders, read_regular
from econ.labels import apart
from econ.strict_json import OverlongNumberError, load_json
from econ.text import shortened
from econ.throughput.curve import Curve
from econ.throughput.importers._common import (
    MAX_SOURCE_BYTES,
    MS_PER_S,
    NOT_READ,
    NS_PER_S,
    CurveError,
    NotANumberError,
    Provenance,
    SourceFile,
    apply_gpu_count,
    companion_refusal,
    description_not_used,
    finish_curve,
    first_number,
    gpu_count_from_text,
    label_pairs,
    number,
    results_folder_index,
)

MLLOG = ":::MLLOG"
NS_PER_MS = NS_PER_S / MS_PER_S
PERCENTILES = {"p50": "50.00", "p90": "90.00", "p95": "95.00", "p99": "99.00"}
SCENARIOS = ("Server", "Offline", "Interactive", "SingleStream", "MultiStream")
# LoadGen <= 5.x prints "Time to Output Token", 6.x "Time per Output Token"
TPOT_NAMES = ("time to output token", "time per output token")
BENCHMARK = re.compile(
    r"(llama2-70b|llama3\.1-405b|llama3\.1-8b|mixtral-8x7b|deepseek-r1|gpt-oss-120b|"
    r"qwen3-vl-235b-a22b|gptj|gpt-j|stable-diffusion-xl|dlrm-v2|bert|rgat|whisper)"
    r"(?:-(?:99\.9|99|interactive))*",
    re.I,
)


def looks_like_summary(text: str) -> bool:
    return "MLPerf Results Summary" in text[:2000]


def looks_like_system(record: dict) -> bool:
    """A submission's system description (`systems/<Platform>.json`), not a result."""
    return "accelerators_per_node" in record and "system_name" in record


def looks_like_detail(text: str) -> bool:
    return text.lstrip().startswith(MLLOG) or f"\n{MLLOG}" in text[:5000]


TOKENS_PER_SECOND_LINES = (
    "completed tokens per second",
    "tokens per second",
    "completed tokens per second (inferred)",
    "tokens per second (inferred)",
)
"""Summary lines (lower case) that give the token throughput, in the order they are read."""
TOKENS_PER_SECOND_RECORDS = ("result_completed_tokens_per_second", "result_tokens_per_second")
"""Detail-log records that give the token throughput."""


def _label(key: str) -> str:
    """A summary key as LoadGen prints it: 'Completed tokens per second'."""
    return repr(key[:1].upper() + key[1:])


THROUGHPUT_EXPECTED = "the run's measured tokens per second (a finite number)"
LATENCY_EXPECTED = (
    "a whole number of nanoseconds, as LoadGen writes every latency statistic (it has no 'not "
    "measured'), so the log was edited or cut"
)


def not_finite(
    src: SourceFile, fields: dict, keys, kind: str, shown, expected: str = THROUGHPUT_EXPECTED
) -> None:
    """Refuse a throughput or latency line or record that is present but holds no finite number
    ('nan', empty): it is not missing from the file, and saying so would send the user looking
    for a line that is there; a latency read as not measured would also skip the check of the
    run's limits (`_check_limits_met`)."""
    for key in keys:
        if key not in fields:
            continue
        raw = fields[key]
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            holds = "holds no value"
        else:
            holds = f"holds {shortened(raw)}, not a finite number"
        raise src.error(f"the {shown(key)} {kind} {holds}; expected {expected}")


def latencies_s(src: SourceFile, fields: dict, keys: dict, kind: str, shown) -> dict:
    """Each column's latency [s] from the first of its keys present (ns in the log), NaN when
    none is; one present that holds no finite number is refused (`not_finite`)."""
    out = {}
    for column, names in keys.items():
        out[column] = first_number(fields, names, NS_PER_S)
        if math.isnan(out[column]):
            not_finite(src, fields, names, kind, shown, LATENCY_EXPECTED)
    return out


def _summary_fields(text: str) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The summary's `Key : value` lines by lower-case key (the first of each), and the values of
    keys printed more than once ("Completed tokens per second" is, in both sections)."""
    fields: dict[str, str] = {}
    repeats: dict[str, list[str]] = {}
    for line in text.splitlines():
        if ":" not in line:
            continue
        key, _, value = line.partition(":")
        key = re.sub(r"\s+", " ", key.strip().lstrip("*").strip()).lower()
        if key and key not in fields:
            fields[key] = value.strip()
        elif key:
            repeats.setdefault(key, [fields[key]]).append(value.strip())
    return fields, repeats


REPEAT_TOLERANCE = 1e-4
"""Relative gap between two printings of one LoadGen figure beyond which they are two figures
(both sections print it with the same precision: 29228.22 twice in the v4.1 Server sample)."""


def _check_repeats(src: SourceFile, repeats: dict[str, list[str]], keys) -> None:
    """Refuse a summary whose throughput line is printed twice with different values: LoadGen
    prints one figure in both sections, so the log was edited or joins two runs, and neither
    value can be taken as the run's."""
    for key in keys:
        values = repeats.get(key, [])
        numbers = []
        for value in values:
            try:
                numbers.append(number(value, field=key))
            except NotANumberError:
                numbers.append(math.nan)
        if len(values) > 1 and not all(
            math.isclose(n, numbers[0], rel_tol=REPEAT_TOLERANCE) for n in numbers[1:]
        ):
            shown = " and ".join(shortened(v) for v in values[:3])
            times = "twice" if len(values) == 2 else f"{len(values):,} times"
            raise src.error(
                f"the {_label(key)} line is printed {times} with different values, {shown}; "
                "LoadGen prints one figure in both sections, so the summary was edited or joins "
                "two runs. Expected one run's mlperf_log_summary.txt"
            )


def results_path(path: Path) -> tuple[str, str, str, Path | None]:
    """(platform, benchmark, scenario, submission folder) from a submission path
    `.../results/<Platform>/<benchmark>/<scenario>/...`; "" where the path does not say."""
    parts = path.absolute().parts
    i = results_folder_index(parts)
    if i < 0:
        return "", "", "", None
    scenario = next((s for s in SCENARIOS if s.lower() == parts[i + 3].lower()), "")
    return parts[i + 1], parts[i + 2], scenario, Path(*parts[:i])


def system_gpu_count(
    src: SourceFile, submission: Path | None, platform: str
) -> tuple[float, str, str, list[str]]:
    """GPUs and accelerator name from the system description JSON: `<submission>/systems/
    <Platform>.json` or a system JSON beside the log (Σ number_of_nodes x accelerators_per_node),
    and why candidates were not opened (outside `src.within`, or links: `companion_refusal`)."""
    candidates = [submission / "systems" / f"{platform}.json"] if submission and platform else []
    folder = src.path.parent
    if inside_folders(folder, src.within):
        candidates += sorted(folder.glob("*system*.json"))
    skipped = []
    for candidate in candidates:
        refusal = companion_refusal(src, candidate)
        if refusal:
            skipped.append(f"{NOT_READ}: {refusal}")
            continue
        try:  # (a FIFO, a device or a file over the limit is no system description: skipped)
            raw = read_regular(candidate, MAX_SOURCE_BYTES, "a system description (JSON)")
            data = load_json(raw.decode("utf-8-sig"))
        except (OSError, ValueError, RecursionError):
            continue
        if not isinstance(data, dict) or "accelerators_per_node" not in data:
            continue
        try:
            nodes = number(data.get("number_of_nodes"), field="number_of_nodes")
            per_node = number(data.get("accelerators_per_node"), field="accelerators_per_node")
        except NotANumberError as exc:
            raise NotANumberError(f"{candidate} (the system description): {exc}") from None
        count = (1.0 if math.isnan(nodes) else nodes) * per_node
        if count > 0:
            return count, str(candidate), str(data.get("accelerator_model_name") or ""), skipped
    return math.nan, "", "", skipped


def _server_or_interactive(family: str, tpot_limit_ns: float, prov: Provenance) -> str:
    """LoadGen logs Interactive runs as Server; the run's TPOT limit tells them apart when it is
    one of the benchmark's published limits (models/benchmarks latency constraints)."""
    from econ.benchmarks import latency_constraints

    family = re.sub(r"(-(99\.9|99|interactive))+$", "", family)
    table = latency_constraints()
    rows = table[table["benchmark_family"].str.lower() == family]
    limit_ms = tpot_limit_ns / 1e6
    for _, row in rows.iterrows():
        name = str(row["scenario"]).split()[0]  # "Interactive (v5.1+ scenario; ...)"
        if name in ("Server", "Interactive") and (
            abs(float(row["tpot_p99_limit_ms"]) - limit_ms) <= 0.01 * limit_ms
        ):
            prov.notes.append(
                f"scenario {name} from the run's TPOT limit ({limit_ms:g} ms, the {family} "
                f"{name} limit)"
            )
            return name
    prov.warnings.append(
        "scenario Server from the log: LoadGen logs Interactive runs as Server too, and neither "
        "a results path (.../results/<Platform>/<benchmark>/<scenario>/) nor a known TPOT limit "
        "says which this is"
    )
    return "Server"


def _check_limits_met(
    out: dict, src: SourceFile, validity: str, ttft_limit_ns: float, tpot_limit_ns: float
) -> None:
    """Refuse a Server (or Interactive) log whose own p99 TTFT or TPOT is above the limit it
    states: LoadGen marks such a run INVALID (PerformanceSummary::PerfConstraintsMet compares
    the 99th percentiles with ttft_latency and tpot_latency: "TTFT/TPOT constrain not met"), so
    a log that says VALID, or nothing, beside them was edited or has another run's limits."""
    broken = []
    for metric, what, limit_ns in (
        ("ttft", "first token latency", ttft_limit_ns),
        ("tpot", "time per output token", tpot_limit_ns),
    ):
        p99_s = out.get(f"{metric}_s_p99", math.nan)
        if limit_ns > 0 and p99_s > limit_ns / NS_PER_S:
            value, limit = apart(p99_s * MS_PER_S, limit_ns / NS_PER_MS)
            broken.append(
                f"the 99th percentile {what} is {value} ms, above its {metric}_latency limit of "
                f"{limit} ms"
            )
    if broken:
        said = f"says the run is {validity}" if validity else "does not say the run is INVALID"
        raise src.error(
            f"{' and '.join(broken)}, yet the log {said}: LoadGen marks a run whose p99 breaks "
            "a limit INVALID (performance constraints not met), so the log was edited or states "
            "another run's limits; expected a VALID run whose p99 latencies meet the limits it "
            "states"
        )


def _finish(
    out: dict,
    src: SourceFile,
    prov: Provenance,
    scenario: str,
    sut: str,
    validity: str,
    ttft_limit_ns: float,
    tpot_limit_ns: float,
    gpu_count: float | None,
) -> Curve:
    if validity and validity.upper() != "VALID":
        raise src.error(
            f"LoadGen marks the run {validity}: an invalid run (latency bounds, duration or "
            "query count not met) is not a usable measurement"
        )
    if not validity:
        prov.warnings.append("the log does not say whether the run was VALID")
    if scenario.lower() in ("server", "interactive"):
        _check_limits_met(out, src, validity, ttft_limit_ns, tpot_limit_ns)
    platform, path_benchmark, path_scenario, submission = results_path(src.path)
    if path_scenario and path_scenario.lower() != scenario.lower():
        if not (path_scenario == "Interactive" and scenario.lower() == "server"):
            prov.warnings.append(
                f"the log says scenario {scenario or '(none)'}, the results path {path_scenario}; "
                "the path is used"
            )
        scenario = path_scenario  # LoadGen runs Interactive as a Server test with tighter limits
    found = BENCHMARK.search(sut)
    if not path_scenario and scenario.lower() == "server":
        family = (path_benchmark or (found.group(0) if found else "")).lower()
        scenario = _server_or_interactive(family, tpot_limit_ns, prov)
    if path_benchmark:
        model = path_benchmark
    elif found:
        model = found.group(0).lower()
        prov.warnings.append(
            f"benchmark {model} guessed from the SUT name (no results path "
            ".../results/<Platform>/<benchmark>/<scenario>/ names it)"
        )
    else:
        model = ""
        prov.warnings.append(
            f"the benchmark is unknown: the SUT name {sut[:40]!r} names none and no results path "
            "names it; runs of different benchmarks must not share a curve"
        )
    out["model"] = model
    if platform:
        out["hardware"] = platform
    if scenario.lower() == "offline":
        out["request_rate_per_s"] = math.inf
        for key in [k for k in out if k.startswith(("ttft_s_", "tpot_s_", "e2e_s_"))]:
            out[key] = math.nan
        prov.notes.append("Offline: one query holds every sample, so there is no latency figure")
        from econ.benchmarks import OFFLINE_CAVEAT

        prov.warnings.append(OFFLINE_CAVEAT)
    if scenario.lower() == "singlestream":
        out["concurrency"] = 1.0
    out["workload"] = label_pairs((("benchmark", model), ("scenario", scenario)))
    if not math.isnan(ttft_limit_ns) and scenario.lower() != "offline":
        prov.notes.append(
            f"latency limits of the run: TTFT p99 <= {ttft_limit_ns / NS_PER_S:g} s, "
            f"TPOT p99 <= {tpot_limit_ns / NS_PER_S:g} s"
        )
    prov.warnings.append(
        "MLPerf throughput is for the whole system under test; the per-GPU figure is derived "
        "(system total / GPU count), not submitted"
    )
    rows = [out]
    # the system description is read with --gpus too: a count that differs is then warned of;
    # with the count given, one that cannot be read is only warned of
    try:
        count, where, accelerator, skipped = system_gpu_count(src, submission, platform)
    except CurveError as exc:
        if gpu_count is None:
            raise
        prov.warnings.append(description_not_used(exc))
        count, where, accelerator, skipped = math.nan, "", "", []
    prov.warnings.extend(skipped)
    if not math.isnan(count):
        out["gpu_count"] = count
        prov.gpu_count_basis = f"system description {where}"
        if accelerator:
            out["hardware"] = f"{platform} ({accelerator})" if platform else accelerator
    elif gpu_count is None and platform:
        count, how = gpu_count_from_text(platform)
        if not math.isnan(count):
            out["gpu_count"] = count
            prov.gpu_count_basis = f"results path platform '{platform}' ({how})"
            prov.warnings.append(
                f"GPU count {count:g} guessed from the platform name '{platform}' in the "
                "results path (no system description JSON found); pass --gpus N if wrong"
            )
    apply_gpu_count(rows, src, prov, gpu_count)
    return finish_curve(rows, src, prov)


def parse_summary(src: SourceFile, gpu_count: float | None = None) -> Curve:
    for section in ("MLPerf Results Summary", "Additional Stats", "Test Parameters Used"):
        if section not in src.text:
            raise src.error(
                f"no '{section}' section: the summary is truncated or not a LoadGen "
                "mlperf_log_summary.txt"
            )
    f, repeats = _summary_fields(src.text)
    prov = Provenance(tool="mlperf loadgen (summary)")
    prov.latency_unit = "ns (stated in the key names)"
    prov.warnings.append(
        "the summary log does not record the LoadGen version (the detail log does)"
    )
    mode = f.get("mode", "")
    if mode and mode.lower() != "performanceonly":
        raise src.error(f"mode is {mode}; only PerformanceOnly runs measure throughput")
    scenario = f.get("scenario", "")
    out: dict = {}
    out["output_tokens_per_s"] = first_number(f, TOKENS_PER_SECOND_LINES[:2])
    if math.isnan(out["output_tokens_per_s"]):
        out["output_tokens_per_s"] = first_number(f, TOKENS_PER_SECOND_LINES[2:])
        if not math.isnan(out["output_tokens_per_s"]):
            prov.warnings.append(
                f"{scenario or 'this'} scenario: tokens/s is LoadGen's inferred figure (tokens "
                "per sample over the sample latency), not a measured system rate"
            )
    samples = first_number(
        f,
        [
            "completed samples per second",
            "samples per second",
            "completed samples per second (inferred)",
            "samples per second (inferred)",
        ],
    )
    out["request_rate_per_s"] = first_number(f, ["scheduled samples per second", "target_qps"])
    out["output_tokens_mean"] = out["output_tokens_per_s"] / samples
    if math.isnan(out["output_tokens_per_s"]):
        not_finite(src, f, TOKENS_PER_SECOND_LINES, "line", _label)
        has_samples = not math.isnan(samples)
        raise src.error(
            "no 'Completed tokens per second', 'Tokens per second' or 'Tokens per second "
            "(inferred)' line: "
            + (
                "the summary reports samples/s only, which is not a token throughput"
                if has_samples
                else "no throughput line at all (a truncated summary?)"
            )
        )
    _check_repeats(src, repeats, TOKENS_PER_SECOND_LINES)  # (a first line of nan said above)
    keys = {
        "ttft_s_mean": ["mean first token latency (ns)"],
        "tpot_s_mean": [f"mean {n} (ns)" for n in TPOT_NAMES],
        **{f"ttft_s_{s}": [f"{p} percentile first token latency (ns)"] for s, p in PERCENTILES.items()},
        **{f"tpot_s_{s}": [f"{p} percentile {n} (ns)" for n in TPOT_NAMES] for s, p in PERCENTILES.items()},
        "e2e_s_mean": ["mean latency (ns)"],
        **{f"e2e_s_{s}": [f"{p} percentile latency (ns)"] for s, p in PERCENTILES.items()},
    }  # fmt: skip
    out |= latencies_s(src, f, keys, "line", _label)
    return _finish(
        out,
        src,
        prov,
        scenario,
        f.get("sut name", ""),
        f.get("result is", ""),
        first_number(f, ["ttft_latency (ns)"]),
        first_number(f, ["tpot_latency (ns)"]),
        gpu_count,
    )


def parse_detail(src: SourceFile, gpu_count: float | None = None) -> Curve:
    values: dict = {}
    broken = 0
    for line_number, line in enumerate(src.text.splitlines(), start=1):
        if not line.startswith(MLLOG):
            continue
        try:
            entry = load_json(line[len(MLLOG) :])
            values.setdefault(entry["key"], entry["value"])
        except OverlongNumberError as exc:
            raise src.error(f"line {line_number}: {exc}") from None
        except (json.JSONDecodeError, KeyError, TypeError, RecursionError):
            broken += 1
    if not any(k.startswith("result_") for k in values):
        raise src.error(
            "the detail log has no result_* records: the run did not finish or the file is "
            f"truncated ({len(values)} records read, {broken} unreadable lines); the results are "
            "written at the end of mlperf_log_detail.txt"
        )
    prov = Provenance(tool="mlperf loadgen (detail)")
    prov.latency_unit = "ns (stated in the key names)"
    version = str(values.get("loadgen_version", ""))
    prov.tool_version = version
    if not version:
        prov.warnings.append("no loadgen_version record (the head of the detail log is missing)")
    if broken:
        prov.warnings.append(f"{broken} unreadable :::MLLOG lines skipped")
    out: dict = {}
    out["output_tokens_per_s"] = first_number(values, TOKENS_PER_SECOND_RECORDS)
    if math.isnan(out["output_tokens_per_s"]):
        not_finite(src, values, TOKENS_PER_SECOND_RECORDS, "record", repr)
        raise src.error(
            "no result_completed_tokens_per_second record (result_token_throughput is not a "
            "valid figure in LoadGen logs); cannot read the token throughput"
        )
    samples = first_number(
        values, ["result_completed_samples_per_sec", "result_samples_per_second"]
    )
    out["output_tokens_mean"] = out["output_tokens_per_s"] / samples
    out["request_rate_per_s"] = first_number(
        values, ["result_scheduled_samples_per_sec", "requested_server_target_qps"]
    )
    keys = {
        "ttft_s_mean": ["result_first_token_mean_latency_ns"],
        "tpot_s_mean": ["result_time_to_output_token_mean", "result_time_per_output_token_mean"],
        **{f"ttft_s_{s}": [f"result_first_token_{p}_percentile_latency_ns"] for s, p in PERCENTILES.items()},
        **{f"tpot_s_{s}": [f"result_time_per_output_token_{p}_percentile_ns"] for s, p in PERCENTILES.items()},
        "e2e_s_mean": ["result_mean_latency_ns"],
        **{f"e2e_s_{s}": [f"result_{p}_percentile_latency_ns"] for s, p in PERCENTILES.items()},
    }  # fmt: skip
    out |= latencies_s(src, values, keys, "record", repr)
    scenario = str(values.get("requested_scenario") or values.get("effective_scenario") or "")
    if not scenario:
        scenario = "Offline" if "result_scheduled_samples_per_sec" not in values else "Server"
        prov.warnings.append(
            f"no requested_scenario record; scenario taken as {scenario} from the result keys"
        )
    return _finish(
        out,
        src,
        prov,
        scenario,
        " ".join(str(values.get(k) or "") for k in ("sut_name", "qsl_name")).strip(),
        str(values.get("result_validity", "")),
        first_number(values, ["requested_server_ttft_latency", "effective_ttft_latency_ns"]),
        first_number(values, ["requested_server_tpot_latency", "effective_tpot_latency_ns"]),
        gpu_count,
    )
