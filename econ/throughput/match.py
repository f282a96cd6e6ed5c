"""Does a measured curve stand for the scenario it would go into: its model and hardware compared
with the scenario's fleet and the model the scenario serves.

The app (before a curve's figure is used) and `econ project` (a scenario's
`throughput.measured.curve`) make the same comparison; a difference is a warning, not a refusal:
an operator may knowingly price one system with another's curve.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from econ.catalog import catalog_cache
from econ.text import clipped

if TYPE_CHECKING:  # `econ project` of a scenario with a measured curve loads no pandas
    import pandas as pd

QUOTED_NAME_LIMIT = 200
"""Characters of a curve's model or hardware a message quotes (a merged curve joins several)."""


def _norm(text: object) -> str:
    """Lower-case letters and digits only: 'NVIDIA GB200-NVL72' -> 'nvidiagb200nvl72'."""
    return re.sub(r"[^a-z0-9]", "", str(text or "").lower())


@catalog_cache(maxsize=1)
def _hardware_chips() -> tuple[tuple[str, str], ...]:
    """(chip, hardware key) pairs, longest chip first (gb200 before b200)."""
    from econ.hardware import load_hardware_catalog

    pairs = {(_norm(key.split("-")[0]), key) for key in load_hardware_catalog()}
    return tuple(sorted(pairs, key=lambda p: -len(p[0])))


@catalog_cache(maxsize=1)
def _model_keys() -> tuple[str, ...]:
    """Model keys of econ's LLM catalog, longest first (llama3.1-405b before llama3.1-8b)."""
    from econ.llms import load_llm_catalog

    return tuple(sorted(load_llm_catalog(), key=lambda k: -len(_norm(k))))


def hardware_key_of(text: str) -> str | None:
    """The hardware key a curve's hardware names (by its chip), or None when none matches."""
    norm = _norm(text)
    return next((key for chip, key in _hardware_chips() if chip and chip in norm), None)


def model_key_of(text: str) -> str | None:
    """The LLM catalog key a text names ('deepseek-ai/DeepSeek-R1' -> deepseek-r1), or None."""
    norm = _norm(text)
    return next((key for key in _model_keys() if _norm(key) in norm), None)


def served_model(simulated_model: str = "", history_model: str = "", *texts: str) -> str | None:
    """The model a scenario serves: the model of its simulated or history section, else the
    catalog model its texts (name, description, throughput source) name; None when none does."""
    for given in (simulated_model, history_model):
        if given:
            return model_key_of(given) or given
    return model_key_of(" ".join(t for t in texts if t))


def stated(provenance: Mapping, points: pd.DataFrame, name: str) -> str:
    """What a curve says its `name` ("model", "hardware") is: its provenance, else the distinct
    values of its points' column joined by "; ", else ""."""
    given = str(provenance.get(name) or "").strip()
    if given or name not in points:
        return given
    return "; ".join(sorted({str(v) for v in points[name].dropna() if str(v).strip()}))


def curve_mismatches(
    provenance: Mapping, points: pd.DataFrame, hardware: str, model: str | None
) -> tuple[list[str], list[str]]:
    """(differences, unknowns) between a measured curve and the scenario it would go into.

    `hardware` is the scenario's fleet hardware key, `model` the model it serves (`served_model`;
    None when it names none: the model is then not compared). differences: the curve's model or
    hardware is not the scenario's (each named); unknowns: "hardware" or "model" when the file
    does not state it, so nothing could be compared.
    """
    differences, unknowns = [], []
    ran_on = stated(provenance, points, "hardware")
    if not ran_on:
        unknowns.append("hardware")
    elif hardware_key_of(ran_on) != hardware:
        differences.append(
            f"hardware: the curve ran on {clipped(ran_on, QUOTED_NAME_LIMIT)}; the scenario's "
            f"fleet is {hardware}"
        )
    served = stated(provenance, points, "model")
    if not served:
        unknowns.append("model")
    elif model is not None and (model_key_of(served) or _norm(served)) != model:
        differences.append(
            f"model: the curve served {clipped(served, QUOTED_NAME_LIMIT)}; the scenario serves "
            f"{model}"
        )
    return differences, unknowns
