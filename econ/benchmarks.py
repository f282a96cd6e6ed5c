"""The benchmark catalog: MLPerf Inference LLM results shipped in models/benchmarks/, with the
provenance checks a figure must pass before it becomes a throughput input.

MLPerf publishes one figure per system under test (output tokens/s of the whole system); a per-GPU
figure is derived by dividing by the accelerator count. Before such a figure drives a projection,
the seed material asks for three checks (docs/throughput.md §5): the silicon generation (does the
row's accelerator match the scenario's hardware?), the availability category (Available vs Preview),
and whether the per-GPU figure was submitted or derived. This module adds the other traps in the
data: open-division results (model substitutions), 99 and 99.9 accuracy rows that repeat one run,
different system sizes across compared rows (64 vs 72 GPUs), results MLPerf marks as inferred,
power-capped (MaxQ) systems, and rows whose unit is not tokens/s.

Files (copied from ../shared/data with every source column; see models/benchmarks/README.md):
`mlperf_inference_llm.csv` (results v4.0 to v6.0), `mlperf_inference_v6.1.csv` (v6.1, fewer
columns: the others are read from its benchmark name and source at load time),
`vendor_claims.csv` (figures announced by vendors with no published result file behind them),
`mlperf_latency_constraints.csv` (TTFT/TPOT limits), `accelerators.csv` (accelerator name ->
hardware key and generation), `rounds.csv` (publication dates). Rows get a stable `id`: the round
(`claim` for a vendor claim) and a hash of the fields that identify a result; `kind` says whether
a row is a published result or a vendor claim.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from econ.catalog import (
    ACCELERATORS_FILE,
    CLAIMS_FILE,
    RESULTS_FILE,
    V61_FILE,
    benchmarks_dir,
    catalog_cache,
)
from econ.errors import InputError
from econ.labels import plain_number
from econ.throughput.curve import Curve, with_all_columns

PUBLISHED = "published result"
VENDOR_CLAIM = "vendor claim"
CONSTRAINTS_FILE = "mlperf_latency_constraints.csv"
ROUNDS_FILE = "rounds.csv"
ID_FIELDS = (
    "round", "submitter", "system_name", "division", "benchmark", "scenario", "platform",
    "used_model",
)  # fmt: skip
FILTERS = (
    "model", "accelerator", "hardware", "submitter", "round", "scenario", "division",
    "availability", "gpus",
)  # fmt: skip
EXACT_FILTERS = {
    "round": "round",
    "scenario": "scenario_normalized",
    "division": "division",
    "availability": "availability",
}
OFFLINE_CAVEAT = (
    "Offline scenario: no latency bound; a latency-constrained service gets less than this"
)
"""The caveat on every MLPerf Offline figure (a catalog row, an imported LoadGen log)."""
RELATIVE_TOLERANCE = 1e-3  # the catalog rounds per-accelerator figures to ~7 significant digits


class CatalogError(InputError):
    """A catalog query that cannot be answered (unknown id, ambiguous filter, unusable row)."""


def _read(name: str) -> pd.DataFrame:
    path = benchmarks_dir() / name
    try:
        return pd.read_csv(path)
    except FileNotFoundError:
        raise CatalogError(
            f"{path}: catalog file missing (models/benchmarks/ is incomplete)"
        ) from None


def row_id(row: Mapping) -> str:
    """'<round>-<8 hex>': SHA-1 of the fields that identify one result, stable across reorders;
    'claim-<8 hex>' for a vendor claim."""
    key = "\x1f".join("" if _missing(row.get(f)) else str(row.get(f)) for f in ID_FIELDS)
    prefix = "claim" if row.get("kind") == VENDOR_CLAIM else row.get("round")
    return f"{prefix}-{hashlib.sha1(key.encode()).hexdigest()[:8]}"


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


_SUFFIX = re.compile(r"-(99(?:\.9)?)$")


def _summary_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """v6.1 rows (a subset of the results file's columns) with the others read from their
    benchmark name and source: family and accuracy target from the submitted benchmark name
    (`llama2-70b-99.9`), platform, node count and MLPerf's inferred flag from the summary.json
    location in `source`; units lower-cased as in the other rounds (`Tokens/s` -> `tokens/s`)."""
    out = rows.copy()
    out["metric_unit"] = out["metric_unit"].str.lower()
    out["benchmark_family"] = out["benchmark"].str.replace(_SUFFIX, "", regex=True)
    out["accuracy_target"] = pd.to_numeric(out["benchmark"].str.extract(_SUFFIX)[0])
    out["scenario_normalized"] = out["scenario"]
    out["used_model"] = out["benchmark"]
    source = out["source"].fillna("")
    out["platform"] = source.str.extract(r"Platform ([^;)]+)")[0].str.strip()
    out["host_count"] = pd.to_numeric(source.str.extract(r"number_of_nodes (\d+)")[0])
    out["inferred_flag"] = pd.to_numeric(source.str.extract(r"inferred (\d)")[0])
    out["accel_count_method"] = "summary.json accelerator_count"
    out["notes"] = (
        "v6.1 summary.json row: benchmark_family, accuracy_target, platform, host_count and "
        "inferred_flag read from benchmark and source at load time"
    )
    limits = _round_limits(out)
    out["ttft_limit_ms"], out["tpot_limit_ms"] = limits["ttft"], limits["tpot"]
    out.loc[limits["ttft"].notna(), "notes"] += (
        f"; ttft_limit_ms and tpot_limit_ms from {CONSTRAINTS_FILE} (its rounds_observed lists "
        "this round)"
    )
    return out


def _round_limits(rows: pd.DataFrame) -> pd.DataFrame:
    """Each row's p99 TTFT and TPOT limits [ms] (columns `ttft`, `tpot`) from the latency
    constraints of its benchmark family and scenario, where their `rounds_observed` lists the
    row's round (the limits were read from that round's LoadGen logs); NaN elsewhere: a limit
    is not carried into a round its source does not cover."""
    table = latency_constraints()
    observed = {
        (family, str(scenario).split()[0], round_.strip()): (ttft, tpot)
        for family, scenario, rounds, ttft, tpot in table[
            [
                "benchmark_family",
                "scenario",
                "rounds_observed",
                "ttft_p99_limit_ms",
                "tpot_p99_limit_ms",
            ]
        ].itertuples(index=False)
        for round_ in str(rounds).split(";")
    }
    found = [
        observed.get(key, (np.nan, np.nan))
        for key in zip(rows["benchmark_family"], rows["scenario"], rows["round"], strict=True)
    ]
    return pd.DataFrame(found, columns=["ttft", "tpot"], index=rows.index, dtype=float)


@catalog_cache(maxsize=4)
def _load(directory: str) -> pd.DataFrame:
    accelerators = _read(ACCELERATORS_FILE).set_index("accelerator")
    rounds = _read(ROUNDS_FILE).set_index("round")
    claims = _read(CLAIMS_FILE)
    parts = [
        _read(RESULTS_FILE).assign(kind=PUBLISHED, catalog_file=RESULTS_FILE),
        _summary_rows(_read(V61_FILE)).assign(kind=PUBLISHED, catalog_file=V61_FILE),
        claims.assign(
            catalog_file=CLAIMS_FILE,
            scenario_normalized=claims["scenario"],
            benchmark_family=claims["benchmark"],
            used_model=claims["benchmark"],
        ),
    ]
    frame = pd.concat(parts, ignore_index=True)
    # rows of the identifying columns only: the whole frame's to_dict("records") took half the load
    fields = [name for name in (*ID_FIELDS, "kind") if name in frame.columns]
    columns = zip(*(frame[f].tolist() for f in fields), strict=True)
    rows = (dict(zip(fields, values, strict=True)) for values in columns)
    frame.insert(0, "id", [row_id(row) for row in rows])
    if frame["id"].duplicated().any():
        dup = frame.loc[frame["id"].duplicated(), "id"].iloc[0]
        raise CatalogError(f"{benchmarks_dir()}: two catalog rows share id {dup}")
    names = frame["accelerator"].fillna("")
    frame["hardware_key"] = names.map(accelerators["hardware_key"]).fillna("")
    frame["generation"] = names.map(accelerators["generation"]).fillna("")
    published = frame["round"].map(rounds["published"])
    frame["published"] = published.fillna(frame["as_of"]).fillna("")
    # a dual-GPU board is one accelerator in MLPerf's count and two GPUs (accelerators.csv)
    frame["gpus_per_accelerator"] = names.map(accelerators["gpus_per_accelerator"]).fillna(1.0)
    frame["gpu_count"] = frame["accelerator_count"] * frame["gpus_per_accelerator"]
    usable_count = frame["gpu_count"].where(frame["gpu_count"] > 0)
    frame["tokens_per_s_per_gpu"] = np.where(
        frame["metric_unit"] == "tokens/s", frame["result"] / usable_count, np.nan
    )
    frame["duplicate_of"] = _duplicates(frame)
    return frame


def load_catalog() -> pd.DataFrame:
    """Every catalog row with its source columns plus `id`, `kind` (published result or vendor
    claim), `catalog_file`, `hardware_key`, `generation`, `published` (round date; a claim's
    `as_of`), `gpus_per_accelerator` (2 for a dual-GPU board, from accelerators.csv; else 1),
    `gpu_count` (accelerator_count x gpus_per_accelerator), `tokens_per_s_per_gpu` (result /
    gpu_count, tokens/s rows only) and `duplicate_of` (id of the 99 row a 99.9 row repeats)."""
    return _load(str(benchmarks_dir().resolve())).copy()


def _duplicates(frame: pd.DataFrame) -> pd.Series:
    """For a 99.9 row whose result equals the 99 row of the same system and scenario: its id."""
    key = ["round", "submitter", "system_name", "platform", "division", "scenario", "result"]
    family = frame["benchmark"].str.replace(r"-99(\.9)?$", "", regex=True)
    tagged = frame.assign(_family=family)
    base = tagged[tagged["accuracy_target"] == 99.0].drop_duplicates(key + ["_family"])
    merged = tagged.reset_index().merge(
        base[key + ["_family", "id"]].rename(columns={"id": "_base"}),
        on=key + ["_family"],
        how="left",
    )
    merged.loc[merged["accuracy_target"] != 99.9, "_base"] = ""
    return merged.set_index("index")["_base"].reindex(frame.index).fillna("")


def known_gaps() -> dict[str, str]:
    """Rounds the catalog holds only in part, each with what is known to be missing (rounds.csv
    `known_gaps`): the reference data the v5.1 and v6.0 rows were copied from lacks some
    submitters' results, so a result absent from the catalog may still have been published."""
    rounds = _read(ROUNDS_FILE)
    if "known_gaps" not in rounds:
        return {}
    gaps = rounds["known_gaps"].fillna("").astype(str)
    return {str(r): g for r, g in zip(rounds["round"], gaps, strict=True) if g.strip()}


def latency_constraints() -> pd.DataFrame:
    """MLPerf TTFT/TPOT p99 limits [ms] and median output tokens per sample, per workload."""
    return _read(CONSTRAINTS_FILE)


def accelerators() -> pd.DataFrame:
    return _read(ACCELERATORS_FILE)


def check_hardware_key(hardware: str | None, catalog: pd.DataFrame | None = None) -> None:
    """Refuse a hardware key that neither the accelerator table nor the catalog's rows know (a
    typo would otherwise match no row, silently), listing the known keys."""
    if hardware is None or hardware == "":
        return
    frame = load_catalog() if catalog is None else catalog
    keys = set(accelerators()["hardware_key"].dropna()) | set(frame["hardware_key"].dropna())
    keys.discard("")
    if hardware.lower() not in {k.lower() for k in keys}:
        raise CatalogError(
            f"hardware {hardware!r} is not a hardware key of the catalog; valid: "
            f"{', '.join(sorted(keys))}"
        )


def generation_of(hardware: str) -> str:
    """Silicon generation of a hardware key (e.g. gb200-nvl72 -> Blackwell); "" if unknown."""
    table = accelerators()
    match = table.loc[table["hardware_key"] == hardware, "generation"]
    return str(match.iloc[0]) if len(match) else ""


def filter_catalog(catalog: pd.DataFrame | None = None, **filters) -> pd.DataFrame:
    """Rows matching every filter given.

    model, accelerator, hardware, submitter: case-insensitive substring of benchmark/family/used
    model, accelerator name and submitter; hardware: the key, exact (case-insensitive; a key
    the catalog lacks matches no row: `check_hardware_key` refuses one); round, scenario, division,
    availability: exact (case-insensitive), and an unknown value lists the valid ones; gpus:
    the accelerator count.
    """
    frame = load_catalog() if catalog is None else catalog
    unknown = set(filters) - set(FILTERS)
    if unknown:
        raise CatalogError(
            f"unknown filter {sorted(unknown)}; expected one of {', '.join(FILTERS)}"
        )
    mask = pd.Series(True, index=frame.index)
    for name, value in filters.items():
        if value is None or value == "":
            continue
        text = str(value).lower()
        if name in EXACT_FILTERS:
            column = frame[EXACT_FILTERS[name]].fillna("").astype(str).str.lower()
            valid = sorted(set(column) - {""})
            if text not in valid:
                raise CatalogError(
                    f"{name} {value!r} is not in the catalog; valid: {', '.join(valid)}"
                )
            mask &= column == text
        elif name == "model":
            names = frame[["benchmark", "benchmark_family", "used_model"]].fillna("")
            hits = [names[c].str.lower().str.contains(text, regex=False) for c in names]
            mask &= hits[0] | hits[1] | hits[2]
        elif name == "hardware":
            mask &= frame["hardware_key"].str.lower() == text
        elif name == "gpus":
            try:
                gpus = float(value)
            except (TypeError, ValueError):
                raise CatalogError(f"gpus {value!r} is not a number of accelerators") from None
            mask &= frame["accelerator_count"] == gpus
        else:
            mask &= frame[name].fillna("").str.lower().str.contains(text, regex=False)
    return frame[mask]


def get_row(row: str, catalog: pd.DataFrame | None = None) -> pd.Series:
    """The row with this id (or a unique prefix of one)."""
    frame = load_catalog() if catalog is None else catalog
    hits = frame[frame["id"] == row]
    if hits.empty:
        hits = frame[frame["id"].str.startswith(str(row))]
    if len(hits) == 1:
        return hits.iloc[0]
    if hits.empty:
        raise CatalogError(
            f"no catalog row has id {row!r}; find ids with `econ benchmarks list` (ids look like "
            f"{frame['id'].iloc[0]})"
        )
    raise CatalogError(
        f"id prefix {row!r} matches {len(hits)} rows ({', '.join(hits['id'][:5])}...); give more "
        "characters"
    )


def inferred_caveat(scenario: str) -> str:
    """What MLPerf's `inferred` flag (1) says, and no more: the results summary sets it when the
    scenario a result is listed under is not the `effective_scenario` its performance log
    records (mlcommons/inference tools/submission/submission_checker/results.py)."""
    why = " (LoadGen logs an Interactive run as Server)" if scenario == "Interactive" else ""
    return (
        f"MLPerf's results summary flags this row as inferred: the scenario it is listed under "
        f"({scenario}) is not the one its performance log records{why}; the flag does not say "
        "how the figure was obtained"
    )


def _gpus_per_accelerator(row: Mapping) -> float:
    """GPUs on one of the row's accelerators (2 on a dual-GPU board); 1 when not stated."""
    value = row.get("gpus_per_accelerator")
    return 1.0 if _missing(value) else float(value)


def _accelerator_note(row: Mapping) -> str:
    """The accelerators.csv note of the row's accelerator ("" when it has none)."""
    table = accelerators()
    notes = table.loc[table["accelerator"] == row.get("accelerator"), "notes"].dropna()
    return str(notes.iloc[0]) if len(notes) else ""


def mixed_accelerators(name) -> bool:
    """Whether an accelerator name lists more than one chip ("H200 + MI350X", "MI300X (x32),
    MI325X (x16)"): the system's per-GPU figure then averages two chips."""
    return isinstance(name, str) and bool(re.search(r",| \+ | and ", name))


def _system_name_count(name: str) -> float:
    match = re.search(r"\((\d+)x ", name or "")
    return float(match.group(1)) if match else math.nan


def row_checks(
    row: Mapping,
    hardware: str | None = None,
    catalog: pd.DataFrame | None = None,
) -> list[str]:
    """Warnings a catalog row carries before its figure becomes an input.

    hardware: the scenario's hardware key; when given, the row's silicon must match it.
    """
    out = []
    count = row.get("accelerator_count")
    result, unit = row.get("result"), row.get("metric_unit")
    rid = row.get("id", "")
    # (0) a vendor's announcement, not a published result
    if row.get("kind") == VENDOR_CLAIM:
        per_gpu = result / count if not _missing(count) and count > 0 else math.nan
        out.append(
            f"vendor claim, not a published result file ({row.get('submitter')} announcement, "
            f"{row.get('as_of')}; source in the catalog row): no system description, log or "
            "accuracy run backs it"
            + (
                f"; per-GPU {per_gpu:,.0f} tokens/s unverified (announced system total "
                f"{result:,.0f} / {count:g} GPUs)"
                if math.isfinite(per_gpu)
                else ""
            )
        )
        if not _missing(row.get("ttft_p95_ms")) or not _missing(row.get("concurrency")):
            out.append(
                "measured under its own load and latency definition ("
                + ", ".join(
                    part
                    for part in (
                        _claim_part(row.get("concurrency"), "{:,.0f} concurrent requests"),
                        _claim_part(row.get("ttft_p95_ms"), "TTFT P95 {:,.0f} ms"),
                        _claim_part(
                            row.get("output_tokens_per_request_min"),
                            "more than {:,.0f} output tokens per request",
                        ),
                    )
                    if part
                )
                + "): not comparable with MLPerf Inference Server/Interactive p99 limits"
            )
    # (1) submitted vs derived per-GPU figure
    claim = row.get("kind") == VENDOR_CLAIM
    if not claim and not _missing(count) and count > 0 and unit == "tokens/s":
        boards = _gpus_per_accelerator(row)
        per_gpu = result / (count * boards)
        if boards == 1:
            divisor, why = f"{count:g} accelerators", ""
        else:
            divisor = f"{count * boards:g} GPUs"
            why = (
                f"; {count:g} accelerators of {boards:g} GPUs each, as accelerators.csv notes: "
                f"{_accelerator_note(row)}"
            )
        out.append(
            f"per-GPU figure derived, not submitted: {plain_number(result)} tokens/s system total / "
            f"{divisor} = {per_gpu:,.1f} tokens/s per GPU (MLPerf reports systems{why})"
        )
        listed, per_accelerator = row.get("per_accelerator"), result / count
        if not _missing(listed) and not math.isclose(
            listed, per_accelerator, rel_tol=RELATIVE_TOLERANCE
        ):
            out.append(
                f"the catalog's per_accelerator {plain_number(listed)} differs from result / "
                f"count {plain_number(per_accelerator)}; the recomputed figure is used"
            )
    # (2) availability
    availability = str(row.get("availability") or "")
    if availability.lower() == "preview":
        out.append(
            "Preview: the system was not available for purchase when submitted; the figure may "
            "change before it ships (MLPerf availability category)"
        )
    elif availability.lower() == "rdi":
        out.append(
            "RDI (research, development or internal): the system is not a product anyone can "
            "buy, and MLPerf does not require it to become one (MLPerf availability category)"
        )
    elif availability.lower() != "available":
        out.append("availability category not recorded (Available vs Preview unknown)")
    # (3) silicon generation
    # (an empty catalog cell is NaN, which str() made the accelerator 'nan')
    generation, key, accelerator = (
        "" if _missing(row.get(c)) else str(row.get(c))
        for c in ("generation", "hardware_key", "accelerator")
    )
    if not accelerator or generation == "CPU only":
        out.append("no accelerator named (CPU-only or unknown system): no per-GPU figure")
    elif not generation:
        out.append(f"accelerator {accelerator!r} is not in accelerators.csv: generation unknown")
    elif mixed_accelerators(accelerator):
        out.append(f"mixed accelerators ({accelerator}): the per-GPU figure averages two chips")
    if hardware:
        wanted = generation_of(hardware)
        if key and key == hardware:
            pass
        elif not wanted:
            out.append(f"hardware {hardware!r} has no known generation; cannot check the silicon")
        elif generation and generation != wanted:
            out.append(
                f"silicon mismatch: the row ran on {accelerator} ({generation}), the scenario's "
                f"hardware {hardware} is {wanted}"
            )
        else:
            out.append(
                f"same generation ({generation or 'unknown'}) but a different system: the row ran "
                f"on {accelerator or 'an unnamed accelerator'}"
                f"{f' ({key})' if key else ''}, the scenario uses {hardware}"
            )
    # (4) open division
    if row.get("division") == "open":
        subst = re.search(r"model substitution: ran ([^;]+)", str(row.get("notes") or ""))
        out.append(
            "open division: the rules allow model and method changes, so the result is not "
            "comparable with closed-division rows"
            + (f" (model substitution: {subst.group(1).strip()})" if subst else "")
        )
    # (5) 99 / 99.9 duplicates
    if row.get("duplicate_of"):
        out.append(
            f"this 99.9-accuracy row repeats the result of the 99 row {row['duplicate_of']} (one "
            "run entered under both accuracy targets); count it once"
        )
    elif catalog is not None and rid:
        twins = catalog[catalog["duplicate_of"] == rid]
        if len(twins):
            out.append(
                f"the 99.9-accuracy row {twins['id'].iloc[0]} repeats this result (one run under "
                "both targets); count it once"
            )
    # (6) system size
    named = _system_name_count(str(row.get("system_name") or ""))
    if not _missing(count) and not math.isnan(named) and named != count:
        out.append(
            f"system name says {named:g} accelerators but the submission counts {count:g}; the "
            f"per-GPU figure uses {count:g}"
        )
    if key.endswith("nvl72") and re.search(r"NVL-?4\b", str(row.get("system_name") or "")):
        out.append(
            f"an NVL4 system (4 GPUs in one NVLink domain), catalogued under {key} for its "
            "silicon: the same GPU as the NVL72 rack, with a 72-GPU NVLink domain there; a model "
            "served within 4 GPUs compares across both, one spread over more GPUs has no NVL4 measure"
        )
    elif key.endswith("nvl72") and not _missing(count) and count % 72:
        out.append(f"{count:g} GPUs is not a whole number of 72-GPU NVL72 racks")
    # other flags
    if row.get("inferred_flag") == 1:
        out.append(inferred_caveat(str(row.get("scenario_normalized") or row.get("scenario"))))
    text = f"{row.get('system_name', '')} {row.get('notes', '')}"
    if "MaxQ" in text:
        out.append("power-capped (MaxQ) submission: throughput below the same system's MaxP run")
    if "not verified" in str(row.get("notes") or ""):
        out.append("the catalog notes that some fields were not verified against the submission")
    if unit != "tokens/s":
        out.append(f"result is in {unit}, not tokens/s: not usable as a token throughput")
    if row.get("scenario_normalized") == "Offline":
        out.append(OFFLINE_CAVEAT)
    return out


def _float(value) -> float:
    return math.nan if _missing(value) else float(value)


def _claim_part(value, fmt: str) -> str:
    return "" if _missing(value) else fmt.format(float(value))


def provenance(row: Mapping) -> dict:
    """Where a catalog figure came from, as a flat dict (JSON-safe)."""

    def clean(v):
        if isinstance(v, np.generic):
            v = v.item()
        return None if _missing(v) else v

    keys = (
        "id", "round", "published", "submitter", "system_name", "division", "availability",
        "accelerator", "accelerator_count", "gpu_count", "hardware_key", "generation", "benchmark",
        "benchmark_family", "scenario", "scenario_normalized", "metric_unit", "result",
        "per_accelerator", "tokens_per_s_per_gpu", "ttft_p99_ms", "tpot_p99_ms", "ttft_limit_ms",
        "tpot_limit_ms", "software", "valid", "source", "duplicate_of", "notes", "kind",
        "concurrency", "ttft_p95_ms", "output_tokens_per_request_min", "quality",
    )  # fmt: skip
    out = {k: clean(row.get(k)) for k in keys}
    claim = row.get("kind") == VENDOR_CLAIM
    out["tool"] = "vendor claim (catalog)" if claim else "MLPerf Inference (catalog)"
    out["per_gpu_basis"] = (
        "unverified: announced system total / announced GPU count"
        if claim
        else "derived: result / accelerator_count"
        + ("" if _gpus_per_accelerator(row) == 1 else " x GPUs per accelerator")
    )
    out["catalog_file"] = f"models/benchmarks/{row.get('catalog_file') or RESULTS_FILE}"
    return out


def _one_row(query, catalog: pd.DataFrame) -> pd.Series:
    if isinstance(query, str):
        return get_row(query, catalog)
    if not isinstance(query, Mapping):
        raise CatalogError(f"catalog query {query!r}; expected a row id or a mapping of filters")
    rows = filter_catalog(catalog, **query)
    rows = rows[rows["duplicate_of"] == ""]
    if len(rows) == 1:
        return rows.iloc[0]
    if rows.empty:
        raise CatalogError(f"catalog query {dict(query)} matches no row")
    listing = "; ".join(
        f"{r.id} ({r.round} {r.submitter}, {r.accelerator_count:g}x {r.accelerator}, "
        f"{r.benchmark} {r.scenario})"
        for r in rows.head(8).itertuples()
    )
    raise CatalogError(
        f"catalog query {dict(query)} matches {len(rows)} rows; expected one. Narrow it or give "
        f"an id: {listing}{' ...' if len(rows) > 8 else ''}"
    )


def catalog_throughput(
    query: str | Mapping, hardware: str | None = None
) -> tuple[float, dict, list[str]]:
    """(tokens_per_s_per_gpu, provenance, warnings) of one catalog row, by id or filters.

    tokens_per_s_per_gpu = result / GPUs [output tokens/s/GPU], recomputed from the submitted
    system total; GPUs = accelerator_count x GPUs per accelerator (2 on a dual-GPU board).
    `hardware` is the scenario's hardware key for the silicon check.
    Raises CatalogError for an unknown or ambiguous query and for rows that have no per-GPU
    token figure (other units, no accelerator count).
    """
    catalog = load_catalog()
    row = _one_row(query, catalog)
    if row["metric_unit"] != "tokens/s":
        raise CatalogError(
            f"catalog row {row['id']} reports {row['result']:g} {row['metric_unit']}, not tokens/s; "
            "a token throughput cannot be taken from it"
        )
    count = row["accelerator_count"]
    if _missing(count) or count <= 0:
        raise CatalogError(
            f"catalog row {row['id']} ({row['system_name']}) has no accelerator count "
            f"({count}); a per-GPU figure cannot be derived"
        )
    value = float(row["result"] / (count * _gpus_per_accelerator(row)))
    return value, provenance(row), row_checks(row, hardware=hardware, catalog=catalog)


def compare_rows(ids: list[str]) -> list[str]:
    """Caveats of comparing catalog rows: system sizes, submitters, divisions, availability."""
    catalog = load_catalog()
    rows = pd.DataFrame([get_row(i, catalog) for i in ids])
    out = []
    for column, what in (
        ("accelerator_count", "system sizes"),
        ("submitter", "submitters"),
        ("accelerator", "accelerators"),
        ("division", "divisions"),
        ("availability", "availability categories"),
        ("scenario_normalized", "scenarios"),
        ("benchmark", "benchmarks (accuracy targets)"),
        ("software", "software stacks"),
    ):
        values = [v for v in dict.fromkeys(rows[column].tolist()) if not _missing(v)]
        if len(values) > 1:
            shown = ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)
            out.append(f"the compared rows have different {what}: {shown}")
    return out


@dataclass(frozen=True)
class CatalogStep:
    """A throughput step read from two catalog rows: gain = to / from - 1 of per-GPU figures.

    Attributes
    ----------
    from_id, to_id : the rows' ids
    from_tokens_per_s_per_gpu, to_tokens_per_s_per_gpu : result / accelerator_count [tokens/s/GPU]
    gain : to / from - 1 [fraction]
    date : the later row's publication date (round date or a claim's as-of), ISO text
    label : e.g. "CoreWeave GB200 deepseek-r1 Server, v6.0 to v6.1"
    warnings : the caveats of reading the two rows as one step
    """

    from_id: str
    to_id: str
    from_tokens_per_s_per_gpu: float
    to_tokens_per_s_per_gpu: float
    gain: float
    date: str
    label: str
    warnings: tuple[str, ...]


def catalog_step(from_id: str, to_id: str) -> CatalogStep:
    """The per-GPU step between two catalog rows of one benchmark and scenario, with its caveats.

        gain = (result_to / count_to) / (result_from / count_from) - 1

    Both per-GPU figures are derived (MLPerf reports systems), so the caveats always say so; they
    also name different system sizes, submitters, silicon and software, and each row's own checks
    (Preview, vendor claim, racks not whole). Raises CatalogError when the rows are of different
    benchmarks or scenarios, have no per-GPU token figure, or are given in the wrong order.
    """
    catalog = load_catalog()
    rows = [get_row(i, catalog) for i in (from_id, to_id)]
    first, second = rows
    if str(first["id"]) == str(second["id"]):
        raise CatalogError(
            f"catalog row {first['id']} is given as both the earlier and the later row; a "
            "throughput step compares two rows (the same benchmark in two rounds)"
        )
    values = [catalog_throughput(str(r["id"]))[0] for r in rows]
    for column, what in (("benchmark_family", "benchmark"), ("scenario_normalized", "scenario")):
        if str(first[column]) != str(second[column]):
            raise CatalogError(
                f"catalog rows {first['id']} and {second['id']} are of different {what}s "
                f"({first[column]} and {second[column]}); a throughput step compares one "
                f"{what} across rounds"
            )
    if str(first["published"]) > str(second["published"]):
        raise CatalogError(
            f"catalog row {first['id']} ({first['published']}) is later than {second['id']} "
            f"({second['published']}); give the earlier row first"
        )
    gain = values[1] / values[0] - 1.0
    warnings = [
        "per-GPU figures derived, not submitted: "
        + " and ".join(
            f"{r['result']:,.6g} / {r['accelerator_count']:g} = {v:,.2f} tokens/s per GPU "
            f"({r['id']})"
            for r, v in zip(rows, values, strict=True)
        )
    ]
    warnings += compare_rows([str(r["id"]) for r in rows])
    same = [
        f"{what} ({first[column]})"
        for column, what in (("submitter", "submitter"), ("accelerator", "platform"))
        if str(first[column]) == str(second[column])
    ]
    if len(same) == 2:
        warnings.append(
            f"same {' and '.join(same)}: read as a software gain on the same silicon, but MLPerf "
            "does not hold the system configuration fixed between rounds"
        )
    elif str(first["hardware_key"] or first["accelerator"]) != str(
        second["hardware_key"] or second["accelerator"]
    ):
        warnings.append(
            "different silicon: the step mixes a hardware change with software, it is not a gain "
            "on installed GPUs"
        )
    for row in rows:
        own = row_checks(row, catalog=catalog)
        warnings += [
            f"{row['id']}: {check}" for check in own if not check.startswith("per-GPU figure")
        ]
    label = (
        f"{second['submitter']} {str(second['accelerator']).removeprefix('NVIDIA ')} "
        f"{second['benchmark_family']} {second['scenario_normalized']}, "
        f"{first['round']} to {second['round']}"
    )
    return CatalogStep(
        from_id=str(first["id"]),
        to_id=str(second["id"]),
        from_tokens_per_s_per_gpu=values[0],
        to_tokens_per_s_per_gpu=values[1],
        gain=gain,
        date=str(second["published"]),
        label=label,
        warnings=tuple(dict.fromkeys(warnings)),
    )


def catalog_curve(query: str | Mapping, hardware: str | None = None) -> Curve:
    """A catalog row as a one-point Curve (p99 TTFT/TPOT as measured by LoadGen), carrying the
    row's checks (against `hardware`, the scenario's hardware key, when given) as warnings."""
    value, prov, warnings = catalog_throughput(query, hardware=hardware)
    catalog = load_catalog()
    row = get_row(prov["id"], catalog)
    constraints = latency_constraints()
    family = str(row["benchmark_family"])
    scenario = str(row["scenario_normalized"])
    match = constraints[
        (constraints["benchmark_family"] == family)
        & constraints["scenario"].str.startswith(scenario)
    ]
    osl = (
        float(match["median_output_tokens_per_sample_observed"].iloc[0]) if len(match) else math.nan
    )
    point = {
        "output_tokens_per_s": float(row["result"]),
        "output_tokens_per_s_per_gpu": value,
        "gpu_count": float(row["accelerator_count"] * _gpus_per_accelerator(row)),
        "ttft_s_p99": float(row["ttft_p99_ms"]) / 1000.0,
        "tpot_s_p99": float(row["tpot_p99_ms"]) / 1000.0,
        "ttft_s_p95": _float(row.get("ttft_p95_ms")) / 1000.0,
        "concurrency": _float(row.get("concurrency")),
        "request_rate_per_s": math.inf
        if scenario == "Offline"
        else float(row["completed_samples_per_s"]),
        "output_tokens_mean": osl,
        "workload": f"benchmark={family}, scenario={scenario}",
        "config": str(row["system_name"]),
        "model": family,
        "hardware": str(row["accelerator"] or ""),
        "tool": prov["tool"],
        "tool_version": str(row["round"]),
        "source_file": f"{prov['catalog_file']}#{row['id']}",
        "warnings": " | ".join(warnings),
    }
    points = with_all_columns(pd.DataFrame([point]))
    return Curve(points=points, provenance=prov, warnings=tuple(warnings))
