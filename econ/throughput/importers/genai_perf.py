"""NVIDIA GenAI-Perf (`profile_export_genai_perf.{json,csv}`) and AIPerf
(`profile_export_aiperf.{json,csv}`) exports.

JSON: each metric is an object `{unit, avg, min, max, std, p1..p99}` and the run settings sit in
`input_config`; AIPerf adds `aiperf_version`, `benchmark_duration` and total/input token rates.
CSV: a per-metric table (`Metric,avg,min,max,...` with the unit in the metric name), a blank line,
a `Metric,Value` table and, for AIPerf, a GPU-telemetry table. Both tools' `inter_token_latency`
is per request (latency - TTFT) / (output tokens - 1), i.e. TPOT. The CSV does not carry the run
settings, so concurrency comes from the file name when it says e.g. `concurrency10`.
See ../shared/data/samples/FORMATS.md and the GenAI-Perf/AIPerf metric documentation.
"""

from __future__ import annotations

import csv
import io
import math
import re

from econ.text import clipped
from econ.throughput.curve import Curve
from econ.throughput.importers._common import (
    MS_PER_S,
    NS_PER_S,
    US_PER_S,
    Provenance,
    SourceFile,
    apply_gpu_count,
    finish_curve,
    json_records,
    label_pairs,
    number,
    require_line_end,
)

UNIT_PER_S = {
    "ms": MS_PER_S, "msec": MS_PER_S, "s": 1.0, "sec": 1.0, "second": 1.0, "seconds": 1.0,
    "ns": NS_PER_S, "us": US_PER_S, "µs": US_PER_S,
}  # fmt: skip
# Rates are read as per second; the tools write "tokens/sec", "requests/sec" (JSON, AIPerf CSV)
# or "per sec" (GenAI-Perf CSV). Any other time base (a rate per minute) would be read 60x off.
RATE_UNIT_ENDINGS = ("/sec", "/s", "/second", "per sec", "per s", "per second")
RATE_METRICS = (
    "output_token_throughput", "input_token_throughput", "total_token_throughput",
    "request_throughput",
)  # fmt: skip
# AIPerf's export schema_version, major.minor: the samples are 1.1 (AIPerf 0.8) and 1.4 (0.12).
# A new major version may rename or re-unit the metrics this importer reads.
AIPERF_SCHEMA_MAJOR = 1
STATS = {"mean": "avg", "p50": "p50", "p90": "p90", "p95": "p95", "p99": "p99"}

# CSV metric names (lower case, unit removed) -> JSON metric keys
CSV_NAMES = {
    "time to first token": "time_to_first_token",
    "inter token latency": "inter_token_latency",
    "request latency": "request_latency",
    "output sequence length": "output_sequence_length",
    "input sequence length": "input_sequence_length",
    "output token throughput": "output_token_throughput",
    "input token throughput": "input_token_throughput",
    "total token throughput": "total_token_throughput",
    "request throughput": "request_throughput",
    "request count": "request_count",
    "benchmark duration": "benchmark_duration",
}


def looks_like_json(record: dict) -> bool:
    return "aiperf_version" in record or (
        isinstance(record.get("time_to_first_token") or record.get("request_latency"), dict)
        and isinstance(record.get("output_token_throughput"), dict)
    )


def looks_like_csv(text: str) -> bool:
    return text.lstrip()[:7].lower() == "metric,"  # (not the whole text in lower case)


def _seconds(metric: dict | None, stat: str, src: SourceFile, name: str) -> float:
    if not isinstance(metric, dict):
        return math.nan
    unit = str(metric.get("unit", "")).strip().lower()
    if unit not in UNIT_PER_S:
        raise src.error(
            f"{name} has unit {metric.get('unit')!r}; expected one of {sorted(UNIT_PER_S)}"
        )
    return _number(metric, stat, name) / UNIT_PER_S[unit]


def _value(metric, stat: str = "avg", name: str = "", src: SourceFile | None = None) -> float:
    if not isinstance(metric, dict):
        return math.nan
    unit = str(metric.get("unit") or "").strip().lower()
    if src is not None and name in RATE_METRICS and unit and not unit.endswith(RATE_UNIT_ENDINGS):
        raise src.error(
            f"{name} has unit {metric.get('unit')!r}; expected a rate per second such as "
            "'tokens/sec' or 'requests/sec'"
        )
    return _number(metric, stat, name)


def _number(metric: dict, stat: str, name: str) -> float:
    """A statistic of a metric; a NaN refused as Infinity is (neither tool writes one: a
    metric without values, such as ITL of one-token replies, is left out), null or no key
    read as not measured."""
    return number(metric.get(stat), allow_nan=False, field=f"{name}.{stat}")


def _check_schema_version(version, src: SourceFile) -> None:
    """Refuse an AIPerf export of another schema major version (none written is accepted:
    GenAI-Perf exports have no schema_version)."""
    if version is None:
        return
    major = str(version).split(".")[0].strip()
    if major != str(AIPERF_SCHEMA_MAJOR):
        raise src.error(
            f"field schema_version is {version!r}; expected {AIPERF_SCHEMA_MAJOR}.x, the AIPerf "
            "export schema this importer reads (AIPerf 0.8 to 0.12 write 1.1 to 1.4)"
        )


def _concurrency_from_name(name: str) -> float:
    match = re.search(r"(?:concurrency|conc)[_-]?(\d+)", name, re.I)
    return float(match.group(1)) if match else math.nan


def _record_from_metrics(m: dict, src: SourceFile, prov: Provenance, streaming) -> dict:
    out: dict = {}
    ttft, itl = m.get("time_to_first_token"), m.get("inter_token_latency")
    latency = m.get("request_latency")
    non_streaming = streaming is False or (
        ttft is not None and latency is not None and ttft == latency and itl is None
    )
    if non_streaming:
        prov.warnings.append(
            "non-streaming run: the tool reports request latency as TTFT and has no per-token "
            "latency, so TTFT, TPOT and tokens/s per user are unknown"
        )
        ttft = itl = None
    for stat, key in STATS.items():
        out[f"ttft_s_{stat}"] = _seconds(ttft, key, src, "time_to_first_token")
        out[f"tpot_s_{stat}"] = _seconds(itl, key, src, "inter_token_latency")
        out[f"e2e_s_{stat}"] = _seconds(latency, key, src, "request_latency")
    out["output_tokens_per_s"] = _value(
        m.get("output_token_throughput"), name="output_token_throughput", src=src
    )
    out["input_tokens_per_s"] = _value(
        m.get("input_token_throughput"), name="input_token_throughput", src=src
    )
    out["total_tokens_per_s"] = _value(
        m.get("total_token_throughput"), name="total_token_throughput", src=src
    )
    out["input_tokens_mean"] = _value(m.get("input_sequence_length"), name="input_sequence_length")
    out["output_tokens_mean"] = _value(
        m.get("output_sequence_length"), name="output_sequence_length"
    )
    out["completed_requests"] = _value(m.get("request_count"), name="request_count")
    requests_per_s = _value(m.get("request_throughput"), name="request_throughput", src=src)
    if math.isnan(out["input_tokens_per_s"]) and math.isnan(out["total_tokens_per_s"]):
        out["input_tokens_per_s"] = _input_rate(out, requests_per_s)
    duration = m.get("benchmark_duration")
    out["duration_s"] = _seconds(duration, "avg", src, "benchmark_duration")
    if out["completed_requests"] == 0 or (requests_per_s == 0 and out["output_tokens_per_s"] == 0):
        raise src.error(
            "no request completed (request count 0 or zero throughput); the run is not a "
            "measurement"
        )
    return out


def _input_rate(out: dict, requests_per_s: float) -> float:
    """Input tokens/s of a GenAI-Perf export, which has no input or total rate: output tokens/s x
    mean ISL / mean OSL. GenAI-Perf divides the output tokens and the request count by one
    duration, so this is requests/s x mean ISL, but its CSV prints requests/s to two decimals
    (0.01 for 0.015, a third off); the output rate and the lengths keep 4 to 6 significant
    digits. Requests/s x mean ISL only when the run has no mean output length."""
    output_mean = out["output_tokens_mean"]
    if output_mean > 0 and math.isfinite(out["output_tokens_per_s"]):
        return out["output_tokens_per_s"] * out["input_tokens_mean"] / output_mean
    return requests_per_s * out["input_tokens_mean"]


def parse_json(src: SourceFile, gpu_count: float | None = None) -> Curve:
    records = json_records(src)
    if len(records) != 1:
        raise src.error(f"expected one profile export object, found {len(records)} records")
    data = records[0]
    if not looks_like_json(data):
        raise src.error(
            "not a GenAI-Perf/AIPerf profile export: no 'aiperf_version' and no metric objects "
            "('time_to_first_token' or 'request_latency' beside 'output_token_throughput', each "
            "{unit, avg, ...}); expected profile_export_genai_perf.json or "
            "profile_export_aiperf.json (or --format auto to detect the tool)"
        )
    config = data.get("input_config") or {}
    aiperf = "aiperf_version" in data
    prov = Provenance(tool="aiperf" if aiperf else "genai-perf")
    prov.tool_version = str(data.get("aiperf_version") or "")
    _check_schema_version(data.get("schema_version"), src)
    prov.latency_unit = "from each metric's 'unit' field"
    if not aiperf:
        prov.warnings.append("GenAI-Perf exports do not record the tool version")
    endpoint = config.get("endpoint") if isinstance(config.get("endpoint"), dict) else {}
    streaming = config.get("streaming", endpoint.get("streaming"))
    out = _record_from_metrics(data, src, prov, streaming)

    models = config.get("model") or endpoint.get("model_names") or []
    items = (
        (config.get("models") or {}).get("items") if isinstance(config.get("models"), dict) else []
    )
    if items:
        models = [i.get("name", "") for i in items if isinstance(i, dict)]
    out["model"] = str(models[0] if isinstance(models, list) and models else models or "")
    tokenizer = config.get("tokenizer")
    tokenizer = tokenizer.get("name") if isinstance(tokenizer, dict) else tokenizer
    if isinstance(tokenizer, str) and tokenizer_differs(tokenizer, out["model"]):
        prov.warnings.append(tokenizer_warning(tokenizer, out["model"]))
    concurrency = number(config.get("concurrency"), field="concurrency")
    loadgen = config.get("loadgen") if isinstance(config.get("loadgen"), dict) else {}
    if math.isnan(concurrency):
        concurrency = number(loadgen.get("concurrency"), field="concurrency")
    for phase in config.get("phases") or []:
        if isinstance(phase, dict) and phase.get("kind", "profiling") == "profiling":
            concurrency = (
                number(phase.get("concurrency"), field="concurrency")
                if math.isnan(concurrency)
                else concurrency
            )
    out["concurrency"] = concurrency
    out["request_rate_per_s"] = number(
        config.get("request_rate") or loadgen.get("request_rate"), field="request_rate"
    )
    isl, osl = config.get("synthetic_input_tokens_mean"), config.get("output_tokens_mean")
    for dataset in config.get("datasets") or []:
        prompts = dataset.get("prompts", {}) if isinstance(dataset, dict) else {}
        isl = (prompts.get("isl") or {}).get("mean", isl)
        osl = (prompts.get("osl") or {}).get("mean", osl)
    public = (
        (config.get("input") or {}).get("public_dataset")
        if isinstance(config.get("input"), dict)
        else None
    )
    osl = None if number(osl, field="output_tokens_mean") < 0 else osl  # -1 means "not set"
    out["workload"] = label_pairs(
        (
            ("dataset", public),
            ("input_len", number(isl, field="isl")),
            ("output_len", number(osl, field="osl")),
        )
    )
    meta = data.get("metadata") or {}
    if meta.get("submission_valid") is False:
        reasons = (
            ", ".join(map(str, meta.get("submission_invalid_reasons") or [])) or "no reason given"
        )
        prov.warnings.append(f"the tool marks this run as not a valid submission ({reasons})")
    if data.get("was_cancelled"):
        prov.warnings.append("the run was cancelled before it finished")
    errors = data.get("error_summary") or []
    if errors:
        prov.warnings.append(f"{len(errors)} kinds of request errors recorded in error_summary")
    if isinstance(data.get("output_token_throughput_per_user"), dict) and not math.isnan(
        out["tpot_s_mean"]
    ):
        prov.notes.append("tokens/s per user = 1 / mean TPOT (the tool's per-user mean is close)")
    _fill_concurrency_from_name(out, src, prov)
    rows = [out]
    apply_gpu_count(rows, src, prov, gpu_count)
    return finish_curve(rows, src, prov)


GENAI_PERF_DEFAULT_TOKENIZER = "hf-internal-testing/llama-tokenizer"
"""The tokenizer GenAI-Perf counts with when none is given (`DEFAULT_TOKENIZER`,
genai_perf/tokenizer.py): LLaMA's SentencePiece vocabulary, which Llama 2 kept."""

TOKENIZER_VOCABULARIES: tuple[tuple[str, re.Pattern, str], ...] = (
    (
        "the Llama 2 vocabulary (SentencePiece, 32,000 tokens)",
        re.compile(
            r"^llama-tokenizer$|huggyllama|llama-?2(?![0-9])|tinyllama"
            r"|phi-?3-(?:mini|medium)"
        ),
        "Llama 2 paper (arXiv:2307.09288, 2.1: 'the same tokenizer as Llama 1'); TinyLlama card "
        "('exactly the same architecture and tokenizer as Llama 2'); Phi-3 report "
        "(arXiv:2404.14219, 2: phi-3-mini 'uses the same tokenizer as Llama-2', phi-3-medium "
        "phi-3-mini's; phi-3-small uses tiktoken and is not listed)",
    ),
    (
        "the Llama 3 vocabulary (tiktoken, 128,000 tokens)",
        re.compile(r"llama-?3(?:\.[0-9])?(?![0-9])|deepseek-r1-distill-llama"),
        "Llama 3, 3.1, 3.2 and 3.3 model cards (one 128K-token tokenizer); DeepSeek-R1-Distill-"
        "Llama cards (Llama-3.1-8B and Llama-3.3-70B with their tokenizers' special tokens "
        "changed)",
    ),
    (
        "the GPT-2 vocabulary (byte-level BPE, 50,257 tokens)",
        re.compile(r"(?<![a-z0-9])(?:distil)?gpt-?2(?![0-9])|(?<![a-z0-9])opt-[0-9]"),
        "GPT-2 card; OPT paper (arXiv:2205.01068, 2.3: 'the GPT-2 byte level BPE tokenizer')",
    ),
    (
        "the Mistral 7B vocabulary (SentencePiece, 32,000 tokens; v3 adds 768 control tokens)",
        re.compile(r"mistral-7b|mixtral-8x(?:7|22)b"),
        "Mistral-7B and Mixtral-8x7B/8x22B cards and mistral-common's tokenizer versions (v1: "
        "32,000 tokens for Mistral 7B v0.1 and Mixtral 8x7B; v3: the same plus control tokens, "
        "32,768, for Mistral 7B v0.3 and Mixtral 8x22B); Mistral NeMo and later (Tekken) are not "
        "listed",
    ),
    (
        "the Qwen vocabulary (byte-level BPE, 151,643 regular tokens)",
        re.compile(r"qwen(?:1\.5|2(?:\.5)?|3)?(?![.0-9])|qwq|deepseek-r1-distill-qwen"),
        "Qwen2 report (arXiv:2407.10671, 3.1: 'the same tokenizer as Qwen'); Qwen2.5 and Qwen3 "
        "reports (arXiv:2412.15115, arXiv:2505.09388: Qwen's tokenizer, 151,643 regular tokens); "
        "DeepSeek-R1-Distill-Qwen cards (Qwen2.5 bases)",
    ),
    (
        "the DeepSeek-V3 vocabulary (byte-level BPE, 128,000 tokens)",
        re.compile(r"deepseek-(?:v3|r1)(?!-distill)"),
        "DeepSeek-V3 report (arXiv:2412.19437, 4.1: 128K tokens); DeepSeek-R1 card (trained from "
        "DeepSeek-V3-Base)",
    ),
)
"""Tokenizer vocabularies and the model names that share each (pattern on the lower-cased last
part of a Hub id, '_' and ' ' read as '-': the organization is not the model, Qwen/Qwen3.5 is no
Qwen3), with where each sharing is stated. A name no pattern matches, or one that matches two,
has no known vocabulary and is not judged. `^llama-tokenizer$` is GenAI-Perf's default,
hf-internal-testing/llama-tokenizer: LLaMA's tokenizer, which Llama 2 kept."""


def vocabulary(name: str) -> str:
    """The vocabulary a tokenizer's or a model's name refers to (TOKENIZER_VOCABULARIES), or ""
    when the name matches none or more than one."""
    text = re.sub(r"[_ ]+", "-", name.strip().lower()[:MAX_NAME_CHARS].rstrip("/"))
    text = text.rpartition("/")[2]
    found = {words for words, pattern, _ in TOKENIZER_VOCABULARIES if pattern.search(text)}
    return found.pop() if len(found) == 1 else ""


MAX_NAME_CHARS = 256
"""Characters of a tokenizer or model name read for its vocabulary (a Hub id is at most 96)."""


def tokenizer_differs(tokenizer: str, model: str) -> bool:
    """Whether a client-side tokenizer's vocabulary is known not to be the model's: both names
    have a known vocabulary and they differ (GenAI-Perf's default Llama 2 tokenizer for Llama 3;
    gpt2 for Llama 3.1). Models that share a vocabulary (Mixtral and the Mistral 7B tokenizer,
    OPT and gpt2, Phi-3-mini and Llama 2's) and names of no known vocabulary are not warned of."""
    used, served = vocabulary(tokenizer), vocabulary(model)
    return bool(used and served and used != served)


def tokenizer_warning(tokenizer: str, model: str) -> str:
    """The warning for a client tokenizer whose vocabulary is not the model's."""
    default = " (GenAI-Perf's default)" if tokenizer == GENAI_PERF_DEFAULT_TOKENIZER else ""
    return (
        f"the client counted tokens with the {clipped(tokenizer)} tokenizer{default}, "
        f"{vocabulary(tokenizer)}, not the model's ({clipped(model)}, {vocabulary(model)}): "
        "token counts and token rates (output tokens/s, tokens/s per user) are in that "
        "tokenizer's tokens and may be off"
    )


def _fill_concurrency_from_name(out: dict, src: SourceFile, prov: Provenance) -> None:
    if math.isnan(out.get("concurrency", math.nan)) and math.isnan(
        out.get("request_rate_per_s", math.nan)
    ):
        concurrency = _concurrency_from_name(src.name)
        if not math.isnan(concurrency):
            out["concurrency"] = concurrency
            prov.warnings.append(
                f"concurrency {concurrency:g} taken from the file name '{src.name}' (the export "
                "does not record it)"
            )


MAX_CELL_CHARS = 1_000
"""Longest CSV cell read [characters]; the exports' metric names and values are a few dozen."""


def _csv_tables(src: SourceFile) -> list[list[list[str]]]:
    """The export's tables (runs of non-blank rows), cells stripped; a record that is not
    well-formed CSV or a cell over MAX_CELL_CHARS is refused with its line."""
    tables, current = [], []
    reader = csv.reader(io.StringIO(src.text))
    end = 0
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise src.error(
                f"line {end + 1}: not a well-formed CSV record ({exc}); expected the "
                "comma-separated tables of a GenAI-Perf/AIPerf CSV export"
            ) from None
        for column, cell in enumerate(row, start=1):
            if len(cell) > MAX_CELL_CHARS:
                raise src.error(
                    f"line {end + 1}, column {column}: a cell of {len(cell):,} characters; "
                    f"expected a metric name or value of at most {MAX_CELL_CHARS:,}"
                )
        end = reader.line_num
        if not any(cell.strip() for cell in row):
            if current:
                tables.append(current)
                current = []
            continue
        current.append([cell.strip() for cell in row])
    if current:
        tables.append(current)
    return tables


def _name_unit(cell: str) -> tuple[str, str]:
    """(name, unit) of a metric cell such as 'Time To First Token (ms)', unit "" when the cell
    does not end in parentheses. Found by position: a regex doing this rescanned the cell from
    every character (38 s for 40,000 spaces between two letters)."""
    if cell.endswith(")"):
        closing = len(cell) - 1
        opening = cell.find("(", cell.rfind(")", 0, closing) + 1, closing)
        if opening >= 0:
            return cell[:opening], cell[opening + 1 : closing]
    return cell, ""


def parse_csv(src: SourceFile, gpu_count: float | None = None) -> Curve:
    tables = _csv_tables(src)
    metrics: dict[str, dict] = {}
    aiperf = False
    for table in tables:
        header = [h.lower() for h in table[0]]
        if header[0] != "metric":
            continue  # e.g. the GPU-telemetry table
        aiperf = aiperf or "sum" in header or "p1" in header
        for row in table[1:]:
            name, unit = _name_unit(row[0])
            name, unit = name.strip().lower(), unit.strip().lower()
            key = CSV_NAMES.get(name)
            if key is None:
                continue
            values = dict(zip(header[1:], row[1:], strict=False))
            if "value" in values:
                values = {"avg": values["value"]}
            if unit in UNIT_PER_S or key in ("time_to_first_token", "inter_token_latency"):
                values["unit"] = unit
            elif key in RATE_METRICS:  # checked as a rate per second
                values["unit"] = unit
            metrics[key] = values
    if "output_token_throughput" not in metrics:
        headers = [[h.lower() for h in t[0][:2]] for t in tables]
        per_metric = any(h[0] == "metric" and h != ["metric", "value"] for h in headers)
        if per_metric and ["metric", "value"] not in headers:  # cut after the per-metric table
            raise src.error(
                "no 'Metric,Value' table (it holds 'Output Token Throughput' and follows the "
                "per-metric table in every GenAI-Perf/AIPerf CSV export), so the file looks cut "
                "off; expected the complete export"
            )
        raise src.error(
            "no 'Output Token Throughput' row; not a GenAI-Perf/AIPerf profile export CSV "
            f"(tables found: {len(tables)})"
        )
    require_line_end(src, "GenAI-Perf/AIPerf CSV export", separator=",")
    if "request_throughput" not in metrics:
        raise src.error(
            "no 'Request Throughput' row: every GenAI-Perf/AIPerf CSV export writes one in its "
            "'Metric,Value' table beside 'Output Token Throughput', so the file looks cut off; "
            "expected the complete export"
        )
    prov = Provenance(tool="aiperf" if aiperf else "genai-perf")
    prov.latency_unit = "from the unit in each metric name"
    prov.warnings.append(
        "CSV export: the tool version and run settings are not in the file (the JSON export "
        "has them)"
    )
    if "time_to_first_token" not in metrics and "inter_token_latency" not in metrics:
        prov.warnings.append(
            "no TTFT or inter-token latency rows (a non-streaming run): TTFT, TPOT and tokens/s "
            "per user are unknown"
        )
    out = _record_from_metrics(metrics, src, prov, streaming=None)
    out["concurrency"] = math.nan
    out["request_rate_per_s"] = math.nan
    _fill_concurrency_from_name(out, src, prov)
    rows = [out]
    apply_gpu_count(rows, src, prov, gpu_count)
    return finish_curve(rows, src, prov)
