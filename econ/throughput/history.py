"""Software gains from benchmark history: how per-GPU throughput of one platform on one benchmark
moved across MLPerf rounds, as a compound annual rate and as dated steps a scenario can use.

The same silicon measured in successive rounds isolates what software (serving stack, kernels,
quantization, scheduling) added: e.g. GB200 NVL72 on DeepSeek-R1 Server went from 2,327 tokens/s
per GPU (v5.1, NVIDIA, 72 GPUs) to 4,668 (v6.0, NVIDIA, 72 GPUs). The fit is honest about what
such a history cannot say, and lists it as caveats: different submitters, different system sizes
(64 vs 72 GPUs), preview systems, rounds with no result, and how little two points support.

Formulas: the compound annual rate is the least-squares slope b of ln(tokens/s per GPU) on time
in years, r = e^b - 1 (log-linear trend; with two points it equals the compound annual growth
rate (v1/v0)^(1/years) - 1); the range is b +/- t(0.975, K-2) x its standard error (ordinary
least squares, e.g. Wooldridge, Introductory Econometrics, ch. 2 and 4). A step is the ratio of
consecutive rounds minus one.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from econ.errors import InputError

DAYS_PER_YEAR = 365.25
DAYS_PER_MONTH = DAYS_PER_YEAR / 12
# two-sided 95% Student t quantiles for 1..10 degrees of freedom (standard tables)
T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)


class HistoryError(InputError):
    """A benchmark history that cannot be fitted (too few rounds, bad values)."""


def compound_annual_rate(years, values):
    """Least-squares compound annual rate of a series [fraction/year], over the last axis.

    r = exp(b) - 1 with b the OLS slope of ln(values) on years. Two points give the compound
    annual growth rate (v1 / v0)^(1 / (t1 - t0)) - 1.

    Parameters
    ----------
    years : array (..., K)  time of each value [years]
    values : array (..., K)  positive values, e.g. tokens/s per GPU
    """
    t = np.asarray(years, dtype=float)
    y = np.log(np.asarray(values, dtype=float))
    tc = t - t.mean(axis=-1, keepdims=True)
    slope = (tc * (y - y.mean(axis=-1, keepdims=True))).sum(axis=-1) / (tc**2).sum(axis=-1)
    return np.expm1(slope)


def rate_interval(years, values) -> tuple[float, float]:
    """95% range of the compound annual rate from the slope's standard error; NaN for K < 3."""
    t = np.asarray(years, dtype=float)
    y = np.log(np.asarray(values, dtype=float))
    k = len(t)
    if k < 3:
        return math.nan, math.nan
    tc = t - t.mean()
    slope = (tc * (y - y.mean())).sum() / (tc**2).sum()
    residual = y - y.mean() - slope * tc
    se = math.sqrt((residual**2).sum() / (k - 2) / (tc**2).sum())
    q = T_975[min(k - 2, len(T_975)) - 1]
    return math.expm1(slope - q * se), math.expm1(slope + q * se)


def step_gains(values):
    """Relative change between consecutive values [fraction (..., K-1)]: v[k+1] / v[k] - 1."""
    v = np.asarray(values, dtype=float)
    return v[..., 1:] / v[..., :-1] - 1.0


def months_between(start: dt.date, end: dt.date) -> int:
    """Whole months from start to end, rounded to the nearest month (30.44-day months)."""
    return int(round((end - start).days / DAYS_PER_MONTH))


@dataclass(frozen=True)
class GainHistory:
    """A fitted history: the points used, the rate, the steps and what to be careful about."""

    points: pd.DataFrame
    rate_annual: float
    rate_annual_low: float
    rate_annual_high: float
    steps: tuple[dict, ...]
    caveats: tuple[str, ...]
    description: str = ""
    excluded: tuple[str, ...] = field(default_factory=tuple)

    def scenario_steps(self, start_date: dt.date, replay: bool = False) -> list[dict]:
        """Steps as scenario `throughput.steps` entries ({month, gain, label}).

        Without `replay`, only steps dated after `start_date` are returned, at their calendar
        month. With `replay`, the historical cadence is assumed to repeat on installed hardware:
        step k lands as many months after `start_date` as it came after the first point.
        """
        first = dt.date.fromisoformat(str(self.points["published"].iloc[0]))
        out = []
        for step in self.steps:
            date = dt.date.fromisoformat(step["date"])
            if replay:
                month = months_between(first, date)
            elif date > start_date:
                month = months_between(start_date, date)
            else:
                continue
            out.append(
                {
                    "month": max(1, month),
                    "gain": step["gain"],
                    "label": f"{step['label']}{' (replayed history)' if replay else ''}",
                }
            )
        return out

    def to_dict(self) -> dict:
        def clean(v):
            if isinstance(v, np.generic):
                v = v.item()
            return None if isinstance(v, float) and math.isnan(v) else v

        return {
            "description": self.description,
            "rate_annual": clean(self.rate_annual),
            "rate_annual_low": clean(self.rate_annual_low),
            "rate_annual_high": clean(self.rate_annual_high),
            "steps": [{k: clean(v) for k, v in s.items()} for s in self.steps],
            "points": [{k: clean(v) for k, v in r.items()} for r in self.points.to_dict("records")],
            "caveats": list(self.caveats),
            "excluded": list(self.excluded),
        }


def fit_history(
    dates: list[str],
    tokens_per_s_per_gpu: list[float],
    labels: list[str] | None = None,
    *,
    meta: pd.DataFrame | None = None,
    caveats: list[str] | None = None,
    description: str = "",
) -> GainHistory:
    """Fit a history from dated per-GPU figures (ISO dates, in any order)."""
    values = np.asarray(tokens_per_s_per_gpu, dtype=float)
    if len(values) < 2:
        raise HistoryError(
            f"a gain history needs at least two dated figures, got {len(values)}"
            + (f" for {description}" if description else "")
        )
    if not (np.isfinite(values).all() and (values > 0).all()):
        raise HistoryError(f"tokens/s per GPU must be positive numbers, got {values.tolist()}")
    try:
        parsed = [dt.date.fromisoformat(str(d)) for d in dates]
    except ValueError as exc:
        raise HistoryError(f"dates must be ISO dates (YYYY-MM-DD): {exc}") from None
    labels = labels or [str(d) for d in dates]
    frame = meta.copy() if meta is not None else pd.DataFrame(index=range(len(values)))
    frame = frame.reset_index(drop=True)
    frame["published"] = [d.isoformat() for d in parsed]
    frame["label"] = labels
    frame["tokens_per_s_per_gpu"] = values
    frame = frame.sort_values("published", kind="stable").reset_index(drop=True)
    if frame["published"].duplicated().any():
        raise HistoryError(
            "two figures share a date; pick one figure per round before fitting "
            f"({frame.loc[frame['published'].duplicated(), 'published'].tolist()})"
        )
    first = dt.date.fromisoformat(frame["published"].iloc[0])
    years = np.array(
        [(dt.date.fromisoformat(d) - first).days / DAYS_PER_YEAR for d in frame["published"]]
    )
    frame.insert(frame.columns.get_loc("published") + 1, "years", years)
    v = frame["tokens_per_s_per_gpu"].to_numpy()
    rate = float(compound_annual_rate(years, v))
    low, high = rate_interval(years, v)
    gains = step_gains(v)
    steps = tuple(
        {
            "date": frame["published"].iloc[k + 1],
            "months_after_first": months_between(
                first, dt.date.fromisoformat(frame["published"].iloc[k + 1])
            ),
            "gain": float(gains[k]),
            "from": frame["label"].iloc[k],
            "to": frame["label"].iloc[k + 1],
            "label": f"{frame['label'].iloc[k]} -> {frame['label'].iloc[k + 1]}",
        }
        for k in range(len(gains))
    )
    notes = list(caveats or [])
    if len(v) == 2:
        span = (dt.date.fromisoformat(frame["published"].iloc[1]) - first).days
        notes.append(
            f"two points {span} days apart: the annual rate is the one step annualized (no error "
            "estimate); a one-off software jump annualized overstates a sustained rate, so "
            "prefer the dated step unless the cadence is expected to repeat"
        )
    if (gains < 0).any():
        notes.append("throughput fell between some rounds: the history is not a steady trend")
    return GainHistory(
        points=frame,
        rate_annual=rate,
        rate_annual_low=low,
        rate_annual_high=high,
        steps=steps,
        caveats=tuple(dict.fromkeys(notes)),
        description=description,
    )


def gain_history(
    *,
    model: str,
    scenario: str,
    accelerator: str | None = None,
    hardware: str | None = None,
    submitter: str | None = None,
    gpus: float | None = None,
    division: str = "closed",
    include_preview: bool = False,
    catalog: pd.DataFrame | None = None,
) -> GainHistory:
    """Fit the per-GPU history of one platform on one MLPerf benchmark across rounds.

    model: benchmark family (e.g. deepseek-r1), matched exactly; scenario: Server, Offline or
    Interactive; accelerator (substring of the accelerator name) or hardware (hardware key)
    picks the silicon; submitter and gpus narrow further. Per round the best per-GPU row is
    used; 99.9 rows that repeat a 99 row are dropped; preview rows are left out unless asked.
    """
    from econ.benchmarks import (  # I/O layer, imported on use
        PUBLISHED,
        filter_catalog,
        load_catalog,
    )

    if not accelerator and not hardware:
        raise HistoryError("give the silicon: an accelerator name or a hardware key")
    frame = load_catalog() if catalog is None else catalog
    families = sorted(set(frame["benchmark_family"].dropna()))
    if model.lower() not in [f.lower() for f in families]:
        raise HistoryError(
            f"model {model!r} is not a benchmark family; expected one of {', '.join(families)}"
        )
    rows = filter_catalog(
        frame,
        accelerator=accelerator,
        hardware=hardware,
        submitter=submitter,
        scenario=scenario,
        division=division,
        gpus=gpus,
    )
    rows = rows[rows["benchmark_family"].str.lower() == model.lower()]
    rows = rows[(rows["duplicate_of"] == "") & rows["tokens_per_s_per_gpu"].notna()]
    rows = rows[rows["kind"] == PUBLISHED]  # a vendor claim is no round of the history
    what = " ".join(
        p
        for p in (
            model,
            scenario,
            accelerator or hardware,
            submitter or "",
            f"{gpus:g} GPUs" if gpus else "",
        )
        if p
    )
    excluded = []
    if not include_preview:
        preview = rows[rows["availability"] == "preview"]
        excluded = [f"{r.id} ({r.round} {r.submitter}, preview)" for r in preview.itertuples()]
        rows = rows[rows["availability"] != "preview"]
    if rows.empty:
        raise HistoryError(f"no catalog rows for {what}")
    best = rows.sort_values("tokens_per_s_per_gpu", ascending=False).drop_duplicates("round")
    best = best.sort_values("published")
    if len(best) < 2:
        raise HistoryError(
            f"{what}: results in one round only ({best['round'].iloc[0]}); a history needs two"
        )
    caveats = [
        "per-GPU figures are derived from MLPerf system totals (result / accelerator count)",
        "the best per-GPU row of each round is used: a new round's leader may be a different "
        "system than the previous one",
    ]
    for column, what_differs in (
        ("accelerator_count", "system sizes"),
        ("submitter", "submitters"),
        ("accelerator", "accelerator names"),
        ("accuracy_target", "accuracy targets"),
    ):
        values = list(dict.fromkeys(best[column].dropna().tolist()))
        if len(values) > 1:
            shown = ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)
            caveats.append(f"the rounds compare different {what_differs} ({shown})")
    rounds = list(dict.fromkeys(frame.loc[frame["kind"] == PUBLISHED, "round"]))
    present = set(best["round"])
    span = rounds[rounds.index(best["round"].iloc[0]) : rounds.index(best["round"].iloc[-1]) + 1]
    missing = [r for r in span if r not in present]
    if missing:
        caveats.append(f"no result in round(s) {', '.join(missing)}")
    if excluded:
        caveats.append(f"{len(excluded)} preview rows left out")
    if (best["availability"] == "preview").any():
        caveats.append("some points are Preview systems")
    meta = best[
        ["round", "id", "submitter", "system_name", "accelerator", "accelerator_count",
         "availability", "software"]
    ]  # fmt: skip
    labels = [f"{r.round} {r.submitter}" for r in best.itertuples()]
    return GainHistory(
        **{
            **fit_history(
                best["published"].tolist(),
                best["tokens_per_s_per_gpu"].tolist(),
                labels,
                meta=meta,
                caveats=caveats,
                description=what,
            ).__dict__,
            "excluded": tuple(excluded),
        }
    )
