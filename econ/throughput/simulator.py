"""Simulated throughput: a roofline serving model with fitted efficiency coefficients.

This module owns the physics of LLM serving on a GPU system, as pure numpy functions that broadcast
over concurrency, parallelism configurations and (for calibration) workloads:

- memory: weights per GPU by precision, KV bytes per token (GQA shards, MLA latent replicated under
  tensor parallelism, sliding-window layers capped at the window), free HBM after a reserve, and the
  most sequences that fit;
- decode step: bytes streamed (always-active weights, the expected share of MoE experts a batch
  touches, 1 - (1 - k/E)^tokens, KV reads) over effective bandwidth and FLOPs over effective peak,
  combined by a smooth maximum, plus per-step and per-layer overheads and MoE load imbalance;
- communication: tensor-parallel all-reduce and expert-parallel dispatch/combine over the scale-up
  domain, and the slower scale-out network beyond it;
- prefill: compute-bound with the quadratic attention term, charged at its marginal cost in mixed
  (chunked-prefill) steps, and a queueing term for TTFT under load;
- serving: TPOT, TTFT, request latency, tokens/s per GPU (Little's law) and per user for a
  concurrency; disaggregated prefill/decode and speculative decoding as options;
- the upper envelope over tensor/expert/data-parallel configurations, the operating point under an
  SLO, and the speed of light (every efficiency at 1, no overheads).

The roofline follows Williams, Waterman and Patterson, "Roofline", CACM 52(4), 2009; the LLM serving
decomposition follows Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023
(arXiv 2211.05102) and Yuan et al., "LLM Inference Unveiled: Survey and Roofline Model Insights"
(arXiv 2402.16363); the fitted-efficiency approach follows NVIDIA AIConfigurator and Vidur
(Agrawal et al., MLSys 2024, arXiv 2405.05465). The results are `Curve`s, like measured throughput.

The top-level functions (`simulate_curve`, `simulate_envelope`, `operating_point`, `speed_of_light`)
look up catalog entries and the calibration; everything below them is pure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import NamedTuple

import numpy as np
import pandas as pd

from econ.errors import InputError
from econ.hardware import Hardware, get_hardware, normalize_precision
from econ.llms import LLM, get_llm
from econ.throughput.curve import CURVE_COLUMNS, Curve, pareto_frontier
from econ.throughput.efficiency import Efficiency, load_efficiency, load_model_efficiency

ACTIVATION_BYTES = 2.0
"""Bytes per activation element exchanged by collectives (BF16) [bytes]."""
SCALEUP_LATENCY_S = 5e-6
"""Per-collective latency inside a scale-up domain, NCCL small-message order [s]."""
SCALEOUT_LATENCY_S = 20e-6
"""Per-collective latency across the scale-out network (InfiniBand / RoCE) [s]."""
P99_OVER_MEAN_EXPONENTIAL = math.log(100.0)
"""p99 / mean of an exponential distribution, ln 100 = 4.61, used for the queueing wait's tail."""
MAX_LENGTH_TOKENS = 10_000_000
DEFAULT_POINTS = 64
"""Concurrency points per layout of a drawn curve or envelope."""
SEARCH_POINTS = 40
"""Concurrency points per layout of the operating-point search: the grid the calibration was
fitted on and the validation (docs/simulator.md) predicts on, so that `operating_point` gives the
figures of that table; the SLO edge is interpolated between the two grid points around it."""
HGX_SCALEOUT_NODES = 8
"""Largest multi-node instance the envelope considers on 8-GPU boards [nodes]."""


class SimulatorError(InputError):
    """Bad simulator input: lengths, limits, a model that does not fit, an SLO nobody meets."""


FITTED_FIELDS = (
    "bandwidth",
    "compute",
    "prefill",
    "overlap",
    "step_overhead_s",
    "layer_overhead_s",
    "token_overhead_s",
    "moe_imbalance",
    "communication",
    "tpot_tail",
)
SPEED_OF_LIGHT = Efficiency(
    bandwidth=1.0,
    compute=1.0,
    prefill=1.0,
    overlap=64.0,
    step_overhead_s=0.0,
    layer_overhead_s=0.0,
    token_overhead_s=0.0,
    moe_imbalance=0.0,
    communication=1.0,
    memory_reserve=0.0,
    tpot_tail=1.0,
)
"""Every efficiency at 1, no overheads, full overlap: the physical ceiling."""


class System(NamedTuple):
    """Hardware, model and precision flattened to numbers (floats or arrays that broadcast)."""

    hbm_bytes: float
    bandwidth_bytes_per_s: float
    peak_flops: float
    scaleup_bytes_per_s: float
    scaleout_bytes_per_s: float
    scaleup_domain_gpus: float
    layers: float
    moe_layers: float
    hidden_size: float
    always_active_params: float
    routed_expert_params: float
    routed_experts: float
    experts_per_token: float
    always_active_bytes: float
    routed_expert_bytes: float
    kv_bytes_per_token: float
    kv_shards: float
    sliding_layer_share: float
    sliding_window_tokens: float
    attention_decode_flops: float
    attention_prefill_flops: float


def system_arrays(hardware: Hardware, model: LLM, precision: str) -> System:
    """Flatten a catalog hardware, model and precision into the simulator's numbers."""
    p = normalize_precision(precision, hardware)
    always_bytes, expert_bytes = model.weight_bytes(p)
    return System(
        hbm_bytes=hardware.hbm_bytes,
        bandwidth_bytes_per_s=hardware.bandwidth_bytes_per_s,
        peak_flops=hardware.peak_flops(p),
        scaleup_bytes_per_s=hardware.scaleup_bytes_per_s,
        scaleout_bytes_per_s=hardware.scaleout_bytes_per_s,
        scaleup_domain_gpus=float(hardware.scaleup_domain_gpus),
        layers=float(model.layers),
        moe_layers=float(model.moe_layers),
        hidden_size=float(model.hidden_size),
        always_active_params=model.always_active_params,
        routed_expert_params=model.routed_expert_params,
        routed_experts=float(model.routed_experts or 0),
        experts_per_token=float(model.experts_per_token or 0),
        always_active_bytes=always_bytes,
        routed_expert_bytes=expert_bytes,
        kv_bytes_per_token=model.kv_bytes_per_token(p),
        kv_shards=float(model.kv_shards),
        sliding_layer_share=model.sliding_layer_share,
        sliding_window_tokens=float(model.sliding_window_tokens or 1),
        attention_decode_flops=model.attention_flops_per_context_token("decode"),
        attention_prefill_flops=model.attention_flops_per_context_token("prefill"),
    )


def stack_systems(systems: list[System]) -> System:
    """Stack several systems into one whose fields are (n, 1) arrays (a leading workload axis)."""
    return System(
        *(np.array(column, dtype=float)[:, None] for column in zip(*systems, strict=True))
    )


# ---------------------------------------------------------------------------------------------------
# Memory


def weight_bytes_per_gpu(always_active_bytes, routed_expert_bytes, tensor_parallel, gpus):
    """Weights held by one GPU [bytes].

    Always-active weights (attention, dense FFNs, shared experts, embeddings) are split over the
    tensor-parallel group and replicated across data-parallel attention groups; routed experts are
    split over all GPUs of the instance (expert parallelism = instance size), as in DeepSeek-V3's
    serving layout (arXiv 2412.19437, §3.4) and SGLang/TensorRT-LLM wide-EP.

    w = W_always / tp + W_experts / G
    """
    return np.asarray(always_active_bytes) / tensor_parallel + np.asarray(
        routed_expert_bytes
    ) / np.asarray(gpus)


def cached_tokens(context_tokens, sliding_layer_share, sliding_window_tokens):
    """KV entries per sequence in full-layer-equivalents [tokens].

    Sliding-window layers keep at most the window: L_eff = L (1 - s) + s min(L, W) (Beltagy et al.,
    "Longformer", arXiv 2004.05150; GPT-OSS alternates 128-token windows with full attention).
    """
    context = np.asarray(context_tokens, dtype=float)
    share = np.asarray(sliding_layer_share, dtype=float)
    return context * (1.0 - share) + share * np.minimum(context, sliding_window_tokens)


def kv_bytes_per_sequence_per_gpu(
    context_tokens, kv_bytes_per_token, kv_shards, tensor_parallel, gpus, sliding_share, window
):
    """KV cache one sequence costs a GPU of the instance, averaged over the instance [bytes].

    Sequences are spread over dp = G / tp attention groups; inside a group the cache is split over
    min(tp, kv_shards) GPUs and replicated beyond that (GQA with tp > KV heads, and MLA's latent,
    which every TP rank needs whole: DeepSeek-V2 report, arXiv 2405.04434, §2.1.2).

    kv = L_eff x b_kv / min(tp, shards) / dp
    """
    data_parallel = np.asarray(gpus) / tensor_parallel
    shards = np.minimum(tensor_parallel, kv_shards)
    tokens = cached_tokens(context_tokens, sliding_share, window)
    return tokens * np.asarray(kv_bytes_per_token) / shards / data_parallel


def free_hbm_bytes(hbm_bytes, memory_reserve, weights_per_gpu):
    """HBM left for the KV cache after weights and the reserve [bytes]: M (1 - r) - w."""
    return np.asarray(hbm_bytes) * (1.0 - np.asarray(memory_reserve)) - weights_per_gpu


def max_concurrency(free_bytes, kv_per_sequence_bytes):
    """Most sequences in flight per instance whose KV fits [sequences]: free / kv_seq (0 if none)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.asarray(free_bytes) / np.asarray(kv_per_sequence_bytes)
    return np.where(np.asarray(free_bytes) > 0, n, 0.0)


# ---------------------------------------------------------------------------------------------------
# Step time


def experts_touched_share(tokens, experts_per_token, routed_experts):
    """Expected share of a layer's experts that a batch of tokens routes to [fraction].

    With uniform routing each expert is missed by one token with probability 1 - k/E, so
    f = 1 - (1 - k/E)^n (Fedus et al., "Switch Transformers", JMLR 2022, on uniform routing; the
    coupon-collector expectation). 0 for a dense model (E = 0).
    """
    e = np.asarray(routed_experts, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        miss = np.where(e > 0, 1.0 - np.asarray(experts_per_token) / np.where(e > 0, e, 1.0), 1.0)
    return np.where(e > 0, 1.0 - np.power(miss, tokens), 0.0)


def smooth_max(a, b, p):
    """(a^p + b^p)^(1/p): the sum at p = 1, the maximum as p grows (a soft roofline corner, as in
    the generalized-mean overlap model of Hill and Marty's roofline variants; p is fitted)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    top = np.maximum(np.maximum(a, b), 1e-300)
    return top * np.power(np.power(a / top, p) + np.power(b / top, p), 1.0 / np.asarray(p))


def link_bandwidth(group_gpus, scaleup_domain_gpus, scaleup_bytes_per_s, scaleout_bytes_per_s):
    """Effective per-GPU bandwidth of a collective over a group [bytes/s].

    Peers inside the scale-up domain are reached over NVLink / Infinity Fabric, the others over the
    NIC; with a share s = max(0, (n - D) / (n - 1)) of peers outside, the time per byte is the
    weighted harmonic mean: 1 / B = (1 - s) / B_up + s / B_out.
    """
    n = np.asarray(group_gpus, dtype=float)
    outside = np.clip((n - scaleup_domain_gpus) / np.maximum(n - 1.0, 1.0), 0.0, 1.0)
    return 1.0 / ((1.0 - outside) / scaleup_bytes_per_s + outside / scaleout_bytes_per_s)


def collective_latency(group_gpus, scaleup_domain_gpus):
    """Fixed latency of one collective [s]: scale-up or scale-out, 0 for a group of one."""
    n = np.asarray(group_gpus, dtype=float)
    latency = np.where(n > scaleup_domain_gpus, SCALEOUT_LATENCY_S, SCALEUP_LATENCY_S)
    return np.where(n > 1, latency, 0.0)


def communication_time(system: System, tokens, tensor_parallel, gpus, efficiency: Efficiency):
    """Collective time of one forward step over `tokens` tokens of the instance [s].

    Tensor parallelism: two ring all-reduces per layer of the group's activations,
    t = 2 (n - 1) / n x m / B per all-reduce (Patarasuk and Yuan, "Bandwidth optimal all-reduce
    algorithms", JPDC 2009). Expert parallelism: dispatch and combine per MoE layer, each GPU sending
    its tokens' k hidden vectors to the (G - 1) / G of experts held elsewhere.
    """
    tp = np.asarray(tensor_parallel, dtype=float)
    g = np.asarray(gpus, dtype=float)
    data_parallel = g / tp
    message = np.asarray(tokens) / data_parallel * system.hidden_size * ACTIVATION_BYTES
    bw_tp = link_bandwidth(
        tp, system.scaleup_domain_gpus, system.scaleup_bytes_per_s, system.scaleout_bytes_per_s
    )
    allreduce = 2.0 * (tp - 1.0) / tp * message / bw_tp
    tp_time = 2.0 * system.layers * (allreduce / efficiency.communication)
    tp_time = tp_time + 2.0 * system.layers * collective_latency(tp, system.scaleup_domain_gpus)

    is_moe = np.asarray(system.routed_experts) > 0
    per_gpu = (
        np.asarray(tokens) / g * system.experts_per_token * system.hidden_size * ACTIVATION_BYTES
    )
    bw_ep = link_bandwidth(
        g, system.scaleup_domain_gpus, system.scaleup_bytes_per_s, system.scaleout_bytes_per_s
    )
    alltoall = 2.0 * per_gpu * (g - 1.0) / g / bw_ep
    ep_time = system.moe_layers * (
        alltoall / efficiency.communication
        + 2.0 * collective_latency(g, system.scaleup_domain_gpus)
    )
    return tp_time + np.where(is_moe, ep_time, 0.0)


def forward_time(
    system: System,
    decode_tokens,
    decode_context,
    prefill_tokens,
    prefill_context,
    sequences,
    tensor_parallel,
    gpus,
    efficiency: Efficiency,
):
    """Time of one forward step of an instance mixing decode and prefill tokens [s].

    FLOPs per GPU: 2 x active parameters per token (Kaplan et al., arXiv 2001.08361, §2.1) plus
    attention over the context; experts are charged (1 + imbalance) for the busiest GPU. Bytes per
    GPU: always-active weights / tp, the touched share of its experts, and the KV cache of its
    sequences. Decode FLOPs run at the decode efficiency, prefill FLOPs at the prefill efficiency,
    so prefill chunks in a mixed step cost their marginal compute (Agrawal et al., "Sarathi-Serve",
    OSDI 2024, arXiv 2403.02310).

    t = [smoothmax_p(t_mem, t_compute) + t_comm + t_step + L t_layer + (n_decode / G) t_token] / eta_m

    eta_m is the model's efficiency (1 unless a per-model calibration is stored): the coefficients of
    a hardware are shared by every model it serves, and eta_m carries what one model's kernels and
    scheduling do better or worse than that across all hardware.

    Returns (step time, memory time, compute time, communication time) [s].
    """
    g = np.asarray(gpus, dtype=float)
    tp = np.asarray(tensor_parallel, dtype=float)
    imbalance = 1.0 + np.asarray(efficiency.moe_imbalance)
    e = np.asarray(system.routed_experts, dtype=float)
    expert_active = np.where(
        e > 0, system.routed_expert_params * system.experts_per_token / np.where(e > 0, e, 1.0), 0.0
    )
    linear_per_token = 2.0 * (system.always_active_params + expert_active * imbalance)
    decode_ctx = cached_tokens(
        decode_context, system.sliding_layer_share, system.sliding_window_tokens
    )
    prefill_ctx = cached_tokens(
        prefill_context, system.sliding_layer_share, system.sliding_window_tokens
    )
    decode_flops = decode_tokens * (linear_per_token + system.attention_decode_flops * decode_ctx)
    prefill_flops = prefill_tokens * (
        linear_per_token + system.attention_prefill_flops * prefill_ctx
    )
    compute_time = (decode_flops / efficiency.compute + prefill_flops / efficiency.prefill) / (
        g * system.peak_flops
    )

    tokens = decode_tokens + prefill_tokens
    touched = experts_touched_share(tokens, system.experts_per_token, system.routed_experts)
    weight_bytes = system.always_active_bytes / tp + system.routed_expert_bytes / g * np.minimum(
        touched * imbalance, 1.0
    )
    kv_read = sequences * kv_bytes_per_sequence_per_gpu(
        decode_context,
        system.kv_bytes_per_token,
        system.kv_shards,
        tp,
        g,
        system.sliding_layer_share,
        system.sliding_window_tokens,
    )
    memory_time = (weight_bytes + kv_read) / (system.bandwidth_bytes_per_s * efficiency.bandwidth)
    comm_time = communication_time(system, tokens, tp, g, efficiency)
    step = (
        smooth_max(memory_time, compute_time, efficiency.overlap)
        + comm_time
        + efficiency.step_overhead_s
        + system.layers * efficiency.layer_overhead_s
        + np.asarray(decode_tokens) / g * efficiency.token_overhead_s
    ) / np.asarray(efficiency.model_efficiency)
    return step, memory_time, compute_time, comm_time


def queue_wait(arrival_rate_per_s, service_s):
    """Mean wait in an M/D/1 queue [s]: W = rho s / (2 (1 - rho)), rho = lambda s
    (Pollaczek-Khinchine formula, Kleinrock, "Queueing Systems" vol. 1, 1975, §5.7); inf if rho >= 1."""
    rho = np.asarray(arrival_rate_per_s) * service_s
    with np.errstate(divide="ignore", invalid="ignore"):
        wait = rho * service_s / (2.0 * (1.0 - rho))
    return np.where(rho < 1.0, wait, np.inf)


# ---------------------------------------------------------------------------------------------------
# Serving


def serve(
    system: System,
    concurrency,
    input_tokens,
    output_tokens,
    tensor_parallel,
    gpus,
    efficiency: Efficiency,
    *,
    disaggregated=False,
    draft_tokens=0.0,
    accepted_tokens=1.0,
    prefill_utilization=0.7,
):
    """Steady-state serving metrics of an instance at a concurrency (all arguments broadcast).

    Aggregated serving (default): every step decodes the in-flight sequences and prefills, in chunks,
    the input tokens of the requests that replace finished ones, B a ISL / OSL per step. TPOT = step /
    a; TTFT = prefill alone + half a step + the M/D/1 wait for the prefill server; request latency
    R = TTFT + (OSL - 1) TPOT; throughput by Little's law X = B / R (Little, Oper. Res. 9(3), 1961).

    Disaggregated: decode instances run decode-only steps; prefill instances of the same size run at
    `prefill_utilization`, and their GPUs count in the per-GPU figure (Zhong et al., "DistServe",
    OSDI 2024, arXiv 2401.09670). The KV cache of the prompt moves over the scale-out network.

    Speculative decoding: each step verifies `draft_tokens` + 1 tokens per sequence and keeps
    `accepted_tokens` of them on average; drafting costs one layer-equivalent per drafted token
    (an MTP head, DeepSeek-V3 report §2.2; Leviathan et al., ICML 2023, arXiv 2211.17192).

    Returns a dict of arrays: tpot_s, ttft_s, tpot_s_p99, ttft_s_p99, latency_s,
    output_tokens_per_s_per_gpu, output_tokens_per_s (instance), request_rate_per_s,
    tokens_per_s_per_user, gpus_total, max_concurrency, fits.
    """
    b = np.asarray(concurrency, dtype=float)
    isl = np.asarray(input_tokens, dtype=float)
    osl = np.asarray(output_tokens, dtype=float)
    g = np.asarray(gpus, dtype=float)
    tp = np.asarray(tensor_parallel, dtype=float)
    disagg = np.asarray(disaggregated, dtype=bool)
    verify = 1.0 + np.asarray(draft_tokens, dtype=float)
    accepted = np.asarray(accepted_tokens, dtype=float)

    weights = weight_bytes_per_gpu(system.always_active_bytes, system.routed_expert_bytes, tp, g)
    free = free_hbm_bytes(system.hbm_bytes, efficiency.memory_reserve, weights)
    decode_context = isl + osl / 2.0
    kv_seq = kv_bytes_per_sequence_per_gpu(
        decode_context,
        system.kv_bytes_per_token,
        system.kv_shards,
        tp,
        g,
        system.sliding_layer_share,
        system.sliding_window_tokens,
    )
    capacity = max_concurrency(free, kv_seq)

    prefill_per_step = np.where(disagg, 0.0, b * accepted * isl / osl)
    step, _, _, _ = forward_time(
        system, b * verify, decode_context, prefill_per_step, isl / 2.0, b, tp, g, efficiency
    )
    step = step * (1.0 + (verify - 1.0) / system.layers)
    tpot = step / accepted

    prefill_alone, _, _, _ = forward_time(
        system, 0.0, decode_context, isl, isl / 2.0, 0.0, tp, g, efficiency
    )
    latency_no_queue = prefill_alone + 0.5 * step + (osl - 1.0) * tpot
    rate = b / latency_no_queue
    kv_move = isl * system.kv_bytes_per_token / system.scaleout_bytes_per_s
    wait = np.where(
        disagg,
        queue_wait(prefill_utilization / prefill_alone, prefill_alone),
        queue_wait(rate, prefill_alone),
    )
    ttft0 = prefill_alone + np.where(disagg, kv_move, 0.5 * step)
    ttft = ttft0 + wait
    ttft_p99 = ttft0 + P99_OVER_MEAN_EXPONENTIAL * wait
    prefill_gpus = np.where(disagg, rate * prefill_alone * g / prefill_utilization, 0.0)
    gpus_total = g + prefill_gpus
    output_rate = rate * osl
    return {
        "tpot_s": tpot,
        "ttft_s": ttft,
        "tpot_s_p99": tpot * efficiency.tpot_tail,
        "ttft_s_p99": ttft_p99,
        "latency_s": ttft + (osl - 1.0) * tpot,
        "output_tokens_per_s": output_rate,
        "output_tokens_per_s_per_gpu": output_rate / gpus_total,
        "request_rate_per_s": rate,
        "tokens_per_s_per_user": 1.0 / tpot,
        "gpus_total": gpus_total,
        "max_concurrency": capacity,
        "fits": (capacity >= 1.0) & (b <= capacity * (1.0 + 1e-9)),
    }


# ---------------------------------------------------------------------------------------------------
# Parallelism configurations and the envelope


def splits_heads(model: LLM, tensor_parallel: int) -> bool:
    """Whether a tensor-parallel degree splits the model's attention heads evenly: it divides the
    query heads, and for GQA divides the KV heads or is a multiple of them (each KV head then
    replicated), as vLLM and TensorRT-LLM require; 72-way attention over 64 heads cannot run."""
    if model.q_heads % tensor_parallel:
        return False
    kv = model.kv_shards
    return model.attention != "gqa" or kv % tensor_parallel == 0 or tensor_parallel % kv == 0


def parallel_configs(model: LLM, hardware: Hardware, max_gpus: int | None = None) -> np.ndarray:
    """Instance layouts the envelope searches: rows of (gpus, attention tensor-parallel degree).

    Instance sizes are powers of two up to `max_gpus` (default: the scale-up domain, and eight nodes
    of it for 8-GPU boards), plus the domain itself (72 on NVL72). Dense models use tp = G (pipeline
    parallelism is not modelled); MoE models try every power-of-two tp dividing G, with experts over
    all G GPUs and dp = G / tp attention groups. A tp that does not split the attention heads
    evenly (`splits_heads`) is left out: 72 GPUs of a dense model with 64 query heads.
    """
    domain = hardware.scaleup_domain_gpus
    if max_gpus is None:
        max_gpus = domain * (HGX_SCALEOUT_NODES if domain <= 8 else 1)
    sizes = sorted({2**i for i in range(int(math.log2(max_gpus)) + 1)} | {min(domain, max_gpus)})
    rows = []
    for g in sizes:
        if not model.is_moe:
            if splits_heads(model, g):
                rows.append((g, g))
            continue
        tp = 1
        while tp <= g:
            if g % tp == 0 and splits_heads(model, tp):
                rows.append((g, tp))
            tp *= 2
    return np.array(rows, dtype=float)


def layout_configs(
    model: LLM,
    hardware: Hardware,
    max_gpus: int | None = None,
    *,
    gpus: int | None = None,
    tensor_parallel: int | None = None,
) -> np.ndarray:
    """The layouts a search covers: every layout up to `max_gpus` (`parallel_configs`), or the
    one layout `gpus` fixes, with `tensor_parallel` (default `gpus` for dense models and 1,
    attention data parallelism, for MoE models) [rows of (gpus, tensor-parallel degree)]."""
    if gpus is None:
        if tensor_parallel is not None:
            raise SimulatorError("tensor_parallel needs gpus")
        return parallel_configs(model, hardware, max_gpus)
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1:
        raise SimulatorError(f"gpus must be a positive integer, got {gpus!r}")
    tp = tensor_parallel if tensor_parallel is not None else (1 if model.is_moe else gpus)
    if isinstance(tp, bool) or not isinstance(tp, int) or tp < 1 or gpus % tp:
        raise SimulatorError(
            f"tensor parallel degree must be a positive divisor of gpus = {gpus}, got {tp!r}"
        )
    if not splits_heads(model, tp):
        heads = f"{model.q_heads} query heads" + (
            f" and {model.kv_heads} KV heads" if model.attention == "gqa" else ""
        )
        degrees = [d for d in range(1, model.q_heads + 1) if splits_heads(model, d)]
        raise SimulatorError(
            f"tensor parallel degree {tp} does not split the {heads} of {model.key!r} evenly; "
            f"expected one of {', '.join(map(str, degrees))}"
            + ("" if model.is_moe else " (a dense model's tensor-parallel degree is its GPU count)")
        )
    return np.array([[gpus, tp]], dtype=float)


def concurrency_grid(capacity, points=DEFAULT_POINTS):
    """Geometric grid from 1 to each capacity [sequences], shape capacity.shape + (points,)."""
    cap = np.maximum(np.asarray(capacity, dtype=float), 1.0)
    frac = np.linspace(0.0, 1.0, points)
    return np.power(cap[..., None], frac)


def steady_state(metrics):
    """Where the request queue is stable: a finite TTFT (`queue_wait` is inf at utilization >= 1).
    `slo_margin` never takes another point, with or without limits, so curves leave them out."""
    return np.isfinite(metrics["ttft_s_p99"])


def slo_margin(metrics, tpot_limit_s, ttft_limit_s):
    """log of the tightest limit / p99 value: >= 0 where both SLOs hold [log ratio]."""
    with np.errstate(divide="ignore", invalid="ignore"):
        m_tpot = np.log(np.asarray(tpot_limit_s) / metrics["tpot_s_p99"])
        m_ttft = np.log(np.asarray(ttft_limit_s) / metrics["ttft_s_p99"])
    margin = np.minimum(m_tpot, m_ttft)
    return np.where(np.isnan(margin), -np.inf, margin)


def best_under_slo(values, margin, fits):
    """Highest value along the last axis where margin >= 0, interpolating at the SLO edge.

    Between the last feasible grid point and the first infeasible one the value is interpolated
    linearly in the margin, so the optimum moves continuously with the coefficients (needed by the
    least-squares fit). Returns (best value, its position along the axis as a float index);
    -inf and -1 where no point is feasible.
    """
    ok = (margin >= 0) & fits
    direct = np.where(ok, values, -np.inf)
    idx = np.argmax(direct, axis=-1)
    best = np.take_along_axis(direct, idx[..., None], axis=-1)[..., 0]
    pos = np.where(np.isfinite(best), idx.astype(float), -1.0)
    edge = ok[..., :-1] & ~ok[..., 1:] & fits[..., 1:]
    m0, m1 = margin[..., :-1], margin[..., 1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.clip(np.where(np.isfinite(m1), m0 / (m0 - m1), 0.0), 0.0, 1.0)
    v0, v1 = values[..., :-1], values[..., 1:]
    interp = np.where(edge, v0 + frac * (v1 - v0), -np.inf)
    j = np.argmax(interp, axis=-1)
    edge_best = np.take_along_axis(interp, j[..., None], axis=-1)[..., 0]
    edge_pos = j + np.take_along_axis(frac, j[..., None], axis=-1)[..., 0]
    use_edge = edge_best > best
    return np.where(use_edge, edge_best, best), np.where(use_edge, edge_pos, pos)


# ---------------------------------------------------------------------------------------------------
# Top level: catalog look-ups, validation and Curves


def _check_lengths(input_tokens, output_tokens):
    for name, value in (("input length", input_tokens), ("output length", output_tokens)):
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise SimulatorError(f"{name} must be a number of tokens, got {value!r}")
        if not math.isfinite(value) or value < 1 or value > MAX_LENGTH_TOKENS:
            raise SimulatorError(
                f"{name} must be between 1 and {MAX_LENGTH_TOKENS:,} tokens, got {value!r}"
            )


def _check_limit(name, value):
    if value is None:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise SimulatorError(f"{name} must be a positive number of seconds, got {value!r}")
    return float(value)


def _check_speculation(draft_tokens, accepted_tokens):
    if not (isinstance(draft_tokens, int) and 0 <= draft_tokens <= 16):
        raise SimulatorError(f"draft tokens must be an integer from 0 to 16, got {draft_tokens!r}")
    if not (1.0 <= accepted_tokens <= draft_tokens + 1):
        raise SimulatorError(
            f"accepted tokens per step must be between 1 and draft tokens + 1 = "
            f"{draft_tokens + 1}, got {accepted_tokens!r}"
        )


def resolve(hardware: str | Hardware, model: str | LLM, precision: str | None):
    """Catalog entries and the canonical precision (default: the hardware's lowest native one)."""
    hw = hardware if isinstance(hardware, Hardware) else get_hardware(hardware)
    llm = model if isinstance(model, LLM) else get_llm(model)
    p = hw.default_precision if precision is None else normalize_precision(precision, hw)
    return hw, llm, p


def _efficiency_for(hw: Hardware, llm: LLM, precision: str, efficiency):
    """The given coefficients as they are, or the stored calibration of the hardware and precision
    with the model's stored efficiency (which was fitted against calibrated coefficients only)."""
    if efficiency is not None:
        return efficiency, {"efficiency": "given"}
    eff, info = load_efficiency(hw.key, precision)
    if info["efficiency"] != "calibrated":
        return eff, info
    factor, model_info = load_model_efficiency(llm.key)
    return replace(eff, model_efficiency=factor), {**info, **model_info}


def _fit_error(hw: Hardware, llm: LLM, precision: str, configs, efficiency, isl, osl) -> None:
    system = system_arrays(hw, llm, precision)
    g, tp = configs[:, 0], configs[:, 1]
    weights = weight_bytes_per_gpu(system.always_active_bytes, system.routed_expert_bytes, tp, g)
    free = free_hbm_bytes(system.hbm_bytes, efficiency.memory_reserve, weights)
    kv = kv_bytes_per_sequence_per_gpu(
        isl + osl / 2.0,
        system.kv_bytes_per_token,
        system.kv_shards,
        tp,
        g,
        system.sliding_layer_share,
        system.sliding_window_tokens,
    )
    if np.any(free >= kv):
        return
    i = int(np.argmax(free - kv))
    need = weights[i] + kv[i]
    have = system.hbm_bytes * (1.0 - efficiency.memory_reserve)
    raise SimulatorError(
        f"model {llm.key!r} at {precision.upper()} does not fit on {hw.key!r} at any parallelism "
        f"up to {int(configs[:, 0].max())} GPUs: the best layout ({int(g[i])} GPUs, tp {int(tp[i])}) "
        f"needs {need / 1e9:,.1f} GB per GPU (weights {weights[i] / 1e9:,.1f} GB + KV of one "
        f"{int(isl)}+{int(osl)}-token sequence {kv[i] / 1e9:,.2f} GB) and {have / 1e9:,.1f} GB "
        f"is available ({hw.hbm_gb_usable:g} GB usable less a {efficiency.memory_reserve:.0%} reserve)"
    )


def _curve_frame(metrics, concurrency, gpus_total, isl, osl, extra: dict) -> pd.DataFrame:
    n = np.broadcast(concurrency, metrics["tpot_s"]).shape
    nan = np.full(n, np.nan)

    def col(x):
        return np.broadcast_to(np.asarray(x, dtype=float), n).ravel()

    data = dict.fromkeys(CURVE_COLUMNS)
    for key in CURVE_COLUMNS:
        data[key] = nan.ravel()
    data["concurrency"] = col(concurrency)
    data["request_rate_per_s"] = col(metrics["request_rate_per_s"])
    data["output_tokens_per_s"] = col(metrics["output_tokens_per_s"])
    data["total_tokens_per_s"] = col(metrics["request_rate_per_s"] * (isl + osl))
    data["output_tokens_per_s_per_gpu"] = col(metrics["output_tokens_per_s_per_gpu"])
    data["ttft_s_mean"] = col(metrics["ttft_s"])
    data["ttft_s_p99"] = col(metrics["ttft_s_p99"])
    data["tpot_s_mean"] = col(metrics["tpot_s"])
    data["tpot_s_p50"] = col(metrics["tpot_s"])
    data["tpot_s_p99"] = col(metrics["tpot_s_p99"])
    data["tokens_per_s_per_user"] = col(metrics["tokens_per_s_per_user"])
    data["gpu_count"] = col(gpus_total)
    data["input_tokens_mean"] = col(isl)
    data["output_tokens_mean"] = col(osl)
    data["e2e_s_mean"] = col(metrics["latency_s"])
    for key, value in extra.items():
        data[key] = col(value)
    frame = pd.DataFrame(data)
    frame["workload"] = f"ISL {isl:g} / OSL {osl:g}"
    if "instance_gpus" in frame:
        frame["config"] = [
            f"{g:.0f} GPUs, tp {t:.0f}, ep {e:.0f}"
            for g, t, e in zip(
                frame["instance_gpus"],
                frame["tensor_parallel"],
                frame["expert_parallel"],
                strict=True,
            )
        ]
    return frame


def _provenance(hw, llm, precision, eff_info, **more) -> dict:
    return {
        "tool": "econ.simulator",
        "tool_version": "roofline-1",
        "model": llm.key,
        "hardware": hw.key,
        "precision": precision,
        **eff_info,
        **more,
    }


def simulate_curve(
    hardware: str | Hardware,
    model: str | LLM,
    precision: str | None = None,
    *,
    input_tokens: float,
    output_tokens: float,
    gpus: int | None = None,
    tensor_parallel: int | None = None,
    concurrency=None,
    points: int = DEFAULT_POINTS,
    efficiency: Efficiency | None = None,
    disaggregated: bool = False,
    draft_tokens: int = 0,
    accepted_tokens: float = 1.0,
) -> Curve:
    """Throughput-latency curve of one instance layout over concurrency.

    `gpus` defaults to the smallest power of two the model fits on (with the scale-up domain as a
    last step), `tensor_parallel` to `gpus` for dense models and 1 (attention data parallelism)
    for MoE models; `concurrency` defaults to `points` values from 1 to the memory limit. The
    efficiency defaults to the stored calibration of the hardware and precision.
    """
    hw, llm, p = resolve(hardware, model, precision)
    _check_lengths(input_tokens, output_tokens)
    _check_speculation(draft_tokens, accepted_tokens)
    eff, eff_info = _efficiency_for(hw, llm, p, efficiency)
    configs = layout_configs(llm, hw, gpus=gpus, tensor_parallel=tensor_parallel)
    _fit_error(hw, llm, p, configs, eff, float(input_tokens), float(output_tokens))
    system = system_arrays(hw, llm, p)
    isl, osl = float(input_tokens), float(output_tokens)
    g, tp = configs[:, 0], configs[:, 1]
    cap = serve(system, 1.0, isl, osl, tp, g, eff)["max_concurrency"]
    i = int(np.argmax(cap >= 1.0))
    g, tp, cap = g[i], tp[i], cap[i]
    if concurrency is None:
        c = concurrency_grid(cap, points)
    else:
        c = np.asarray(concurrency, dtype=float)
        if c.ndim != 1 or c.size == 0 or not np.all(np.isfinite(c)) or np.any(c < 1):
            raise SimulatorError(f"concurrency must be a list of numbers >= 1, got {concurrency!r}")
    metrics = serve(
        system,
        c,
        isl,
        osl,
        tp,
        g,
        eff,
        disaggregated=disaggregated,
        draft_tokens=draft_tokens,
        accepted_tokens=accepted_tokens,
    )
    frame = _curve_frame(
        metrics,
        c,
        metrics["gpus_total"],
        isl,
        osl,
        {"tensor_parallel": tp, "expert_parallel": g if llm.is_moe else 1, "instance_gpus": g},
    )
    warnings = []
    over = c > cap
    if np.any(over):
        warnings.append(
            f"{int(over.sum())} concurrency values exceed the {cap:,.0f} sequences whose KV cache "
            f"fits; their rows are dropped"
        )
    unsteady = ~over & ~steady_state(metrics)
    if np.any(unsteady):
        warnings.append(
            f"{int(unsteady.sum())} concurrency values from {c[unsteady].min():,.0f} on send "
            "requests faster than their prefills are served (the TTFT queue grows without bound, "
            "so no such point is an operating point); their rows are dropped"
        )
    frame = frame[~(over | unsteady)].reset_index(drop=True)
    if frame.empty:
        raise SimulatorError(
            f"concurrency {', '.join(f'{x:g}' for x in c[:5])}{', ...' if c.size > 5 else ''}: "
            f"none is served on {g:.0f} GPUs (tp {tp:.0f}) of {hw.key!r} ({llm.key!r}, "
            f"{isl:g} in / {osl:g} out): above the {cap:,.0f} sequences whose KV cache fits, or "
            "sending requests faster than their prefills are served; expected smaller values, "
            "each at least 1"
        )
    prov = _provenance(
        hw, llm, p, eff_info, gpus=int(g), tensor_parallel=int(tp), disaggregated=disaggregated
    )
    return Curve(points=frame, provenance=prov, warnings=tuple(warnings))


@dataclass(frozen=True)
class Envelope:
    """All (layout, concurrency) points of a search, with their SLO margins (arrays (K, N))."""

    configs: np.ndarray
    concurrency: np.ndarray
    metrics: dict
    margin: np.ndarray
    input_tokens: float
    output_tokens: float
    system: System | None = None
    efficiency: Efficiency | None = None
    options: dict = field(default_factory=dict)


def envelope_points(
    system: System,
    configs: np.ndarray,
    input_tokens: float,
    output_tokens: float,
    efficiency: Efficiency,
    *,
    tpot_limit_s: float = math.inf,
    ttft_limit_s: float = math.inf,
    points: int = DEFAULT_POINTS,
    disaggregated: bool = False,
    draft_tokens: int = 0,
    accepted_tokens: float = 1.0,
) -> Envelope:
    """Serving metrics on a (layout x concurrency) grid, each layout up to its memory limit."""
    g, tp = configs[:, 0:1], configs[:, 1:2]
    cap = serve(system, 1.0, input_tokens, output_tokens, tp, g, efficiency)["max_concurrency"]
    c = concurrency_grid(cap[:, 0], points)
    metrics = serve(
        system,
        c,
        input_tokens,
        output_tokens,
        tp,
        g,
        efficiency,
        disaggregated=disaggregated,
        draft_tokens=draft_tokens,
        accepted_tokens=accepted_tokens,
    )
    margin = slo_margin(metrics, tpot_limit_s, ttft_limit_s)
    options = {
        "disaggregated": disaggregated,
        "draft_tokens": draft_tokens,
        "accepted_tokens": accepted_tokens,
        "tpot_limit_s": tpot_limit_s,
        "ttft_limit_s": ttft_limit_s,
    }
    return Envelope(
        configs, c, metrics, margin, input_tokens, output_tokens, system, efficiency, options
    )


def simulate_envelope(
    hardware: str | Hardware,
    model: str | LLM,
    precision: str | None = None,
    *,
    input_tokens: float,
    output_tokens: float,
    max_gpus: int | None = None,
    points: int = DEFAULT_POINTS,
    efficiency: Efficiency | None = None,
    disaggregated: bool = False,
    draft_tokens: int = 0,
    accepted_tokens: float = 1.0,
) -> Curve:
    """Upper envelope over parallelism layouts: for each interactivity (tokens/s per user) the most
    tokens/s per GPU any layout reaches. Rows carry their layout (instance_gpus, tensor_parallel,
    expert_parallel), sorted by concurrency within the frontier."""
    hw, llm, p = resolve(hardware, model, precision)
    _check_lengths(input_tokens, output_tokens)
    _check_speculation(draft_tokens, accepted_tokens)
    eff, eff_info = _efficiency_for(hw, llm, p, efficiency)
    configs = parallel_configs(llm, hw, max_gpus)
    isl, osl = float(input_tokens), float(output_tokens)
    _fit_error(hw, llm, p, configs, eff, isl, osl)
    env = envelope_points(
        system_arrays(hw, llm, p),
        configs,
        isl,
        osl,
        eff,
        points=points,
        disaggregated=disaggregated,
        draft_tokens=draft_tokens,
        accepted_tokens=accepted_tokens,
    )
    # points that do not fit or never reach a steady state are -inf: never on the frontier (else
    # they would hide the points an operating point can be, as `slo_margin` never picks them)
    fits = env.metrics["fits"] & steady_state(env.metrics)
    thr = np.where(fits, env.metrics["output_tokens_per_s_per_gpu"], -np.inf).ravel()
    inter = np.where(fits, env.metrics["tokens_per_s_per_user"], -np.inf).ravel()
    keep = pareto_frontier(inter, thr)
    g = np.broadcast_to(env.configs[:, 0:1], env.concurrency.shape).ravel()
    tp = np.broadcast_to(env.configs[:, 1:2], env.concurrency.shape).ravel()
    flat = {k: np.asarray(v).ravel()[keep] for k, v in _broadcast_metrics(env).items()}
    frame = _curve_frame(
        flat,
        env.concurrency.ravel()[keep],
        flat["gpus_total"],
        isl,
        osl,
        {
            "tensor_parallel": tp[keep],
            "expert_parallel": g[keep] if llm.is_moe else np.ones(int(keep.sum())),
            "instance_gpus": g[keep],
        },
    )
    frame = frame.sort_values("tokens_per_s_per_user", ascending=False).reset_index(drop=True)
    prov = _provenance(hw, llm, p, eff_info, envelope_layouts=len(configs))
    return Curve(points=frame, provenance=prov)


def _broadcast_metrics(env: Envelope) -> dict:
    shape = env.concurrency.shape
    return {k: np.broadcast_to(np.asarray(v, dtype=float), shape) for k, v in env.metrics.items()}


@dataclass(frozen=True)
class LayoutPoint:
    """The simulator's best layout and load under an SLO (or, when none meets it, the closest).

    Not to be confused with `econ.throughput.operating_point.OperatingPoint`, the point an SLO
    allows on a measured curve."""

    tokens_per_s_per_gpu: float
    tokens_per_s_per_user: float
    tpot_s_p99: float
    ttft_s_p99: float
    concurrency: float
    instance_gpus: int
    tensor_parallel: int
    meets_slo: bool

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def best_point(env: Envelope) -> LayoutPoint:
    """Highest tokens/s per GPU whose p99 TPOT and TTFT meet the limits; `meets_slo` False and the
    point of largest margin (the closest to meeting them) when none does.

    The point is `best_under_slo`'s, the fit's and the validation's: at the SLO edge its
    throughput is interpolated linearly in the margin between the last grid point that meets the
    limits and the first that does not, and its latencies, tokens/s per user and concurrency
    geometrically with the same fraction (the grid is geometric in concurrency; a binding limit
    that holds at both points is then met exactly)."""
    m = _broadcast_metrics(env)
    fits = m["fits"].astype(bool)
    values, pos = best_under_slo(m["output_tokens_per_s_per_gpu"], env.margin, fits)
    k = int(np.argmax(values))
    if np.isfinite(values[k]):
        lo = int(math.floor(pos[k]))
        hi = min(lo + 1, env.concurrency.shape[1] - 1)
        frac = float(pos[k]) - lo

        def at(values_k):
            a, b = float(values_k[lo]), float(values_k[hi])
            return a if frac == 0.0 else a * (b / a) ** frac

        g, tp = env.configs[k]
        return LayoutPoint(
            tokens_per_s_per_gpu=float(values[k]),
            tokens_per_s_per_user=at(m["tokens_per_s_per_user"][k]),
            tpot_s_p99=at(m["tpot_s_p99"][k]),
            ttft_s_p99=at(m["ttft_s_p99"][k]),
            concurrency=at(env.concurrency[k]),
            instance_gpus=int(g),
            tensor_parallel=int(tp),
            meets_slo=True,
        )
    margin = np.where(fits, env.margin, -np.inf)
    k, j = np.unravel_index(int(np.argmax(margin)), margin.shape)
    return LayoutPoint(
        tokens_per_s_per_gpu=float(m["output_tokens_per_s_per_gpu"][k, j]),
        tokens_per_s_per_user=float(m["tokens_per_s_per_user"][k, j]),
        tpot_s_p99=float(m["tpot_s_p99"][k, j]),
        ttft_s_p99=float(m["ttft_s_p99"][k, j]),
        concurrency=float(env.concurrency[k, j]),
        instance_gpus=int(env.configs[k, 0]),
        tensor_parallel=int(env.configs[k, 1]),
        meets_slo=False,
    )


def operating_point(
    hardware: str | Hardware,
    model: str | LLM,
    precision: str | None = None,
    *,
    input_tokens: float,
    output_tokens: float,
    tpot_limit_s: float | None = None,
    ttft_limit_s: float | None = None,
    max_gpus: int | None = None,
    gpus: int | None = None,
    tensor_parallel: int | None = None,
    efficiency: Efficiency | None = None,
    disaggregated: bool = False,
    draft_tokens: int = 0,
    accepted_tokens: float = 1.0,
    points: int = SEARCH_POINTS,
    strict: bool = True,
) -> LayoutPoint:
    """Most tokens/s per GPU over layouts and concurrency with p99 TPOT and TTFT within the limits
    (None = no limit, as in MLPerf Offline). With `strict`, an SLO that no layout meets raises
    SimulatorError naming the closest point; otherwise that point returns with meets_slo False.

    The search is the calibration's (`calibration.PredictionBatch`): `points` concurrency values
    per layout (default SEARCH_POINTS, the fit's grid) and the SLO edge interpolated between
    them, so with `max_gpus` set to a submission's GPU count it gives the validated figure of
    docs/simulator.md. `gpus` (with `tensor_parallel`) fixes the layout instead, as
    `simulate_curve` does: the point is then on that layout's curve (`layout_configs`)."""
    hw, llm, p = resolve(hardware, model, precision)
    _check_lengths(input_tokens, output_tokens)
    _check_speculation(draft_tokens, accepted_tokens)
    tpot = _check_limit("TPOT limit", tpot_limit_s)
    ttft = _check_limit("TTFT limit", ttft_limit_s)
    eff, _ = _efficiency_for(hw, llm, p, efficiency)
    configs = layout_configs(llm, hw, max_gpus, gpus=gpus, tensor_parallel=tensor_parallel)
    isl, osl = float(input_tokens), float(output_tokens)
    _fit_error(hw, llm, p, configs, eff, isl, osl)
    env = envelope_points(
        system_arrays(hw, llm, p),
        configs,
        isl,
        osl,
        eff,
        tpot_limit_s=tpot,
        ttft_limit_s=ttft,
        points=points,
        disaggregated=disaggregated,
        draft_tokens=draft_tokens,
        accepted_tokens=accepted_tokens,
    )
    point = best_point(env)
    if strict and not point.meets_slo:
        which = (
            "no layout" if gpus is None else f"the layout of {gpus} GPUs (tp {int(configs[0, 1])})"
        )
        raise SimulatorError(
            f"{which} of {hw.key!r} serving {llm.key!r} at {p.upper()} meets p99 TPOT <= "
            f"{_fmt_limit(tpot, 1000, 'ms')} and TTFT <= {_fmt_limit(ttft, 1, 's')}; the closest is "
            f"{point.instance_gpus} GPUs (tp {point.tensor_parallel}) at concurrency "
            f"{point.concurrency:,.0f}: TPOT {point.tpot_s_p99 * 1000:,.1f} ms, "
            f"TTFT {point.ttft_s_p99:,.2f} s, {point.tokens_per_s_per_gpu:,.0f} tokens/s per GPU"
        )
    return point


def _fmt_limit(value, scale, unit):
    return "unlimited" if math.isinf(value) else f"{value * scale:g} {unit}"


def headroom_to_speed_of_light(tokens_per_s_per_gpu, speed_of_light_tokens_per_s_per_gpu):
    """How much faster physics would allow: speed of light / operating point - 1 [fraction];
    NaN where the operating point is not positive."""
    tps = np.asarray(tokens_per_s_per_gpu, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            tps > 0, np.asarray(speed_of_light_tokens_per_s_per_gpu) / tps - 1.0, np.nan
        )


def speed_of_light(
    hardware: str | Hardware,
    model: str | LLM,
    precision: str | None = None,
    *,
    input_tokens: float,
    output_tokens: float,
    tpot_limit_s: float | None = None,
    ttft_limit_s: float | None = None,
    max_gpus: int | None = None,
    gpus: int | None = None,
    tensor_parallel: int | None = None,
    draft_tokens: int = 0,
    accepted_tokens: float = 1.0,
) -> float:
    """Physical ceiling of output tokens/s per GPU for a hardware/model pair at an SLO.

    The same model with every efficiency at 1, no fixed overheads, no MoE imbalance, perfect overlap
    of memory and compute and no p99 tail: no serving stack can exceed it on this hardware at this
    precision and these lengths (on the layout `gpus` and `tensor_parallel` fix, where given: see
    `operating_point`). Raises SimulatorError when even the ideal misses the SLO.
    """
    point = operating_point(
        hardware,
        model,
        precision,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        tpot_limit_s=tpot_limit_s,
        ttft_limit_s=ttft_limit_s,
        max_gpus=max_gpus,
        gpus=gpus,
        tensor_parallel=tensor_parallel,
        efficiency=SPEED_OF_LIGHT,
        draft_tokens=draft_tokens,
        accepted_tokens=accepted_tokens,
    )
    return point.tokens_per_s_per_gpu


def with_fields(efficiency: Efficiency, **changes) -> Efficiency:
    """A copy of `efficiency` with some fields replaced."""
    return replace(efficiency, **changes)
