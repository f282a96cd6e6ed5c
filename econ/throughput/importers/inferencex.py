"""SemiAnalysis InferenceX (formerly InferenceMAX) result and aggregate JSON.

Three layouts, one record per concurrency (`conc`):
- fixed ISL/OSL `agg_*.json` from `utils/process_result.py`: vLLM's `*_ms` statistics with `_ms`
  removed and divided by 1000 (seconds), `*_intvty` = 1/TPOT, and `tput_per_gpu` (input + output),
  `output_tput_per_gpu`, `input_tput_per_gpu`; the InferenceX-app database import nests the same
  under `metrics`;
- agentic aggregates (`agg_bmk.json`, a list): p75/p90/p95 instead of p99, system rates
  `input_tput_tps`/`output_tput_tps`/`total_tput_tps`, `duration_seconds`;
- the nested agentic ETL layout: `request_metrics.{latency,tokens,throughput}`.
The per-GPU divisor was the TP size in early scripts and the total GPU count later (`num_gpus`).
See ../shared/data/samples/FORMATS.md and SemiAnalysisAI/InferenceX `utils/process_result.py`.
"""

from __future__ import annotations

import math

from econ.labels import counted
from econ.throughput.curve import Curve
from econ.throughput.importers._common import (
    Provenance,
    SourceFile,
    apply_gpu_count,
    count_from_ratio,
    finish_curve,
    first_number,
    json_records,
    label_pairs,
    number,
)

STATS = {"mean": "mean", "p50": "median", "p90": "p90", "p95": "p95", "p99": "p99"}


def _number(value, field: str) -> float:
    """`number` with NaN refused, naming the field, as Infinity is: InferenceX writes null or
    leaves a key out for what it did not measure, so a NaN is a broken measurement (before, a
    NaN `conc` lost the point's load level and a NaN mean TPOT was read as absent)."""
    return number(value, allow_nan=False, field=field)


def _first(record: dict, keys: list[str]) -> float:
    return first_number(record, keys, allow_nan=False)


def looks_like(record: dict) -> bool:
    return "hw" in record and "conc" in record


def _flat_stats(m: dict, metric: str) -> dict[str, float]:
    out = {}
    for stat, key in STATS.items():
        keys = [f"{key}_{metric}"] + ([f"p50_{metric}"] if stat == "p50" else [])
        out[stat] = _first(m, keys)
    return out


def _nested_stats(block: dict | None, name: str) -> dict[str, float]:
    block = block or {}
    return {stat: _number(block.get(stat), field=f"{name}.{stat}") for stat in STATS}


def _record(r: dict, prov: Provenance, label: str, src: SourceFile, counted_by_user=False):
    out: dict = {}
    nested = isinstance(r.get("request_metrics"), dict)
    m = r.get("metrics") if isinstance(r.get("metrics"), dict) else r
    if nested:
        rm = r["request_metrics"]
        lat = rm.get("latency") or {}
        for metric in ("ttft", "tpot"):
            for stat, value in _nested_stats(
                lat.get(metric), f"request_metrics.latency.{metric}"
            ).items():
                out[f"{metric}_s_{stat}"] = value
        for stat, value in _nested_stats(lat.get("e2el"), "request_metrics.latency.e2el").items():
            out[f"e2e_s_{stat}"] = value
        tokens = rm.get("tokens") or {}
        out["input_tokens_mean"] = _number(
            (tokens.get("input") or {}).get("mean"), field="tokens.input.mean"
        )
        out["output_tokens_mean"] = _number(
            (tokens.get("output_actual") or {}).get("mean"), field="tokens.output_actual.mean"
        )
        tput = rm.get("throughput") or {}
        for kind in ("input", "output", "total"):
            out[f"{kind}_tokens_per_s"] = _number(
                (tput.get(kind) or {}).get("tokens_per_second"),
                field=f"throughput.{kind}.tokens_per_second",
            )
        out["duration_s"] = _number(tput.get("duration_seconds"), field="duration_seconds")
        per_gpu = _number(
            (tput.get("per_gpu") or {}).get("output_tput_tps"), field="per_gpu.output_tput_tps"
        )
        prov.tool = "InferenceX agentic result (nested)"
    else:
        for metric, column in (("ttft", "ttft_s"), ("tpot", "tpot_s"), ("e2el", "e2e_s")):
            for stat, value in _flat_stats(m, metric).items():
                out[f"{column}_{stat}"] = value
        # measured means only: `isl`/`osl` are the requested lengths (a run without ignore_eos
        # stops early: GLM-4.7 on Gaudi3 produced 674 tokens per request for osl 1,024); they
        # stay in the workload label
        out["input_tokens_mean"] = _first({**r, **m}, ["mean_input_tokens"])
        out["output_tokens_mean"] = _first({**r, **m}, ["mean_output_tokens_actual"])
        for kind in ("input", "output", "total"):
            out[f"{kind}_tokens_per_s"] = _first(m, [f"{kind}_tput_tps"])
        out["duration_s"] = _first(m, ["duration_seconds"])
        per_gpu = _first(m, ["output_tput_per_gpu"])
        if ("isl" in r and "mean_input_tokens" not in {**r, **m}) or (
            "osl" in r and "mean_output_tokens_actual" not in {**r, **m}
        ):
            prov.notes.append(
                "isl/osl are the requested lengths, not measured means: a mean length the file "
                "does not measure is left empty (NaN); the requested ones are in the workload label"
            )
    out["output_tokens_per_s_per_gpu"] = per_gpu
    if math.isnan(per_gpu) and "tput_per_gpu" in m:
        prov.warnings.append(
            f"{label}: only tput_per_gpu (input + output tokens) is present; the output-token "
            "rate is unknown"
        )
    out["concurrency"] = _number(r.get("conc"), field="conc")
    total_requests = _number(r.get("num_requests_total"), field="num_requests_total")
    ok_requests = _number(r.get("num_requests_successful"), field="num_requests_successful")
    accounting = r.get("request_accounting") or {}
    errors = _number(accounting.get("records_error_dropped"), field="records_error_dropped")
    if errors > 0:
        prov.warnings.append(f"{label}: {errors:g} requests dropped for errors")
    elif ok_requests < total_requests and not accounting:
        prov.warnings.append(f"{label}: {ok_requests:g} of {total_requests:g} requests succeeded")
    out["completed_requests"] = ok_requests
    if ok_requests == 0:
        raise src.error(
            f"{label}: no request succeeded ({total_requests:g} sent); not a measurement"
        )

    system = out["output_tokens_per_s"]
    num_gpus = _number(r.get("num_gpus"), field="num_gpus")
    if not math.isnan(num_gpus):
        out["gpu_count"] = num_gpus
        prov.gpu_count_basis = "num_gpus"
    elif not math.isnan(count_from_ratio(system, per_gpu)):
        out["gpu_count"] = count_from_ratio(system, per_gpu)
        prov.gpu_count_basis = "system output rate / output_tput_per_gpu"
    else:
        tp = _number(r.get("tp"), field="tp")
        out["gpu_count"] = tp
        prov.gpu_count_basis = "TP size (no num_gpus field)"
        if not math.isnan(tp) and not counted_by_user:  # (the user's count replaces it)
            prov.warnings.append(
                f"GPU count taken as the TP size ({tp:g}): the file has no num_gpus, and early "
                "InferenceX scripts divided by TP; multi-node, DP or disaggregated runs use more "
                "GPUs"
                if not (r.get("is_multinode") or r.get("disagg"))
                else f"{label}: multi-node or disaggregated run without num_gpus; the GPU count "
                f"(taken as TP = {tp:g}) is likely too low"
            )
    divisor = out["gpu_count"]
    if math.isnan(out["output_tokens_per_s"]) and divisor > 0:
        # system rates from the file's own divisor, so a corrected GPU count re-derives per GPU
        out["output_tokens_per_s"] = per_gpu * divisor
        out["output_tokens_per_s_per_gpu"] = math.nan
    if math.isnan(out["input_tokens_per_s"]) and divisor > 0:
        out["input_tokens_per_s"] = _first(m, ["input_tput_per_gpu"]) * divisor
    out["hardware"] = str(r.get("hw") or "")
    out["model"] = str(r.get("model") or "")
    out["precision"] = str(r.get("precision") or "")
    isl, osl = r.get("isl"), r.get("osl")
    dataset = r.get("dataset") if isinstance(r.get("dataset"), dict) else {}
    out["workload"] = label_pairs(
        (
            ("scenario", r.get("scenario_type")),
            ("dataset", dataset.get("loader")),
            ("isl", isl),
            ("osl", osl),
        )
    )
    out["config"] = label_pairs(
        (k, r.get(k) if not isinstance(r.get(k), bool) else str(r.get(k)).lower())
        for k in (
            "framework", "tp", "ep", "dp_attention", "spec_decoding", "offloading",
            "kv_offloading", "disagg", "is_multinode",
        )
    )  # fmt: skip
    if r.get("image"):
        prov.notes.append(f"serving image: {r['image']}")
    if r.get("date"):
        prov.notes.append(f"date: {r['date']}")
    return out


def parse(src: SourceFile, gpu_count: float | None = None) -> Curve:
    records = json_records(src)
    prov = Provenance(tool="InferenceX aggregate")
    prov.latency_unit = "s (InferenceX stores vLLM's ms statistics divided by 1000)"
    labels = [f"{records.where(i)} (conc {r.get('conc')})" for i, r in enumerate(records)]
    rows = []
    for index, (record, label) in enumerate(zip(records, labels, strict=True)):
        if not looks_like(record):
            # Named by its place and key count only: the file may not be the user's, so neither
            # its keys nor its values are quoted (docs/inputs.md).
            raise src.error(
                f"{records.where(index)} is an object with {counted(len(record), 'key')} but "
                "without both 'hw' and 'conc'; not an InferenceX result (expected an agg_*.json "
                "record or an agg_bmk.json list, each record with 'hw' and 'conc')"
            )
        if "scenario_type" in record and "request_metrics" not in record:
            prov.tool = "InferenceX agentic aggregate"
        rows.append(_record(record, prov, label, src, counted_by_user=gpu_count is not None))
    if any(not r["precision"] for r in rows):
        prov.warnings.append("precision is not recorded (empty string in the file)")
    prov.warnings.append(
        "InferenceX does not record its own version; see the serving image in the notes"
    )
    prov.notes[:] = list(dict.fromkeys(prov.notes))
    apply_gpu_count(rows, src, prov, gpu_count)
    return finish_curve(rows, src, prov, labels=labels, repeats="warn")
