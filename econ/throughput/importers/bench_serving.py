"""vLLM (`benchmark_serving.py --save-result`, `vllm bench serve`, `vllm bench sweep`) and SGLang
(`sglang.bench_serving --output-file`) result JSON, including the InferenceX fork of vLLM's script.

Both tools write one JSON object per run (appended runs make JSON Lines; a sweep summary is a
list) with latency statistics in milliseconds under keys `{mean,median,std,pXX}_{metric}_ms`.
vLLM names end-to-end latency `e2el` (old files: `latency`), SGLang `e2e_latency`; the total
token rate is `total_token_throughput` (vLLM), `total_throughput` (SGLang) or, in old vLLM files,
`input_throughput` + `output_throughput`. Per-request arrays (`ttfts`, `itls`) are in seconds.
See ../shared/data/samples/FORMATS.md and vLLM `benchmarks/benchmark_serving.py`.
"""

from __future__ import annotations

import math
import re

import numpy as np

from econ.text import clipped
from econ.throughput.curve import Curve
from econ.throughput.importers._common import (
    MS_PER_S,
    Provenance,
    SourceFile,
    apply_gpu_count,
    finish_curve,
    first_number,
    gpu_count_from_text,
    json_records,
    label_pairs,
    number,
)

SAME_WINDOW_TOLERANCE = 0.01
"""Relative gap allowed between total_output_tokens / duration and output_throughput for the
input rate to be derived over the same window (the file prints both unrounded)."""
STAT_KEYS = {"mean": "mean", "p50": "median", "p90": "p90", "p95": "p95", "p99": "p99"}
E2E_NAMES = ("e2el", "e2e_latency", "latency")

# Keys the tools write themselves; anything else at the top level came from `--metadata` or a
# wrapper and labels the serving configuration.
KNOWN_KEYS = {
    "date", "backend", "endpoint_type", "label", "model_id", "tokenizer_id", "num_prompts",
    "request_rate", "burstiness", "max_concurrency", "duration", "completed", "failed",
    "total_input_tokens", "total_output_tokens", "request_throughput", "request_goodput",
    "request_goodput:", "output_throughput", "total_token_throughput", "input_throughput",
    "max_output_tokens_per_s", "max_concurrent_requests", "rtfx", "best_of", "use_beam_search",
    "input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors", "run_number",
    "benchmark_start_time_unix", "benchmark_end_time_unix", "tag", "dataset_name",
    "sharegpt_output_len", "random_input_len", "random_output_len", "random_range_ratio",
    "server_info", "total_input_text_tokens", "total_input_vision_tokens",
    "total_output_tokens_retokenized", "total_throughput", "concurrency", "accept_length",
    "model", "gpu", "input_len", "output_len",
}  # fmt: skip
STAT_KEY = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_[a-z0-9_]+_ms$")


def _measured(value, **kw) -> float:
    """`number` with NaN refused, naming the field, as Infinity is: both tools write null or
    leave a key out for what they did not measure, so a NaN (JSON's bare token or the text
    "NaN") is a broken measurement, not an absent one."""
    return number(value, allow_nan=False, **kw)


def is_sglang(record: dict) -> bool:
    return (
        "server_info" in record
        or "total_output_tokens_retokenized" in record
        or "median_e2e_latency_ms" in record
        or str(record.get("backend", "")).startswith("sglang")
    )


def looks_like(record: dict) -> bool:
    """A bench_serving result: latency statistics in ms (`*_ttft_ms`, `*_itl_ms`), or the run
    counters and rates the tools write (a file without `output_throughput` is still theirs)."""
    return any(k.endswith(("_ttft_ms", "_itl_ms", "_tpot_ms")) for k in record) or (
        "output_throughput" in record and ("completed" in record or "duration" in record)
    )


def server_infos(info) -> list[dict]:
    """The server argument objects in `server_info`: one object, or for prefill/decode
    (disaggregated) runs the router's `{"prefill": [...], "decode": [...]}` lists."""
    if not isinstance(info, dict):
        return []
    if "tp_size" in info or "version" in info:
        return [info]
    found = []
    for value in info.values():
        items = value if isinstance(value, list) else [value]
        found += [i for i in items if isinstance(i, dict) and ("tp_size" in i or "version" in i)]
    return found


def model_name(model_id: str) -> str:
    """A Hugging Face id from a local cache path ('.../models--org--name/snapshots/...')."""
    match = re.search(r"models--([^/]+?)--([^/]+)", model_id or "")
    return f"{match.group(1)}/{match.group(2)}" if match else (model_id or "")


def _stats(record: dict, metric: str, scale: float = MS_PER_S) -> dict[str, float]:
    return {
        # a NaN statistic is refused as Infinity is, not read as "not measured"
        stat: first_number(record, [f"{key}_{metric}_ms"], scale, allow_nan=False)
        for stat, key in STAT_KEYS.items()
    }


def _from_arrays(record: dict, out: dict, prov: Provenance, label: str) -> None:
    """Recompute TTFT/TPOT statistics from per-request arrays, dropping requests with no tokens.

    Old vLLM builds counted requests that produced no token with TTFT 0.0 in the statistics;
    the arrays let us drop them and fill percentiles the file did not print.
    """
    ttfts = np.asarray(
        [_measured(v, field="ttfts[]") for v in record.get("ttfts") or []], dtype=float
    )
    lens = np.asarray(
        [_measured(v, field="output_lens[]") for v in record.get("output_lens") or []], dtype=float
    )
    errors = record.get("errors") or [""] * len(ttfts)
    if len(ttfts) == 0 or len(lens) != len(ttfts):
        return
    mean_ms = first_number(record, ["mean_ttft_ms"], allow_nan=False)
    if not math.isnan(mean_ms) and np.isfinite(ttfts).all() and ttfts.mean() > 0:
        ratio = mean_ms / ttfts.mean()
        if abs(ratio - MS_PER_S) / MS_PER_S < 0.02:
            scale, unit = 1.0, "s"
        elif abs(ratio - 1.0) < 0.02:
            scale, unit = MS_PER_S, "ms"
        else:
            prov.warnings.append(
                f"{label}: per-request ttfts do not match mean_ttft_ms in any unit; "
                "the arrays were not used"
            )
            return
    else:
        scale, unit = 1.0, "s (assumed, as vLLM writes them)"
    prov.notes.append(f"per-request arrays in {unit} (checked against mean_ttft_ms)")
    ok = (lens > 0) & (ttfts > 0) & np.asarray([not e for e in errors])
    empty = int((~ok).sum())
    if ok.sum() == 0:
        return
    ttft_s = ttfts[ok] / scale
    new = {"mean": float(ttft_s.mean())}
    for stat, q in (("p50", 50), ("p90", 90), ("p95", 95), ("p99", 99)):
        new[stat] = float(np.percentile(ttft_s, q))
    if empty:
        prov.warnings.append(
            f"{label}: {empty} of {len(ttfts)} requests produced no output token but are counted "
            f"with TTFT 0 in the file's statistics (mean {mean_ms:.4g} ms); TTFT recomputed from "
            f"the per-request arrays without them (mean {new['mean'] * MS_PER_S:.4g} ms)"
        )
    for stat, value in new.items():
        if empty or math.isnan(out[f"ttft_s_{stat}"]):
            out[f"ttft_s_{stat}"] = value
    itls = record.get("itls") or []
    if len(itls) == len(lens):
        tpot = np.asarray(
            [
                sum(_measured(x, field="itls[]") for x in gaps) / scale / (n - 1)
                for gaps, n, good in zip(itls, lens, ok, strict=True)
                if good and n > 1 and gaps
            ],
            dtype=float,
        )
        if len(tpot):
            for stat, q in (("p90", 90), ("p95", 95)):
                if math.isnan(out[f"tpot_s_{stat}"]):
                    out[f"tpot_s_{stat}"] = float(np.percentile(tpot, q))


def parse(src: SourceFile, gpu_count: float | None = None) -> Curve:
    records = json_records(src)
    sglang = any(is_sglang(r) for r in records)
    prov = Provenance(tool="sglang.bench_serving" if sglang else "vllm benchmark_serving")
    prov.latency_unit = "ms (stated by the _ms key suffix)"
    labels = records.labels()
    rows = []
    itl_only: list[str] = []
    for record, label in zip(records, labels, strict=True):
        if not looks_like(record):
            raise src.error(
                f"{label} has no *_ttft_ms/*_itl_ms statistics and no output_throughput; not a "
                "vLLM/SGLang bench_serving result"
            )
        if "output_throughput" not in record:
            raise src.error(
                f"{label}: a vLLM/SGLang bench_serving result without output_throughput (the "
                "output-token rate), so there is no throughput to import; expected the key the "
                "tool writes in every result"
            )
        completed = _measured(record.get("completed"), field="completed")
        failed = _measured(record.get("failed"), field="failed")
        if completed == 0 or (
            math.isnan(completed)
            and _measured(record["output_throughput"], field="output_throughput") == 0
        ):
            raise src.error(
                f"{label}: every request failed (completed {record.get('completed')}, failed "
                f"{record.get('failed')}); its metrics are all 0.0 and are not a measurement. "
                "Remove the run or fix the server and benchmark again"
            )
        prompts = _measured(record.get("num_prompts"), field="num_prompts")
        if completed + (failed if failed > 0 else 0) > prompts:  # NaN (no key) compares False
            # the means per request (total tokens / completed) would be off by that ratio
            raise src.error(
                f"{label}: field completed is {completed:g}"
                + (f" (and failed {failed:g})" if failed > 0 else "")
                + f", more than num_prompts {prompts:g} (the requests sent); expected "
                "completed + failed at most num_prompts"
            )
        if failed > 0:
            prov.warnings.append(
                f"{label}: {failed:g} of {completed + failed:g} requests failed; throughput "
                "counts only the completed ones"
            )
        if not sglang and ("endpoint_type" in record or "failed" in record):
            prov.tool = "vllm bench serve"
        infos = server_infos(record.get("server_info")) if sglang else []
        if infos:
            versions = sorted({str(i.get("version")) for i in infos if i.get("version")})
            prov.tool_version = prov.tool_version or "; ".join(versions)
        out: dict = {}
        for metric, column in (("ttft", "ttft_s"), ("tpot", "tpot_s")):
            for stat, value in _stats(record, metric).items():
                out[f"{column}_{stat}"] = value
        for name in E2E_NAMES:
            if f"mean_{name}_ms" in record or f"median_{name}_ms" in record:
                for stat, value in _stats(record, name).items():
                    out[f"e2e_s_{stat}"] = value
                break
        if all(math.isnan(out[f"tpot_s_{s}"]) for s in STAT_KEYS) and "median_itl_ms" in record:
            # old SGLang files print only ITL; for plain decoding one chunk is one token
            for stat, value in _stats(record, "itl").items():
                out[f"tpot_s_{stat}"] = value
            itl_only.append(label)
        if "ttfts" in record:
            _from_arrays(record, out, prov, label)
        n = completed if completed > 0 else math.nan
        out["output_tokens_per_s"] = _measured(
            record.get("output_throughput"), field="output_throughput"
        )
        out["total_tokens_per_s"] = first_number(
            record, ["total_token_throughput", "total_throughput"], allow_nan=False
        )
        out["input_tokens_per_s"] = first_number(record, ["input_throughput"], allow_nan=False)
        if math.isnan(out["total_tokens_per_s"]) and math.isnan(out["input_tokens_per_s"]):
            out["input_tokens_per_s"] = _input_rate(record, out["output_tokens_per_s"], prov)
        out["request_rate_per_s"] = _measured(
            record.get("request_rate"), allow_inf=True, field="request_rate"
        )
        out["concurrency"] = _measured(record.get("max_concurrency"), field="max_concurrency")
        out["duration_s"] = _measured(record.get("duration"), field="duration")
        out["completed_requests"] = completed
        out["input_tokens_mean"] = (
            _measured(record.get("total_input_tokens"), field="total_input_tokens") / n
        )
        out["output_tokens_mean"] = (
            _measured(record.get("total_output_tokens"), field="total_output_tokens") / n
        )
        info = record.get("server_info") if isinstance(record.get("server_info"), dict) else {}
        out["model"] = model_name(
            str(
                record.get("model_id")
                or record.get("model")
                or info.get("served_model_name")
                or info.get("model_path")
                or ""
            )
        )
        out["gpu_count"] = math.nan
        gpu_text = str(record.get("gpu") or "")
        if gpu_text:
            count, _ = gpu_count_from_text(gpu_text)
            out["gpu_count"] = count
            out["hardware"] = re.sub(r"^\d+\s*x\s*", "", gpu_text, flags=re.I).replace("_", " ")
            prov.gpu_count_basis = f"metadata gpu='{clipped(gpu_text)}'"
        if infos:
            count = sum(_server_gpus(i) for i in infos)
            if count > 0:
                out["gpu_count"] = count
                prov.gpu_count_basis = "server_info tp_size x dp_size x pp_size" + (
                    f", summed over {len(infos)} prefill/decode servers" if len(infos) > 1 else ""
                )
            out["precision"] = "; ".join(sorted({_precision(i) for i in infos} - {""}))
        out["workload"] = _workload(record, sglang)
        out["config"] = label_pairs(
            (k, v)
            for k, v in sorted(record.items())
            if k not in KNOWN_KEYS
            and not STAT_KEY.match(k)
            and isinstance(v, str | int | float)
            and not k.startswith("spec_decode_")
            and not k.startswith("max_num")
        )
        rows.append(out)
    if itl_only:
        which = "every run" if len(itl_only) == len(records) else ", ".join(itl_only)
        prov.warnings.append(
            f"no TPOT in the file ({which}): per-token latency taken from ITL, which equals TPOT "
            "only when every streamed chunk carries one token (no speculative or multi-step "
            "decoding)"
        )
    if any("p99.9_ttft_ms" in r for r in records):
        prov.notes.append("p99.9 statistics present (InferenceX fork of benchmark_serving.py)")
    if not prov.tool_version:
        prov.warnings.append(f"the file does not record the {prov.tool.split()[0]} version")
    apply_gpu_count(rows, src, prov, gpu_count)
    return finish_curve(rows, src, prov, labels=labels, repeats="warn")


def _input_rate(record: dict, output_tokens_per_s: float, prov: Provenance) -> float:
    """Input tokens/s of a run that writes neither an input nor a total rate (old SGLang files):
    total_input_tokens / duration, the tools' own formula for input_throughput, used only when
    total_output_tokens / duration gives the file's output_throughput (within 1%: the same
    window); NaN otherwise."""
    duration = _measured(record.get("duration"), field="duration")
    inputs = _measured(record.get("total_input_tokens"), field="total_input_tokens")
    outputs = _measured(record.get("total_output_tokens"), field="total_output_tokens")
    if not (duration > 0 and inputs >= 0 and outputs > 0 and output_tokens_per_s > 0):
        return math.nan
    if abs(outputs / duration / output_tokens_per_s - 1) > SAME_WINDOW_TOLERANCE:
        return math.nan
    note = (
        "input tokens/s = total_input_tokens / duration where the file gives no input or total "
        "rate (its output_throughput is total_output_tokens / duration)"
    )
    if note not in prov.notes:
        prov.notes.append(note)
    return inputs / duration


def _server_gpus(info: dict) -> float:
    tp = _measured(info.get("tp_size"), field="server_info.tp_size")
    dp = _measured(info.get("dp_size"), field="server_info.dp_size")
    pp = _measured(info.get("pp_size"), field="server_info.pp_size")
    dp = 1.0 if info.get("enable_dp_attention") or not dp > 0 else dp  # DP attention shares TP GPUs
    count = tp * dp * (pp if pp > 0 else 1.0)
    return count if count > 0 else 0.0


def _precision(info: dict) -> str:
    """quantization, else dtype; "auto" (the server picks from the checkpoint) is unknown."""
    for key in ("quantization", "dtype"):
        value = str(info.get(key) or "").strip()
        if value and value.lower() not in ("auto", "none", "null"):
            return value
    return ""


def _workload(record: dict, sglang: bool) -> str:
    if "input_len" in record or "output_len" in record:
        return label_pairs(
            (("input_len", record.get("input_len")), ("output_len", record.get("output_len")))
        )
    dataset = record.get("dataset_name")
    if sglang and dataset:
        if dataset == "random":
            return label_pairs(
                (
                    ("dataset", dataset),
                    ("input_len", record.get("random_input_len")),
                    ("output_len", record.get("random_output_len")),
                    ("range_ratio", record.get("random_range_ratio")),
                )
            )
        return label_pairs((("dataset", dataset),))
    return ""
