"""Hardware and model catalogs: shipped copies match the reference data, derived sizes match their
published values, and bad catalogs or keys fail with messages that say what and where."""

from __future__ import annotations

import csv

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.errors import InputError
from econ.hardware import (
    PRECISIONS,
    HardwareError,
    get_hardware,
    load_hardware_catalog,
    normalize_precision,
)
from econ.llms import LLMError, get_llm, load_llm_catalog


def test_hardware_catalog_matches_reference_csv(shared_data):
    rows = list(csv.DictReader(open(shared_data / "hardware_specs.csv")))
    catalog = load_hardware_catalog()
    assert set(catalog) == {r["key"] for r in rows}
    for r in rows:
        hw = catalog[r["key"]]
        assert hw.name == r["name"]
        assert hw.hbm_gb_usable == float(r["hbm_gb_usable"])
        assert hw.hbm_bandwidth_tb_per_s == float(r["hbm_bandwidth_tb_s"])
        assert hw.dense_tflops.fp8 == float(r["fp8_dense_tflops"])
        assert hw.dense_tflops.fp4 == (
            float(r["fp4_dense_tflops"]) if r["fp4_dense_tflops"] else None
        )
        assert hw.scaleup_domain_gpus == int(r["scaleup_domain_gpus"])
        assert r["sources"] in hw.sources


def test_power_figures_match_reference_csv(shared_data):
    figures = {
        r["item"]: float(r["value"])
        for r in csv.DictReader(open(shared_data / "reference_figures.csv"))
        if r["category"] == "power"
    }
    catalog = load_hardware_catalog()
    assert (
        catalog["gb200-nvl72"].power.all_in_kw_per_gpu
        == figures["All-in power per GPU GB200 (chip + host share)"]
    )
    assert (
        catalog["mi355x"].power.all_in_kw_per_gpu
        == figures["All-in power per GPU MI355X (chip + host share)"]
    )
    assert catalog["gb300-nvl72"].power.system_kw == figures["GB300 NVL72 rack power"]
    assert catalog["gb200-nvl72"].gpus_per_rack == 72
    for hw in catalog.values():
        if hw.power.all_in_kw_per_gpu is not None:
            assert "InferenceX" in hw.power.all_in_source


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("h100-sxm", "fp8"),
        ("mi325x", "fp8"),
        ("b200-sxm", "fp4"),
        ("gb300-nvl72", "fp4"),
        ("mi355x", "fp4"),
    ],
)
def test_default_precision_is_lowest_native(key, expected):
    assert get_hardware(key).default_precision == expected


def test_peak_flops_in_flop_per_s():
    assert get_hardware("h100-sxm").peak_flops("fp8") == pytest.approx(1979e12)
    assert get_hardware("b200-sxm").peak_flops("mxfp4") == pytest.approx(9000e12)


def test_unknown_hardware_lists_valid_keys():
    with pytest.raises(HardwareError) as err:
        get_hardware("h300")
    assert (
        "'h300'" in str(err.value)
        and "gb200-nvl72" in str(err.value)
        and "mi355x" in str(err.value)
    )
    assert isinstance(err.value, InputError)


def test_precision_the_hardware_lacks():
    with pytest.raises(HardwareError, match="h100-sxm.*no native FP4.*BF16, FP8"):
        normalize_precision("fp4", get_hardware("h100-sxm"))
    with pytest.raises(HardwareError, match="'int3' is unknown"):
        normalize_precision("int3")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ("hbm_gb_usable = 80", "hbm_gb_usable 90.0 exceeds"),
        ('sibling = "h200-sxm"', "sibling: 'nope' is not in the catalog"),
        ("gpu_tdp_w = 700", "gpu_tdp_w: Input should be greater than 0"),
        ("scaleup_domain_gpus = 8", "extra_field: Extra inputs are not permitted"),
    ],
)
def test_bad_hardware_catalog(tmp_path, edit, message):
    from econ.catalog import models_dir

    text = (models_dir() / "hardware.toml").read_text()
    replacement = {
        "hbm_gb_usable = 80": "hbm_gb_usable = 90",
        'sibling = "h200-sxm"': 'sibling = "nope"',
        "gpu_tdp_w = 700": "gpu_tdp_w = -1",
        "scaleup_domain_gpus = 8": "scaleup_domain_gpus = 8\nextra_field = 1",
    }[edit]
    path = tmp_path / "hardware.toml"
    path.write_text(text.replace(edit, replacement, 1))
    with pytest.raises(HardwareError, match=message) as err:
        load_hardware_catalog(path)
    assert str(path) in str(err.value) and "hardware." in str(err.value)


def test_missing_or_broken_catalog_file(tmp_path):
    with pytest.raises(HardwareError, match="does not exist"):
        load_hardware_catalog(tmp_path / "none.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[hardware.x\n")
    with pytest.raises(HardwareError, match="not valid TOML"):
        load_hardware_catalog(bad)


# ---------------------------------------------------------------------------------------------------
# Models


def test_llm_catalog_matches_reference_csv(shared_data):
    rows = list(csv.DictReader(open(shared_data / "llm_architectures.csv")))
    catalog = load_llm_catalog()
    assert set(catalog) == {r["key"] for r in rows}
    for r in rows:
        m = catalog[r["key"]]
        assert m.layers == int(r["layers"])
        assert m.params_total_b == float(r["params_total_b"])
        assert m.kv_bytes_per_token_bf16 == float(r["kv_bytes_per_token_bf16"])
        assert r["sources"] in m.sources


@pytest.mark.parametrize(
    ("key", "active_b", "rel"),
    [
        ("deepseek-r1", 37.0, 0.02),  # DeepSeek-V3 report: 37B activated per token
        ("mixtral-8x7b", 12.9, 0.01),  # Mistral: 12.9B active
        ("qwen3-vl-235b-a22b", 22.0, 0.02),
        ("llama2-70b", 69.0, 1e-9),
        ("gpt-oss-120b", 5.1, 0.15),  # model card's 5.1B excludes the embedding table
    ],
)
def test_active_parameters_from_architecture(key, active_b, rel):
    assert get_llm(key).active_params / 1e9 == pytest.approx(active_b, rel=rel)


def test_kv_bytes_per_token_formulas():
    llama = get_llm("llama2-70b")  # GQA: 2 (K, V) x layers x kv_heads x head_dim x 2 bytes
    assert llama.kv_bytes_per_token_bf16 == 2 * 80 * 8 * 128 * 2
    assert llama.kv_bytes_per_token("fp8") == 2 * 80 * 8 * 128
    ds = get_llm("deepseek-r1")  # MLA: (kv_lora_rank + rope) x layers x 2 bytes
    assert ds.kv_bytes_per_token_bf16 == (512 + 64) * 61 * 2
    assert ds.kv_shards == 1 and llama.kv_shards == 8


def test_weight_bytes_respect_native_expert_format():
    oss = get_llm("gpt-oss-120b")
    always, experts = oss.weight_bytes("fp8")
    assert always == pytest.approx(oss.always_active_params)
    assert experts == pytest.approx(oss.routed_expert_params * 0.5625)  # MXFP4 experts stay 4-bit


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(sorted(load_llm_catalog())), st.integers(0, len(PRECISIONS) - 2))
def test_weight_bytes_fall_with_narrower_precision(key, i):
    m = get_llm(key)
    wide, narrow = PRECISIONS[i], PRECISIONS[i + 1]
    assert sum(m.weight_bytes(narrow)) <= sum(m.weight_bytes(wide))
    assert m.kv_bytes_per_token(narrow) <= m.kv_bytes_per_token(wide)


def test_unknown_model_lists_valid_keys():
    with pytest.raises(LLMError) as err:
        get_llm("llama5")
    assert "'llama5'" in str(err.value) and "deepseek-r1" in str(err.value)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("dense_layers = 3", "dense_layers = 4", "dense_layers \\+ moe_layers = 62"),
        ("experts_per_token = 8", "experts_per_token = 300", "experts_per_token exceeds"),
        ("kv_lora_rank = 512\n", "", "needs kv_lora_rank"),
        ("params_total_b = 671", "params_total_b = 100", "routed experts hold"),
    ],
)
def test_bad_llm_catalog(tmp_path, old, new, message):
    from econ.catalog import models_dir

    text = (models_dir() / "llms.toml").read_text()
    assert old in text
    path = tmp_path / "llms.toml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(LLMError, match=message) as err:
        load_llm_catalog(path)
    assert "llms.deepseek-r1" in str(err.value)


def test_a_hardware_key_outside_the_catalog_is_named_with_the_nearest_keys():
    from econ.hardware import DEFAULT_KEY, unknown_key_warning

    note = unknown_key_warning("gb200-nv72")
    assert note.startswith("hardware 'gb200-nv72' is not in the hardware catalog")
    assert "did you mean 'gb200-nvl72'" in note
    assert unknown_key_warning("my-own-asic-9000") is not None
    assert "did you mean" not in unknown_key_warning("my-own-asic-9000")
    assert unknown_key_warning("gb200-nvl72") is None
    assert unknown_key_warning(DEFAULT_KEY) is None  # a scenario that names no hardware
    for key in load_hardware_catalog():
        assert unknown_key_warning(key) is None


def test_the_key_check_reads_the_catalog_keys_and_an_unreadable_catalog_has_none(tmp_path):
    from econ.hardware import unknown_key_warning

    assert unknown_key_warning("gb200-nvl72") is None
    broken = tmp_path / "hardware.toml"
    broken.write_text("[hardware.x\n")
    assert unknown_key_warning("x", broken).startswith("hardware 'x' is not in the hardware")
