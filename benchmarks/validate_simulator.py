"""Validate the throughput simulator against MLPerf and regenerate docs/simulator.md.

Not product code. Three jobs:

1. `--refresh-rows`: copy the MLPerf Inference rows the calibration needs from
   ../shared/data/mlperf_inference_llm.csv (v4.0-v6.0) and ../shared/data/mlperf_inference_v6.1.csv
   into models/calibration/mlperf_rows.csv (closed division, tokens/s, catalog hardware and
   models, source columns kept). The product reads only the copy.
2. `--refit-holdout`: fit the coefficients on the rows of the rounds before the test round (v6.1)
   into models/calibration/before-v6.1/ (`calibrate(before_round=...)`): the only coefficients
   that can predict that round out of sample once the shipped ones (`econ throughput calibrate
   --force`, every round) have seen it.
3. default: predict every calibration target (uncalibrated roofline = speed of light, default
   coefficients, calibrated, and leave-one-system-out with the sibling's calibration), predict
   MLPerf v6.1 with the held-out coefficients, write the out-of-sample errors to
   models/calibration/out_of_sample_errors.csv (the error bands of every prediction) and the
   report docs/simulator.md.

Run from the repository root, after a change of data, in this order:
`.venv/bin/python benchmarks/validate_simulator.py --refresh-rows --refit-holdout`, then
`.venv/bin/python -m econ throughput calibrate --force`, then
`.venv/bin/python benchmarks/validate_simulator.py`. Each fit takes about a minute and a half on
two cores.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from econ.hardware import get_hardware  # noqa: E402
from econ.llms import get_llm  # noqa: E402
from econ.throughput import calibration as cal  # noqa: E402
from econ.throughput import errorbands as eb  # noqa: E402
from econ.throughput.simulator import SPEED_OF_LIGHT, Efficiency  # noqa: E402

SHARED_ROWS = ROOT.parent / "shared" / "data" / "mlperf_inference_llm.csv"
SHARED_V61 = ROOT.parent / "shared" / "data" / "mlperf_inference_v6.1.csv"
"""v6.1 in the summary.json layout: fewer columns (no benchmark_family, valid, latency limits,
software or notes; p99 latencies on a few Server rows only), read as econ.benchmarks reads it."""
REPORT = ROOT / "docs" / "simulator.md"

ACCELERATORS = {
    "NVIDIA H100-SXM-80GB": "h100-sxm",
    "H100-SXM-80GB": "h100-sxm",
    "NVIDIA H200-SXM-141GB": "h200-sxm",
    "NVIDIA B200-SXM-180GB": "b200-sxm",
    "NVIDIA B300-SXM-270GB": "b300-sxm",
    "NVIDIA GB200": "gb200-nvl72",
    "NVIDIA GB300": "gb300-nvl72",
    "AMD Instinct MI300X 192GB HBM3": "mi300x",
    "AMD Instinct MI300X-NPS1-SPX-192GB-750W": "mi300x",
    "AMD MI300X-NPS1-SPX-192GB-750W": "mi300x",
    "AMD Instinct MI325X 256GB HBM3E": "mi325x",
    "AMD Instinct MI325X 256GB HBM3e": "mi325x",
    "AMD Instinct MI355X 288GB HBM3e": "mi355x",
    "Nvidia B300-SXM-270GB": "b300-sxm",
}
"""MLPerf accelerator names -> catalog keys. Left out: virtualized, H200 CTS (1,000 W variant),
NVL/PCIe cards, MI350X/MI350P and mixed systems (MI300X/MI325X, MI300X/MI355X, H200/MI350X),
which the catalog does not describe."""
KEEP = [
    "round",
    "submitter",
    "system_name",
    "division",
    "availability",
    "accelerator",
    "accelerator_count",
    "benchmark",
    "benchmark_family",
    "scenario_normalized",
    "metric_unit",
    "result",
    "per_accelerator",
    "valid",
    "ttft_p99_ms",
    "tpot_p99_ms",
    "ttft_limit_ms",
    "tpot_limit_ms",
    "software",
    "source",
    "notes",
]


def v61_rows() -> pd.DataFrame:
    """../shared's v6.1 rows in the columns of the v4.0-v6.0 file: family and scenario from the
    submitted benchmark name and scenario (`llama2-70b-99.9` -> `llama2-70b`), unit lower-cased
    (`Tokens/s`), valid, limits and software left empty (the file does not hold them; the fit
    takes the limits from mlperf_workloads.toml and reads no measured latency)."""
    d = pd.read_csv(SHARED_V61)
    d["metric_unit"] = d["metric_unit"].str.lower()
    d["benchmark_family"] = d["benchmark"].str.replace(r"-99(?:\.9)?$", "", regex=True)
    d["scenario_normalized"] = d["scenario"]
    for column in ("valid", "ttft_limit_ms", "tpot_limit_ms", "software"):
        d[column] = np.nan
    d["notes"] = (
        "v6.1 summary.json row (mlperf_inference_v6.1.csv): benchmark_family read from benchmark; "
        "valid, latency limits and software not in that file"
    )
    return d


def refresh_rows() -> Path:
    """Copy the rows the calibration uses from ../shared into models/calibration/mlperf_rows.csv."""
    d = pd.concat([pd.read_csv(SHARED_ROWS), v61_rows()], ignore_index=True)
    d = d[
        (d.division == "closed") & (d.metric_unit == "tokens/s") & d.accelerator.isin(ACCELERATORS)
    ]
    family = d.benchmark_family.replace({"llama2-70b-interactive": "llama2-70b"})
    # v5.0's llama2-70b-interactive Offline rows repeat llama2-70b Offline runs
    d = d[
        ~((d.benchmark_family == "llama2-70b-interactive") & (d.scenario_normalized == "Offline"))
    ]
    family = family.loc[d.index]
    workloads = cal.load_workloads()
    keep = family.isin(workloads) & d.scenario_normalized.isin(["Offline", "Server", "Interactive"])
    out = d.loc[keep, KEEP].copy()
    out.insert(0, "model", family[keep])
    out.insert(0, "hardware", d.loc[keep, "accelerator"].map(ACCELERATORS))
    out = out.rename(columns={"scenario_normalized": "scenario"})
    out = out.sort_values(["hardware", "model", "scenario", "round", "submitter"])
    path = cal.rows_path()
    header = (
        "# MLPerf Inference datacenter LLM rows used to calibrate the simulator; copied from "
        "../shared/data/mlperf_inference_llm.csv (v4.0-v6.0; its scenario_normalized is the "
        "scenario column here, so v5.0's llama2-70b-interactive rows, submitted as Server, read "
        "Interactive, and their Offline rows, repeats of llama2-70b Offline runs, are left out) "
        "and mlperf_inference_v6.1.csv (v6.1; "
        "no valid, latency limit or software columns there) by benchmarks/validate_simulator.py "
        f"--refresh-rows on {dt.date.today().isoformat()}. Columns hardware and model map "
        "accelerator and benchmark_family to catalog keys; source holds each row's MLCommons "
        "result path.\n"
    )
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", newline="") as fh:
        fh.write(header)
        out.to_csv(fh, index=False)
    tmp.replace(path)
    return path


def _pct(x: float) -> str:
    return "n/a" if not np.isfinite(x) else f"{x:+.0%}"


def _abs_pct(x) -> str:
    return "n/a" if not np.isfinite(x) else f"{x:.1%}"


def evaluate() -> tuple[pd.DataFrame, dict]:
    """Predictions of every target under four parameter sets."""
    rows = cal.load_rows()
    targets = cal.calibration_targets(rows)
    batch = cal.PredictionBatch.build(targets)
    fits = cal.load_all_efficiencies()
    calibrated = cal.efficiency_by_row(targets, fits)
    loso = cal.efficiency_by_row(targets, fits, leave_one_out=True)
    frame = targets.copy()
    frame["roofline"] = batch.predict(SPEED_OF_LIGHT)
    frame["default"] = batch.predict(Efficiency())
    frame["calibrated"] = batch.predict(calibrated)
    frame["loso"] = batch.predict(loso)
    for col in ("roofline", "default", "calibrated", "loso"):
        frame[f"err_{col}"] = frame[col] / frame["measured"] - 1.0
    return frame, fits


MODEL_NOTES = """
## The model in one page

Per GPU of an instance of G GPUs (attention tensor parallel tp, dp = G / tp attention groups,
experts over all G), for B sequences in flight with mean input I and output O tokens:

- memory: weights W_always / tp + W_experts / G at the precision's bytes per weight (FP4 counts its
  block scales); KV per sequence (I + O/2) x b_kv / min(tp, KV heads) / dp, MLA's latent replicated
  on every TP rank, sliding-window layers capped at the window; capacity = (HBM (1 - reserve) -
  weights) / KV per sequence;
- step time t = [smoothmax_p(t_mem, t_compute) + t_comm + t_step + L t_layer + (B / G) t_token] /
  eta_m with eta_m the model's efficiency (below) and
  t_mem = (W_always / tp + W_experts / G x min(1, f (1 + imbalance)) + KV read) / (bandwidth x
  eff_bw), f = 1 - (1 - k/E)^tokens, t_compute = (decode FLOPs / eff_compute + prefill-chunk FLOPs /
  eff_prefill) / (G x peak), 2 FLOPs per active parameter per token plus attention over the
  context (quadratic in prefill), t_comm = TP ring all-reduces and EP dispatch/combine over the
  scale-up domain and the NIC beyond it;
- serving: aggregated steps carry B a I / O prefill tokens (chunked prefill at marginal cost);
  TPOT = t / a (a accepted tokens per step with speculative decoding), TTFT = prefill alone + half a
  step + M/D/1 wait; throughput per GPU = B O / (G R) with R = TTFT + (O - 1) TPOT (Little's law);
  p99 TPOT = tail x mean, p99 TTFT adds ln(100) x the mean wait; disaggregation charges the prefill
  GPUs at a target utilization;
- envelope: the best layout and concurrency under the p99 limits, the SLO edge interpolated between
  grid points; speed of light: the same with every efficiency at 1, no overheads, full overlap and no
  tail. The gap between a measurement and its speed of light is what software can still close. A
  concurrency whose requests arrive faster than their prefills are served (M/D/1 utilization >= 1:
  the TTFT queue grows without bound) is never an operating point, with or without limits, and the
  printed curves leave it out (before a simulator review (31) they kept it: with no limit the
  b200-sxm gpt-oss-120b envelope at 1,000 in / 200 out reached 15,287 tokens/s per GPU at an
  infinite TTFT over an operating point of 9,146, and a curve CSV with TTFT `inf` did not read back).
"""


def explain_miss(r, frame: pd.DataFrame, rows: pd.DataFrame) -> str:
    """Why a target is missed, from its position against its ceiling and its submission."""
    share = r.measured / r.roofline
    same_hw = frame[(frame.hardware == r.hardware) & (frame.model != r.model)]
    typical = float(np.median(same_hw.measured / same_hw.roofline)) if len(same_hw) else np.nan
    same_model = frame[(frame.model == r.model) & (frame.hardware != r.hardware)]
    model_share = (
        float(np.median(same_model.measured / same_model.roofline)) if len(same_model) else np.nan
    )
    match = rows[
        (rows.hardware == r.hardware)
        & (rows.model == r.model)
        & (rows.scenario == r.scenario)
        & (rows["round"] == r["round"])
        & np.isclose(rows.per_accelerator, r.measured)
    ]
    software = (
        str(match.software.iloc[0])
        if len(match) and "software" in match and pd.notna(match.software.iloc[0])
        else "n/a"  # the v6.1 file names no software
    )
    parts = [
        f"It reaches {share:.0%} of its speed of light, where the other models on {r.hardware} reach "
        f"a median {typical:.0%} and {r.model} on other hardware {model_share:.0%}.",
        f"Submission: {r.submitter}, software {software}.",
    ]
    if model_share < 0.6 * typical:
        parts.append(
            f"{r.model} sits low against its ceiling on every hardware, which points at the model "
            "(kernel maturity, or the estimated input length in mlperf_workloads.toml) rather than "
            "at this hardware."
        )
    if share < 0.5 * typical:
        parts.append(
            "One set of coefficients serves every model on a hardware and one efficiency every "
            "hardware of a model, so a model whose stack is far less tuned on this hardware (or a "
            "weak single submission) is over-predicted; the robust fit treats it as an outlier "
            "rather than bending the other models' predictions."
        )
    elif r.err_calibrated < 0:
        parts.append(
            "The submission beats the shared coefficients: model-specific kernels or scheduling "
            "the other models on this hardware do not show."
        )
    else:
        parts.append(
            "The shared coefficients are optimistic for this model here; its measured share of the "
            "ceiling is below what the other models on this hardware reach."
        )
    if r.scenario == "Interactive" and r.model == "deepseek-r1":
        parts.append(
            "Speculative decoding (MTP, 2.5 tokens kept per step) is assumed, not measured."
        )
    return " ".join(parts)


def refit_holdout() -> Path:
    """Fit every hardware on the rows of the rounds before the test round, into before-<round>/."""
    directory = cal.holdout_dir(eb.TEST_ROUND)
    directory.mkdir(parents=True, exist_ok=True)
    cal.calibrate(directory=directory, before_round=eb.TEST_ROUND)
    return directory


def write_errors(errors: pd.DataFrame) -> Path:
    """models/calibration/out_of_sample_errors.csv, atomically, with a header naming its origin."""
    path = eb.errors_path()
    header = (
        "# Out-of-sample errors of the throughput simulator, written by "
        f"benchmarks/validate_simulator.py on {dt.date.today().isoformat()}: check 'by round' = "
        f"MLPerf {eb.TEST_ROUND} (benchmark catalog, closed, available, best per-GPU result per "
        "hardware, model and scenario) predicted with the held-out coefficients in "
        f"models/calibration/before-{eb.TEST_ROUND}/, fitted on the earlier rounds only "
        "(calibrated_pair: a pair that fit saw); 'leave one system out' = calibration targets "
        "predicted with the sibling's shipped coefficients. ratio = measured / predicted.\n"
    )
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", newline="") as fh:
        fh.write(header)
        errors.to_csv(fh, index=False, float_format="%.6g")
    tmp.replace(path)
    return path


def round_section(errors: pd.DataFrame) -> list[str]:
    """The by-round check: summary by group and every test-round target."""
    test = errors[errors["check"] == eb.BY_ROUND].copy()
    test["err"] = test["predicted"] / test["measured"] - 1.0
    loso = errors[errors["check"] == eb.LEAVE_ONE_OUT].copy()
    loso["err"] = loso["predicted"] / loso["measured"] - 1.0

    def summary(sub: pd.DataFrame, label: str) -> str:
        err = sub["err"].dropna()
        if err.empty:
            return f"| {label} | 0 | n/a | n/a |"
        q05, q95 = np.quantile(err, [0.05, 0.95])
        return (
            f"| {label} | {len(err)} | {_abs_pct(float(np.median(err.abs())))} | "
            f"{_pct(q05)} to {_pct(q95)} |"
        )

    calibrated_generations = sorted(
        {get_hardware(h).generation for h in test.loc[test["calibrated_pair"], "hardware"]}
    )
    lines = [
        f"## Out of sample: fit on rounds up to v6.0, predict {eb.TEST_ROUND}",
        "",
        "The shipped coefficients are fitted on every round of `models/calibration/mlperf_rows.csv`, "
        f"{eb.TEST_ROUND} included, so on {eb.TEST_ROUND} they are in sample. This check therefore "
        "uses coefficients fitted by the same code on the rows of the rounds up to v6.0 only "
        f"(`models/calibration/before-{eb.TEST_ROUND}/`, written by `--refit-holdout`): they "
        f"predict the best per-GPU result of MLPerf Inference {eb.TEST_ROUND} (the benchmark "
        "catalog's closed, available rows) per hardware, model and scenario, which measures the "
        "error of predicting one round ahead: what the shipped coefficients can be expected to "
        "show on the next round. A calibrated pair is a hardware x model pair the fit that made "
        f"the prediction saw; the catalog has no MI355X row before {eb.TEST_ROUND}, so all of "
        "its pairs are outside here (the shipped fit has them); it holds v5.1 and v6.0 only in "
        "part (AMD reports MI355X results in both rounds: `models/benchmarks/rounds.csv`, "
        "`known_gaps`), so this says what the catalog lacks, not that none was submitted. "
        "These errors, with the "
        "leave-one-system-out ones (the shipped calibration targets predicted by the sibling's "
        "shipped coefficients), are stored in `models/calibration/out_of_sample_errors.csv` and "
        "give every prediction its error band (`econ.throughput.errorbands`): the prediction times "
        "the 5th to 95th percentiles of measured / predicted, from the by-round errors of "
        "calibrated pairs for a pair the shipped fit saw whose hardware generation is among "
        f"theirs ({', '.join(calibrated_generations)}), at the precision the calibration "
        "assumes its rows ran (below), and from every error outside calibrated "
        "pairs (by round and leave one system out) otherwise, which the prediction then says "
        "along with the checks and hardware its band rests on. A pair with its own MLPerf "
        "results is then checked against them: a prediction of an MLPerf scenario's workload "
        "against that scenario's target (the best per-GPU result of its latest round), any other "
        "against each target of the pair (measured / this table's calibrated prediction); where "
        "such a ratio falls outside the sample's percentiles, the band is widened to reach it and "
        "a warning names the measured figure and the miss (the targets it widens are listed "
        "under the per-target table). An operating point on more "
        "GPUs than the pair's calibration rows is flagged as extrapolated, with the figure "
        "limited to their GPU count. `econ throughput simulate` prints the band and a Monte "
        "Carlo input (`--dist throughput.tokens_per_s_per_gpu=lognormal(mu, sigma)`, the "
        "lognormal whose 5th and 95th percentiles are the band's ends: mu = (ln low + ln high) "
        "/ 2, sigma = (ln high - ln low) / (2 x 1.6449); or, in its JSON, the empirical "
        "`discrete(...)` of every observed error, which keeps the heavy tail); a scenario with "
        "simulated throughput carries the band and its warnings.",
        "",
        "| check | predictions | median abs. error | 5th-95th percentile of the error |",
        "|---|---:|---:|---:|",
        summary(test, f"{eb.TEST_ROUND} by round, all targets"),
        summary(test[test["calibrated_pair"]], f"{eb.TEST_ROUND} by round, calibrated pairs"),
        summary(
            test[~test["calibrated_pair"]], f"{eb.TEST_ROUND} by round, outside calibrated pairs"
        ),
        summary(loso, "leave one system out (calibration targets)"),
        summary(
            pd.concat([test[~test["calibrated_pair"]], loso]),
            "band for predictions outside calibrated pairs (both)",
        ),
        "",
        f"| hardware | model | scenario | calibrated pair | measured {eb.TEST_ROUND} tok/s/GPU | "
        "predicted | error |",
        "|---|---|---|---|---:|---:|---:|",
    ]
    for _, r in test.sort_values(["hardware", "model", "scenario"]).iterrows():
        lines.append(
            f"| {r.hardware} | {r.model} | {r.scenario} | {'yes' if r.calibrated_pair else 'no'} | "
            f"{r.measured:,.0f} | {r.predicted:,.0f} | {_pct(r.err)} |"
        )
    worst = test.reindex(test["err"].abs().sort_values(ascending=False).index).head(5)
    lines += [
        "",
        "Largest misses: "
        + "; ".join(
            f"{r.hardware} {r.model} {r.scenario} {_pct(r.err)}"
            + ("" if r.calibrated_pair else " (outside calibrated pairs)")
            for _, r in worst.iterrows()
        )
        + "."
        + (
            " All of them over-predict a mixture-of-experts model: the model efficiency is one "
            "factor across hardware, and MoE serving stacks differ most between submitters and "
            f"hardware (the catalog has no AMD gpt-oss-120b or DeepSeek-R1 row before "
            f"{eb.TEST_ROUND}; it holds v6.0 only in part, and AMD reports MI355X gpt-oss-120b "
            "results in that round)."
            if all(r.err > 0 and get_llm(r.model).is_moe for _, r in worst.iterrows())
            else ""
        ),
        "",
    ]
    return lines


def model_section() -> list[str]:
    """The stored per-model efficiencies and what they rest on."""
    lines = [
        "",
        "## Per-model efficiency",
        "",
        "The hardware coefficients are shared by every model a hardware serves; each model's step "
        "times are further divided by its efficiency eta_m, fitted with them on the same rows "
        f"(rounds up to {eb.TEST_ROUND}) by alternating the per-hardware fits with a step of each eta_m to the "
        f"median log miss of its targets over all hardware ({cal.MODEL_ROUNDS} rounds, then a "
        "last fit of the hardware; `models/calibration/models.toml`). eta_m < 1: the model's "
        "serving stack reaches less of its roofline than the hardware's other models.",
        "",
        "| model | mixture of experts | efficiency | targets | hardware | in-sample median abs. error |",
        "|---|---|---:|---:|---|---:|",
    ]
    for model, (value, info) in sorted(cal.load_model_efficiencies().items()):
        lines.append(
            f"| {model} | {'yes' if get_llm(model).is_moe else 'no'} | {value:.3f} | "
            f"{info.get('rows', 0)} | {info.get('hardware', '')} | "
            f"{_abs_pct(float(info.get('median_abs_error', np.nan)))} |"
        )
    return lines


def widened_sentence(frame: pd.DataFrame) -> str:
    """Which targets' bands (at the calibrated prediction, with the target as the check) are
    widened to reach the measured figure: the pairs the sample's errors do not cover."""
    widened = []
    for _, r in frame.sort_values(["hardware", "model", "scenario"]).iterrows():
        band = eb.error_band(r.hardware, r.model, float(r.calibrated), scenario=r.scenario)
        if band.widened:
            widened.append(
                f"{r.hardware} {r.model} {r.scenario} ({band.sample_ends[0]:,.0f}-"
                f"{band.sample_ends[1]:,.0f} widened to {band.low:,.0f}-{band.high:,.0f})"
            )
    return (
        f"Error bands widened to the measured figure at the calibrated prediction ({len(widened)} "
        f"of {len(frame)} targets, each with a warning): " + "; ".join(widened) + "."
        if widened
        else "No target's band needs widening to reach its measured figure."
    )


def write_report(frame: pd.DataFrame, fits: dict, errors: pd.DataFrame) -> str:
    rows = cal.load_rows()

    def med(col, sub=None):
        x = (frame if sub is None else sub)[f"err_{col}"].abs()
        return float(np.nanmedian(x))

    pairs = frame.groupby(["hardware", "model"])
    pair_err = pairs["err_calibrated"].apply(lambda s: float(np.nanmedian(s.abs())))
    lines = [
        "# Simulated throughput: validation against MLPerf Inference",
        "",
        f"Generated by `benchmarks/validate_simulator.py` on {dt.date.today().isoformat()}; do not edit "
        "by hand. Data: `models/calibration/mlperf_rows.csv` (MLPerf Inference v4.0-"
        f"{eb.TEST_ROUND} closed division; preview and RDI rows are left out of the fit; copied from "
        "../shared/data/mlperf_inference_llm.csv and mlperf_inference_v6.1.csv). Each "
        "target is the highest per-GPU result of the latest round for a (hardware, model, scenario); "
        "Server and Interactive are predicted as the most tokens/s per GPU whose p99 TPOT and TTFT "
        "meet the MLPerf limits, Offline without limits, at the mean output length of the "
        "constraints file and the input lengths in `models/calibration/mlperf_workloads.toml`.",
        "",
        "## Summary",
        "",
        "| parameter set | median abs. error (all targets) | median over hardware/model pairs |",
        "|---|---:|---:|",
    ]
    for col, label in (
        ("roofline", "uncalibrated roofline (speed of light)"),
        ("default", "default coefficients (priors, no fit)"),
        ("calibrated", "calibrated (fitted per hardware)"),
        ("loso", "leave-one-system-out (sibling's calibration)"),
    ):
        by_pair = pairs[f"err_{col}"].apply(lambda s: float(np.nanmedian(s.abs())))
        lines.append(
            f"| {label} | {_abs_pct(med(col))} | {_abs_pct(float(np.nanmedian(by_pair)))} |"
        )
    test = errors[errors["check"] == eb.BY_ROUND]
    test_err = (test["predicted"] / test["measured"] - 1.0).abs()
    test_pairs = test.assign(e=test_err).groupby(["hardware", "model"])["e"].median()
    lines.append(
        f"| by round: fit up to v6.0, predict {eb.TEST_ROUND} (held-out coefficients, "
        f"before-{eb.TEST_ROUND}/) | "
        f"{_abs_pct(float(np.nanmedian(test_err)))} | "
        f"{_abs_pct(float(np.nanmedian(test_pairs)))} |"
    )
    n_ok = int((pair_err <= 0.15).sum())
    lines += [
        "",
        f"Target: calibrated median absolute error <= 15% on the catalog's hardware/model pairs. "
        f"Achieved: {_abs_pct(float(np.nanmedian(pair_err)))} median over {len(pair_err)} pairs; "
        f"{n_ok} of {len(pair_err)} pairs within 15%. The roofline's signed median error is "
        f"{_pct(float(np.nanmedian(frame['err_roofline'])))}: the physics alone is optimistic, as "
        "expected, and every measured row lies below its speed of light "
        f"({int((frame['measured'] <= frame['roofline'] * 1.0001).sum())} of {len(frame)} rows). "
        "Measured throughput is "
        f"{(frame.measured / frame.roofline).min():.0%}-{(frame.measured / frame.roofline).max():.0%} "
        f"of the speed of light (median {(frame.measured / frame.roofline).median():.0%}). Largest "
        "leave-one-system-out misses (the sibling's software or submitters differ): "
        + "; ".join(
            f"{r.hardware} {r.model} {r.scenario} {_pct(r.err_loso)}"
            for _, r in frame.reindex(frame["err_loso"].abs().sort_values(ascending=False).index)
            .head(4)
            .iterrows()
        )
        + ".",
        "",
        *round_section(errors),
        "## Per target",
        "",
        "The calibrated column is what `econ throughput simulate --hardware H --model M "
        "--scenario S --max-gpus N` prints with N the submission's GPU count (the round's best "
        "result's system): the fit, this table and the command search the same layouts on the "
        f"same {cal.CALIBRATION_POINTS}"
        "-point concurrency grid. Without `--max-gpus` the command searches larger instances "
        "too and flags a layout beyond the calibration rows. `--gpus G` (with `--tp T`, "
        "default G for a dense model and 1 for an MoE model) fixes one layout instead: the "
        "printed curve, the operating point, the speed of light, the error band and its Monte "
        "Carlo input are all of that layout (`operating_point` and `speed_of_light` take "
        "`gpus` and `tensor_parallel` as `simulate_curve` does). Before an infrastructure "
        "review (27) only the curve was: `--hardware h200-sxm --model llama2-70b --scenario "
        "server --gpus 8 --tp 8` printed the 8-GPU curve, at most 1,891 tokens/s per GPU, "
        "under an operating point of 4,316 tokens/s per GPU on 1 GPU (tp 1), with that "
        "layout's speed of light and band; it now gives 1,834 tokens/s per GPU on 8 GPUs (tp "
        "8), speed of light 4,660, band 870 to 4,274 (widened to the pair's MLPerf v5.1 "
        "Server result, 4,274 on 8 GPUs, which the 8-way tensor-parallel layout misses by "
        "57%). A fixed layout beyond the calibration rows is flagged as any is, with the "
        "search to their GPU count to compare (`--max-gpus N without --gpus`). The search "
        "leaves out, and `--gpus`/`--tp` refuse, a tensor-parallel degree that does not split "
        "the model's attention heads evenly (it must divide the query heads, and divide the "
        "KV heads or be a multiple of them, as vLLM and TensorRT-LLM require): before a "
        "simulator review (31) the NVL72 envelope of llama2-70b (64 query heads) searched tp "
        "72, and `--gpus 3` printed 2,005 tokens/s per GPU on 3 GPUs (tp 3).",
        "",
        "| hardware | model | scenario | round | measured tok/s/GPU | roofline | calibrated | error | "
        "leave-one-out | error |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for _, r in frame.sort_values(["hardware", "model", "scenario"]).iterrows():
        lines.append(
            f"| {r.hardware} | {r.model} | {r.scenario} | {r['round']} | {r.measured:,.0f} | "
            f"{r.roofline:,.0f} | {r.calibrated:,.0f} | {_pct(r.err_calibrated)} | {r.loso:,.0f} | "
            f"{_pct(r.err_loso)} |"
        )
    lines += ["", widened_sentence(frame)]
    worst = frame.reindex(frame["err_calibrated"].abs().sort_values(ascending=False).index).head(6)
    lines += ["", "## Worst calibrated cases", ""]
    for _, r in worst.iterrows():
        lines.append(
            f"- {r.hardware} / {r.model} / {r.scenario} ({r['round']}): predicted "
            f"{r.calibrated:,.0f} vs measured {r.measured:,.0f} ({_pct(r.err_calibrated)}). "
            + explain_miss(r, frame, rows)
        )
    lines += [
        "",
        "## Fitted coefficients",
        "",
        "| hardware | precision | source | rows | bandwidth | compute | prefill | overlap p | "
        "step overhead [ms] | layer overhead [us] | token overhead [us] | MoE imbalance | "
        "communication | TPOT p99/mean |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key, by_precision in sorted(fits.items()):
        for precision, (eff, info) in sorted(by_precision.items()):
            lines.append(
                f"| {key} | {precision} | {info.get('source', '')} | {info.get('rows', 0)} | "
                f"{eff.bandwidth:.2f} | {eff.compute:.2f} | {eff.prefill:.2f} | {eff.overlap:.1f} | "
                f"{eff.step_overhead_s * 1e3:.2f} | {eff.layer_overhead_s * 1e6:.1f} | "
                f"{eff.token_overhead_s * 1e6:.1f} | {eff.moe_imbalance:.2f} | "
                f"{eff.communication:.2f} | {eff.tpot_tail:.2f} |"
            )
    lines += model_section()
    method = cal.method_notes(cal.calibration_targets(rows)).strip()
    lines += ["", MODEL_NOTES.strip(), "", method, ""]
    text = "\n".join(lines)
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(text)
    return text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refresh-rows", action="store_true", help="re-copy rows from ../shared")
    parser.add_argument(
        "--refit-holdout",
        action="store_true",
        help=f"refit the coefficients on the rounds before {eb.TEST_ROUND} (the by-round check's)",
    )
    args = parser.parse_args(argv)
    if args.refresh_rows:
        print(f"wrote {refresh_rows()}")
    if args.refit_holdout:
        print(f"wrote {refit_holdout()}")
    frame, fits = evaluate()
    errors = eb.out_of_sample_errors()
    print(f"wrote {write_errors(errors)}")
    write_report(frame, fits, errors)
    print(f"wrote {REPORT}")
    pair = frame.groupby(["hardware", "model"])["err_calibrated"].apply(
        lambda s: float(np.nanmedian(s.abs()))
    )
    print(f"calibrated median abs error over pairs: {float(np.nanmedian(pair)):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
