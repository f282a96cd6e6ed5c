"""TensorRT-LLM `trtllm-bench throughput` console report (text).

The report has `= SECTION` banners and `Label: value` lines with the unit in the label, plus
breakdown blocks (`[TPOT] P99 : 8.13`) whose unit is in the block header
(`-- Per-Request Time-per-Output-Token [TPOT] Breakdown (ms)`). Labels changed across releases:
`Total Output Throughput (tokens/sec)` (v0.17 and earlier: `Token Throughput (tokens/sec)`, which
counts output tokens only), `Per GPU Output Throughput (tokens/sec/gpu)` (was `(tps/gpu)`),
`Per User Output Speed [1/TPOT]`. An `Issue Rate` near 1e14 req/s means every request was issued
at once. Without `--streaming` there is no TTFT or TPOT.
See ../shared/data/samples/FORMATS.md and TensorRT-LLM `docs/source/performance/perf-benchmarking.md`.
"""

from __future__ import annotations

import math
import re

from econ.labels import counted
from econ.throughput.curve import Curve
from econ.throughput.importers._common import (
    MS_PER_S,
    Provenance,
    SourceFile,
    apply_gpu_count,
    count_from_ratio,
    finish_curve,
    first_number,
    json_records,
    label_pairs,
    number,
    require_line_end,
)

UNIT_PER_S = {"ms": MS_PER_S, "seconds": 1.0, "sec": 1.0, "s": 1.0, "us": 1e6, "ns": 1e9}
ALL_AT_ONCE_RATE = 1e12  # trtllm-bench prints ~1e14-1e17 req/s when it issues everything at once
BREAKDOWN = re.compile(r"^\[(TPOT|TTFT|Latency|GTPS)\]\s*(MINIMUM|MAXIMUM|AVERAGE|P\d+)$", re.I)


REPORT_START = re.compile(r"^=+[ \t]*\r?\n= ", re.M)
JSON_SECTIONS = ("performance", "world_info", "request_info", "engine")
# runtime settings: console report labels and --report_json world_info keys
WORLD_LABELS = {
    "tp": "TP Size", "pp": "PP Size", "cp": "CP Size", "ep": "EP Size",
    "max_batch_size": "Max Runtime Batch Size", "max_num_tokens": "Max Runtime Tokens",
    "issue_rate": "Issue Rate (req/sec)", "world_size": "World Size",
}  # fmt: skip
WORLD_KEYS = {
    "tp": "tp_size", "pp": "pp_size", "cp": "cp_size", "ep": "ep_size",
    "max_batch_size": "max_batch_size", "max_num_tokens": "max_num_tokens",
    "issue_rate": "issue_rate", "world_size": "world_size",
}  # fmt: skip


def looks_like(text: str) -> bool:
    """A console report, anywhere in the text: real logs print ~400 log lines before it."""
    return "= PERFORMANCE OVERVIEW" in text or (
        "Request Throughput (req/sec)" in text and "=====" in text
    )


def looks_like_json(record: dict) -> bool:
    """A `--report_json` file: the report's sections as objects."""
    return isinstance(record.get("performance"), dict) and any(
        isinstance(record.get(k), dict) for k in JSON_SECTIONS[1:]
    )


MAX_HEADER_LINE_CHARS = 1_000
"""Longest breakdown block header read (`-- ... (ms)`) [characters]; real ones are under 80."""


def _trailing_parens(text: str, dashes: bool = False) -> str | None:
    """The text inside the parentheses that end `text` ("ms" of 'Total Latency (ms)'), or None.
    With `dashes`, a rule of dashes may follow them (`-- ... Breakdown (ms) --`). Found by
    position: the regex doing this rescanned the text from every '(' (31 s for 80,000 of them)."""
    closing = text.rfind(")")
    if closing < 0:
        return None
    tail = text[closing + 1 :].strip()
    rule = dashes and not tail.strip("-")  # nothing but dashes after the parentheses
    if tail and not rule:
        return None
    opening = text.find("(", text.rfind(")", 0, closing) + 1, closing)
    return text[opening + 1 : closing] if opening >= 0 else None


def report_text(text: str) -> str:
    """The report without the log lines before it (they hold 'label: value' text too)."""
    found = REPORT_START.search(text)
    return text[found.start() :] if found else text


def _fields(
    text: str, src: SourceFile, first_line: int = 1
) -> tuple[dict[str, str], dict[tuple[str, str], tuple[str, str]], list[str], set[str]]:
    """Label -> value, (metric, stat) -> (value, unit) from breakdowns, section names, and the
    metrics whose breakdown block header is present (TPOT, TTFT, GTPS, LATENCY). `text` starts
    at line `first_line` of `src`, which an over-long block header names."""
    fields: dict[str, str] = {}
    breakdown: dict[tuple[str, str], tuple[str, str]] = {}
    sections: list[str] = []
    blocks: set[str] = set()
    unit = ""
    for number_in_file, raw in enumerate(text.splitlines(), start=first_line):
        line = raw.strip()
        if line.startswith("= "):
            sections.append(line[2:].strip())
            continue
        if line.startswith("--"):
            if len(line) > MAX_HEADER_LINE_CHARS:
                raise src.error(
                    f"line {number_in_file}: a block header of {len(line):,} characters; "
                    "expected a line such as '-- Per-Request Time-per-Output-Token [TPOT] "
                    f"Breakdown (ms)' of at most {MAX_HEADER_LINE_CHARS:,}"
                )
            unit = (_trailing_parens(line, dashes=True) or "").strip().lower()
            named = re.search(r"\[(TPOT|TTFT|GTPS)\]", line, re.I)
            if named:
                blocks.add(named.group(1).upper())
            elif re.search(r"Request Latency Breakdown", line, re.I):
                blocks.add("LATENCY")
            continue
        if ":" not in line:
            continue
        label, _, value = line.rpartition(":")
        label, value = re.sub(r"\s+", " ", label.strip()), value.strip()
        match = BREAKDOWN.match(label)
        if match:
            breakdown[(match.group(1).upper(), match.group(2).upper())] = (value, unit)
        elif label not in fields:
            fields[label] = value
    return fields, breakdown, sections, blocks


BLOCK_STATS = ("MINIMUM", "MAXIMUM", "AVERAGE", "P50", "P90", "P95", "P99")
"""The statistics every breakdown block of the report prints (TensorRT-LLM
`bench/dataclasses/reporting.py`)."""
BLOCK_NAMES = {
    "TPOT": "[TPOT] breakdown", "TTFT": "[TTFT] breakdown", "GTPS": "[GTPS] breakdown",
    "LATENCY": "Request Latency Breakdown",
}  # fmt: skip


def _check_complete(
    src: SourceFile,
    fields: dict[str, str],
    breakdown: dict[tuple[str, str], tuple[str, str]],
    blocks: set[str],
) -> None:
    """Refuse a report that stops before its end: a truncated copy keeps parsing (a number cut
    to its first digits is still a number), so what a complete report always prints is checked.

    Since the `Total Output Throughput` labels (v0.18), the performance overview ends with the
    Request Latency Breakdown block; a --streaming run adds the TTFT/TPOT averages and their
    breakdown blocks before it; every block prints seven statistics. The v0.17 overview ends
    with `Total Latency (ms)`."""

    def cut(what: str):
        return src.error(
            f"the report looks cut off: {what}; expected the complete report `trtllm-bench "
            "throughput` prints (import the whole console output; an excerpt of the overview "
            "alone cannot be told from a cut report, so enter its figures in a generic curve "
            "CSV instead)"
        )

    def has(pattern: str) -> bool:
        return any(re.search(pattern, label, re.I) for label in fields)

    for metric in sorted(blocks):
        missing = [stat for stat in BLOCK_STATS if (metric, stat) not in breakdown]
        if missing:
            raise cut(
                f"the {BLOCK_NAMES[metric]} block has {7 - len(missing)} of its 7 statistics "
                f"(no {', '.join(missing)})"
            )
    if has(r"^Total Output Throughput") and "LATENCY" not in blocks:
        raise cut(
            "no Request Latency Breakdown block, which ends the performance overview of every "
            "report with a 'Total Output Throughput' line"
        )
    averages = {
        "TTFT": ("Average time-to-first-token [TTFT]", has(r"^Average time-to-first-token")),
        "TPOT": ("Average time-per-output-token [TPOT]", has(r"^Average time-per-output-token")),
    }
    if any(present for _, present in averages.values()) or blocks & {"TTFT", "TPOT"}:  # streaming
        for metric, (label, present) in averages.items():
            if not present:
                raise cut(f"a --streaming report without its '{label}' line")
            if metric not in blocks:
                raise cut(f"a --streaming report without its {BLOCK_NAMES[metric]} block")
    if has(r"^Token Throughput") and not has(r"^Total Latency"):
        raise cut("no 'Total Latency (ms)' line, the last line of a v0.17 performance overview")


def _labelled(fields: dict[str, str], pattern: str, allow_nan: bool = True) -> tuple[float, str]:
    """The value of the first label matching `pattern`, and the unit in its parentheses.
    `allow_nan=False` for the throughput lines, which the tool always prints measured: a "nan"
    there is a broken report, not a rate to rebuild from another line."""
    for label, value in fields.items():
        if re.search(pattern, label, re.I):
            unit = _trailing_parens(label) or ""
            return number(value, field=label, allow_nan=allow_nan), unit.strip().lower()
    return math.nan, ""


def _seconds(value: float, unit: str, src: SourceFile, what: str) -> float:
    if math.isnan(value):
        return value
    if unit not in UNIT_PER_S:
        raise src.error(f"{what} has unit {unit!r}; expected one of {sorted(UNIT_PER_S)}")
    return value / UNIT_PER_S[unit]


def parse(src: SourceFile, gpu_count: float | None = None) -> Curve:
    if not looks_like(src.text):
        raise src.error(
            "not a trtllm-bench throughput report: no '= PERFORMANCE OVERVIEW' section; expected "
            "the console report `trtllm-bench throughput` prints (for --report_json use "
            "--format trtllm-bench-json, or --format auto to detect the tool)"
        )
    require_line_end(src, "trtllm-bench report")
    report = report_text(src.text)
    first_line = src.text.count("\n", 0, len(src.text) - len(report)) + 1
    fields, breakdown, sections, blocks = _fields(report, src, first_line)
    _check_complete(src, fields, breakdown, blocks)
    prov = Provenance(tool="trtllm-bench throughput")
    prov.latency_unit = "from the unit in each label (ms in current releases)"
    version = fields.get("TensorRT LLM Version") or fields.get("TensorRT-LLM Version") or ""
    prov.tool_version = version
    if not version:
        prov.warnings.append("the report excerpt does not include the TensorRT-LLM version")
    out: dict = {}
    output, _ = _labelled(fields, r"^Total Output Throughput", allow_nan=False)
    if math.isnan(output):
        output, _ = _labelled(fields, r"^Token Throughput", allow_nan=False)
        if not math.isnan(output):
            prov.notes.append("legacy 'Token Throughput' label: output tokens only (<= v0.17)")
    out["output_tokens_per_s"] = output
    out["total_tokens_per_s"], _ = _labelled(fields, r"^Total Token Throughput", allow_nan=False)
    per_gpu, _ = _labelled(fields, r"^Per GPU Output Throughput", allow_nan=False)
    out["output_tokens_per_s_per_gpu"] = per_gpu
    value, unit = _labelled(fields, r"^Average time-to-first-token")
    out["ttft_s_mean"] = _seconds(value, unit, src, "Average time-to-first-token")
    value, unit = _labelled(fields, r"^Average time-per-output-token")
    out["tpot_s_mean"] = _seconds(value, unit, src, "Average time-per-output-token")
    value, unit = _labelled(fields, r"^Average request latency")
    out["e2e_s_mean"] = _seconds(value, unit, src, "Average request latency")
    value, unit = _labelled(fields, r"^Total Latency")
    out["duration_s"] = _seconds(value, unit, src, "Total Latency")
    for metric, column in (("TTFT", "ttft_s"), ("TPOT", "tpot_s"), ("Latency", "e2e_s")):
        for stat in ("p50", "p90", "p95", "p99"):
            raw, unit = breakdown.get((metric.upper(), stat.upper()), ("", "ms"))
            out[f"{column}_{stat}"] = _seconds(
                number(raw, field=f"[{metric}] {stat}"), unit, src, f"[{metric}] {stat}"
            )
    if math.isnan(out["ttft_s_mean"]) and math.isnan(out["tpot_s_mean"]):
        prov.warnings.append(
            "no TTFT/TPOT in the report (run without --streaming): tokens/s per user is unknown"
        )
    out["input_tokens_mean"] = first_number(fields, ["Average Input Length (tokens)"])
    out["output_tokens_mean"] = first_number(fields, ["Average Output Length (tokens)"])
    out["completed_requests"] = first_number(fields, ["Number of requests"])
    out["concurrency"] = first_number(fields, ["Number of concurrent requests"])
    out["model"] = fields.get("Model", "")
    backend = next((s for s in sections if "backend" in s.lower()), "")
    return _finish(
        out,
        src,
        prov,
        gpu_count,
        world=(fields, WORLD_LABELS),
        backend=backend.lower().replace(" backend", ""),
        precision=(fields.get("Quantization", ""), fields.get("Dtype", "")),
    )


def _finish(
    out: dict,
    src: SourceFile,
    prov: Provenance,
    gpu_count: float | None,
    *,
    world: tuple[dict, dict[str, str]],
    backend: str,
    precision: tuple[str, str],
) -> Curve:
    """Load, GPU count, precision and configuration label, shared by the console and JSON
    reports; `world` is the section holding the runtime settings and its keys (WORLD_*)."""
    source, keys = world
    settings = {name: first_number(source, [key]) for name, key in keys.items()}
    rate, world_size = settings.pop("issue_rate"), settings.pop("world_size")
    out["request_rate_per_s"] = math.inf if rate >= ALL_AT_ONCE_RATE else rate
    if not math.isnan(out["concurrency"]):
        prov.warnings.append(
            f"concurrency {out['concurrency']:g} is the achieved average number of requests in "
            "flight, not a configured limit"
        )
    out["gpu_count"] = _world_size(out, settings, world_size, src, prov, gpu_count)
    quant, dtype = (str(p or "") for p in precision)
    chosen = quant if quant and quant.lower() not in ("none", "null") else dtype
    out["precision"] = "" if chosen.lower() in ("auto", "none", "null") else chosen
    out["config"] = label_pairs((("backend", backend), *settings.items()))
    rows = [out]
    apply_gpu_count(rows, src, prov, gpu_count)
    return finish_curve(rows, src, prov)


def _world_size(
    out: dict,
    settings: dict[str, float],
    world_size: float,
    src: SourceFile,
    prov: Provenance,
    gpu_count: float | None,
) -> float:
    """The GPU count of the run, checked against every figure the report gives for it.

    The JSON report states `world_size`; the console report does not, but its per-GPU rate is the
    total output rate / world size (TensorRT-LLM `reporting.py`), so their ratio gives it. The
    runtime settings give TP x PP (x CP when printed). A ratio that is no whole number, or one that
    disagrees with TP x PP, is an edited or cut report (a rate cut to its first digits divides
    into any count) and is refused. With `--gpus` the user's count is used, the per-GPU rate is
    recomputed from it, and a disagreement with the report is warned.
    """
    output, per_gpu = out["output_tokens_per_s"], out["output_tokens_per_s_per_gpu"]
    tp, pp, cp = settings["tp"], settings["pp"], settings.get("cp", math.nan)
    stated = tp * (pp if pp > 0 else 1.0) * (cp if cp > 0 else 1.0) if tp > 0 else math.nan
    stated_name = "TP x PP x CP size" if cp > 0 else "TP x PP size"
    ratio = count_from_ratio(output, per_gpu)
    ratio_name = "total output rate / per-GPU output rate"
    if gpu_count is not None:
        if output > 0:
            out["output_tokens_per_s_per_gpu"] = math.nan  # recomputed from the user's count
        given = gpu_count if isinstance(gpu_count, int | float) else math.nan  # checked later
        for value, name in ((world_size, "world size"), (ratio, ratio_name), (stated, stated_name)):
            if value > 0 and given > 0 and value != given:
                prov.warnings.append(
                    f"the GPU count (--gpus) {given:g} overrides the {counted(value, 'GPU')} of the "
                    f"report's {name}; the per-GPU rate is recomputed from it"
                )
                break
        return math.nan  # apply_gpu_count fills it
    if output > 0 and per_gpu > 0 and math.isnan(ratio):
        raise src.error(
            f"the per-GPU output rate {per_gpu:g} does not divide the total output rate "
            f"{output:g} into a whole number of GPUs (ratio {output / per_gpu:.4g}); expected the "
            "total over the world size, as the tool prints it (a cut or edited report); if the "
            "report is whole, import it with the GPU count (--gpus N)"
        )
    if world_size > 0:
        if ratio > 0 and ratio != world_size:
            raise src.error(
                f"world_size is {world_size:g} but the {ratio_name} is {ratio:g}; expected "
                "them to agree (an edited report); if it is whole, import it with the GPU count "
                "(--gpus N)"
            )
        if stated > 0 and stated != world_size:
            prov.warnings.append(
                f"world_size {world_size:g} is not the {stated_name} ({stated:g}); the world size "
                "is used (parallelism the report does not state, such as context parallelism, "
                "or an edited report)"
            )
        prov.gpu_count_basis = "world_info.world_size"
        return world_size
    if ratio > 0:
        if stated > 0 and ratio != stated:
            raise src.error(
                f"the {ratio_name} gives {ratio:g} GPUs but the report's {stated_name} is "
                f"{stated:g}; expected them to agree (a cut or edited report); if it is whole, "
                "import it with the GPU count (--gpus N)"
            )
        prov.gpu_count_basis = f"{ratio_name} (world size)" + (
            f", equal to the {stated_name}" if stated > 0 else ""
        )
        return ratio
    if stated > 0:
        prov.gpu_count_basis = stated_name
        prov.warnings.append(
            f"GPU count {stated:g} guessed as the {stated_name}: the report has no per-GPU output "
            "rate to confirm the world size; pass --gpus N if wrong"
        )
        return stated
    return math.nan


def parse_json(src: SourceFile, gpu_count: float | None = None) -> Curve:
    """`trtllm-bench throughput --report_json`: the console report's figures as JSON, latencies
    in ms (keys end in `_ms`), rates in tokens/s (TensorRT-LLM `bench/dataclasses/reporting.py`)."""
    records = json_records(src)
    if len(records) != 1:
        raise src.error(f"expected one trtllm-bench report object, found {len(records)} records")
    data = records[0]
    if not looks_like_json(data):
        raise src.error(
            "not a trtllm-bench --report_json file: no 'performance' object beside "
            f"{'/'.join(repr(k) for k in JSON_SECTIONS[1:])}; expected the JSON "
            "`trtllm-bench throughput --report_json` writes (for the console report use "
            "--format trtllm-bench, or --format auto to detect the tool)"
        )

    def section(name: str) -> dict:
        value = data.get(name)
        return value if isinstance(value, dict) else {}

    perf, streaming = section("performance"), section("streaming_metrics")
    requests, world_info, engine = section("request_info"), section("world_info"), section("engine")
    prov = Provenance(tool="trtllm-bench throughput (report_json)")
    prov.latency_unit = "ms (stated by the _ms key suffix)"
    prov.tool_version = str(engine.get("version") or "")
    if not prov.tool_version:
        prov.warnings.append("the report does not record the TensorRT-LLM version")
    # a NaN rate is a broken report (as in the console report), not a rate to rebuild
    rate = {"allow_nan": False}
    out: dict = {
        "output_tokens_per_s": first_number(perf, ["system_output_throughput_tok_s"], **rate),
        "total_tokens_per_s": first_number(perf, ["system_total_throughput_tok_s"], **rate),
        "output_tokens_per_s_per_gpu": first_number(
            perf, ["output_throughput_per_gpu_tok_s"], **rate
        ),
        "duration_s": first_number(perf, ["total_latency_ms"], MS_PER_S),
        "e2e_s_mean": first_number(perf, ["avg_request_latency_ms"], MS_PER_S),
        "ttft_s_mean": first_number(streaming, ["avg_ttft_ms"], MS_PER_S),
        "tpot_s_mean": first_number(streaming, ["avg_tpot_ms"], MS_PER_S),
    }
    blocks = {
        "e2e_s": perf.get("request_latency_percentiles_ms"),
        "ttft_s": streaming.get("ttft_percentiles"),
        "tpot_s": streaming.get("tpot_percentiles"),
    }
    for column, block in blocks.items():
        block = block if isinstance(block, dict) else {}
        for stat in ("p50", "p90", "p95", "p99"):
            out[f"{column}_{stat}"] = first_number(block, [stat], MS_PER_S)
    if not streaming:
        prov.warnings.append(
            "no streaming_metrics (run without --streaming): TTFT, TPOT and tokens/s per user "
            "are unknown"
        )
    out["completed_requests"] = first_number(requests, ["num_requests"])
    out["input_tokens_mean"] = first_number(requests, ["avg_input_length"])
    out["output_tokens_mean"] = first_number(requests, ["avg_output_length"])
    out["concurrency"] = first_number(requests, ["avg_num_concurrent_requests"])
    out["model"] = str(engine.get("model") or "")
    return _finish(
        out,
        src,
        prov,
        gpu_count,
        world=(world_info, WORLD_KEYS),
        backend=str(engine.get("backend") or "").lower(),
        precision=(engine.get("quantization"), engine.get("dtype")),
    )
