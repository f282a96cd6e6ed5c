"""LLM architecture catalog: loads and validates models/llms.toml and derives the sizes the simulator needs.

Each entry is one model's architecture from its Hugging Face config.json and report (copied from
../shared/data/llm_architectures.csv with sources): layers, attention layout (GQA or MLA), expert
layout, parameter counts and KV bytes per token. Derived here, with the formula and source in each
docstring: routed-expert and always-active parameter counts, weight bytes at a precision, KV bytes
per token at a precision, and attention FLOPs per context token.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from econ.catalog import catalog_cache, load_toml_table, models_dir
from econ.errors import InputError
from econ.hardware import (
    KV_BYTES_PER_ELEMENT,
    PRECISIONS,
    WEIGHT_BYTES_PER_PARAM,
)

BF16_BYTES = 2.0
SWIGLU_MATRICES = 3
"""Gate, up and down projections of a SwiGLU feed-forward block (Shazeer 2020, arXiv 2002.05202)."""


class LLMError(InputError):
    """Unknown model or an invalid model catalog."""


class LLM(BaseModel):
    """One model architecture."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    name: str
    layers: int = Field(..., gt=0, description="Transformer layers [layers]")
    dense_layers: int = Field(..., ge=0, description="Layers with a dense FFN [layers]")
    moe_layers: int = Field(..., ge=0, description="Layers with routed experts [layers]")
    hidden_size: int = Field(..., gt=0, description="Model width [elements]")
    q_heads: int = Field(..., gt=0, description="Query heads [heads]")
    kv_heads: int | None = Field(None, gt=0, description="Key/value heads (GQA) [heads]")
    head_dim: int = Field(..., gt=0, description="Head dimension [elements]")
    attention: Literal["gqa", "mla"]
    attention_description: str = ""
    kv_lora_rank: int | None = Field(None, gt=0, description="MLA latent rank [elements]")
    qk_rope_dim: int | None = Field(None, gt=0, description="MLA decoupled RoPE dim [elements]")
    ffn_dense: int | None = Field(None, gt=0, description="Dense FFN width [elements]")
    ffn_expert: int | None = Field(None, gt=0, description="Expert FFN width [elements]")
    routed_experts: int | None = Field(None, gt=0, description="Routed experts per layer")
    experts_per_token: int | None = Field(None, gt=0, description="Experts each token uses")
    shared_experts: int | None = Field(None, ge=0, description="Always-active experts per layer")
    params_total_b: float = Field(..., gt=0, description="Total parameters [billions]")
    params_active_b: float = Field(..., gt=0, description="Parameters used per token [billions]")
    kv_bytes_per_token_bf16: float = Field(
        ..., gt=0, description="KV cache per token over all layers at BF16 [bytes]"
    )
    vocab_size: int = Field(..., gt=0)
    native_weight_precision: Literal["bf16", "fp8", "fp4"] = "bf16"
    native_expert_precision: Literal["bf16", "fp8", "fp4"] | None = None
    sliding_window_tokens: int | None = Field(None, gt=0, description="Sliding window [tokens]")
    sliding_window_layers: int | None = Field(None, gt=0, description="Layers with a window")
    notes: str = ""
    sources: str = Field(..., min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> LLM:
        if self.dense_layers + self.moe_layers != self.layers:
            raise ValueError(
                f"dense_layers + moe_layers = {self.dense_layers + self.moe_layers}, "
                f"expected layers = {self.layers}"
            )
        moe = (self.ffn_expert, self.routed_experts, self.experts_per_token)
        if self.moe_layers and any(v is None for v in moe):
            raise ValueError("moe_layers > 0 needs ffn_expert, routed_experts, experts_per_token")
        if self.moe_layers and self.experts_per_token > self.routed_experts:
            raise ValueError("experts_per_token exceeds routed_experts")
        if self.attention == "mla" and (self.kv_lora_rank is None or self.qk_rope_dim is None):
            raise ValueError("attention 'mla' needs kv_lora_rank and qk_rope_dim")
        if self.attention == "gqa" and self.kv_heads is None:
            raise ValueError("attention 'gqa' needs kv_heads")
        if self.params_active_b > self.params_total_b:
            raise ValueError("params_active_b exceeds params_total_b")
        if self.routed_expert_params > self.params_total_b * 1e9:
            raise ValueError(
                f"routed experts hold {self.routed_expert_params / 1e9:.1f}B parameters, more than "
                f"params_total_b = {self.params_total_b}"
            )
        if (self.sliding_window_tokens is None) != (self.sliding_window_layers is None):
            raise ValueError("sliding_window_tokens and sliding_window_layers go together")
        if self.sliding_window_layers is not None and self.sliding_window_layers > self.layers:
            raise ValueError("sliding_window_layers exceeds layers")
        return self

    @property
    def is_moe(self) -> bool:
        return self.moe_layers > 0

    @property
    def routed_expert_params(self) -> float:
        """Parameters in routed experts: moe_layers x E x 3 x hidden x ffn_expert [parameters]."""
        if not self.is_moe:
            return 0.0
        per_expert = SWIGLU_MATRICES * self.hidden_size * self.ffn_expert
        return float(self.moe_layers * self.routed_experts * per_expert)

    @property
    def always_active_params(self) -> float:
        """Total minus routed experts: attention, dense FFNs, shared experts, embeddings [parameters]."""
        return self.params_total_b * 1e9 - self.routed_expert_params

    @property
    def active_expert_params(self) -> float:
        """Routed-expert parameters one token uses: routed x k / E [parameters]."""
        if not self.is_moe:
            return 0.0
        return self.routed_expert_params * self.experts_per_token / self.routed_experts

    @property
    def active_params(self) -> float:
        """Parameters one token multiplies, from the architecture [parameters]."""
        return self.always_active_params + self.active_expert_params

    def weight_bytes(self, precision: str) -> tuple[float, float]:
        """(always-active, routed-expert) weight bytes at `precision` [bytes].

        A weight is never stored wider than its native checkpoint format: GPT-OSS experts ship in MXFP4
        and stay 4-bit when the rest runs FP8 (OpenAI gpt-oss model card, 2025).
        """
        b = WEIGHT_BYTES_PER_PARAM[precision]
        expert_b = b
        if self.native_expert_precision is not None:
            expert_b = min(b, WEIGHT_BYTES_PER_PARAM[self.native_expert_precision])
        return self.always_active_params * b, self.routed_expert_params * expert_b

    def kv_bytes_per_token(self, precision: str) -> float:
        """KV cache per token over all layers at the cache precision of `precision` [bytes]."""
        return self.kv_bytes_per_token_bf16 * KV_BYTES_PER_ELEMENT[precision] / BF16_BYTES

    @property
    def kv_shards(self) -> int:
        """Most GPUs a tensor-parallel group can split the cache over: KV heads for GQA; 1 for MLA,
        whose latent is shared by all heads and so replicated on every TP rank (DeepSeek-V3 report,
        arXiv 2412.19437, §2.1.1; SGLang DP-attention notes)."""
        return int(self.kv_heads) if self.attention == "gqa" else 1

    @property
    def sliding_layer_share(self) -> float:
        """Share of layers whose cache is capped at the window [fraction]."""
        return (self.sliding_window_layers or 0) / self.layers

    def attention_flops_per_context_token(self, phase: Literal["decode", "prefill"]) -> float:
        """Attention FLOPs per query token per context token, all layers [FLOP].

        GQA: 2 x (QK^T + AV) x q_heads x head_dim = 4 q_heads d per layer. MLA decodes in the absorbed
        form, scores over the latent + RoPE dims and values over the latent:
        2 q_heads (r + d_rope) + 2 q_heads r; prefill expands to per-head keys (d + d_rope) and values
        (d): 2 q_heads (d + d_rope) + 2 q_heads d (DeepSeek-V2 report, arXiv 2405.04434, §2.1 and
        appendix B).
        """
        if self.attention == "gqa":
            per_layer = 4.0 * self.q_heads * self.head_dim
        elif phase == "decode":
            per_layer = 2.0 * self.q_heads * (2 * self.kv_lora_rank + self.qk_rope_dim)
        else:
            per_layer = 2.0 * self.q_heads * (2 * self.head_dim + self.qk_rope_dim)
        return per_layer * self.layers


def _catalog_path(path: str | Path | None) -> Path:
    return Path(path) if path is not None else models_dir() / "llms.toml"


def load_llm_catalog(path: str | Path | None = None) -> dict[str, LLM]:
    """All entries of a model catalog file (default models/llms.toml), keyed by name."""
    return dict(_load(str(_catalog_path(path))))


@catalog_cache(maxsize=8)
def _load(path: str) -> tuple[tuple[str, LLM], ...]:
    return load_toml_table(
        path, "llms", lambda key, fields: LLM(key=key, **fields), LLMError, "model"
    )


def get_llm(key: str, path: str | Path | None = None) -> LLM:
    """One catalog entry; an unknown key raises LLMError listing the valid ones."""
    catalog = load_llm_catalog(path)
    if key not in catalog:
        raise LLMError(
            f"model {key!r} is not in the catalog {_catalog_path(path)}; "
            f"expected one of {', '.join(sorted(catalog))}"
        )
    return catalog[key]


__all__ = ["LLM", "LLMError", "PRECISIONS", "get_llm", "load_llm_catalog"]
