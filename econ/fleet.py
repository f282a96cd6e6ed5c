"""Fleet refresh: when does replacing the installed GPUs with a new generation pay best?

A scenario's own fleet (vintage A) serves until it is retired and sold (at book value, at
depreciation.sale_value_share, or at its resale value where the market gives a resale table:
econ.resale); a vintage of
the scenario (B) is bought in the month A retires, in the same power envelope, and serves from the
next month. For every candidate month k the scenario is projected with A retired at k and B bought
at k, all months in one batch; the month that maximizes NPV is the refresh month, and its NPV is
compared with keeping A to the horizon without B.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from econ.engine import project
from econ.errors import InputError
from econ.scenario.io import validate_dict
from econ.scenario.models import MAX_GPUS, Scenario
from econ.scenario.power_models import it_kw_per_gpu
from econ.units import KW_PER_MW


class RefreshError(InputError):
    """A refresh that cannot be analysed (unknown vintage, empty month range, too little power)."""


@dataclass(frozen=True)
class Refresh:
    """Result of a refresh analysis.

    Attributes
    ----------
    table : DataFrame indexed by refresh month k: npv_usd, irr_project_annual, lcot_usd_per_mtok,
        new_gpu_count, gain_usd (NPV minus the NPV of keeping), sale_proceeds_usd (what the
        old fleet sells for in month k: its resale value at that age with a resale table)
    best_month : the k with the highest NPV
    npv_keep_usd, npv_best_usd : NPV of keeping the fleet, and of refreshing at best_month [USD]
    warnings : what the answer rests on that no input priced (a sale at book value), an
        envelope that grows the fleet (`refresh_warnings`), and what `econ validate` warns of
        the best case's inputs (`case_warnings`), each once
    """

    table: pd.DataFrame
    best_month: int
    npv_keep_usd: float
    npv_best_usd: float
    warnings: tuple[str, ...] = ()

    @property
    def gain_usd(self) -> float:
        """NPV of refreshing at the best month minus keeping [USD]."""
        return self.npv_best_usd - self.npv_keep_usd


def gpus_for_power(power_kw: float, kw_per_gpu: float, gpus_per_rack: int) -> int:
    """Whole racks of GPUs that fit an IT power envelope [GPUs]."""
    racks = int(np.floor(power_kw / (kw_per_gpu * gpus_per_rack) + 1e-9))
    return racks * gpus_per_rack


def installed_it_kw(scenario: Scenario) -> float:
    """The scenario's own fleet's full-load IT power: its GPUs x power.kw_per_gpu taken to the
    IT boundary from power.kw_per_gpu_definition (`it_kw_per_gpu`) [kW]."""
    return scenario.fleet.gpu_count * it_kw_per_gpu(scenario.power)


def earliest_month(scenario: Scenario, vintage: str) -> int:
    """The vintage's purchase month in the scenario, taken as when it becomes available (>= 1)."""
    found = [v for v in scenario.vintages if v.name == vintage]
    return max(1, int(found[0].fleet.get("purchase_month", 1))) if found else 1


def first_retire_month(scenario: Scenario) -> int:
    """The first month the scenario's own fleet can retire in, and so be refreshed: its
    fleet.service_start_month, by default the month after its fleet.purchase_month."""
    fleet = scenario.fleet
    start = fleet.service_start_month
    return fleet.purchase_month + 1 if start is None else start


def first_refresh_month(scenario: Scenario, vintage: str) -> int:
    """The default first candidate month: the vintage's purchase month (`earliest_month`), or the
    old fleet's first month (`first_retire_month`) where that is later."""
    return max(earliest_month(scenario, vintage), first_retire_month(scenario))


def vintage_retire_month(scenario: Scenario, vintage: str) -> int | None:
    """The vintage's own fleet.retire_month in the scenario (None: kept to the horizon)."""
    found = [v for v in scenario.vintages if v.name == vintage]
    retire = found[0].fleet.get("retire_month") if found else None
    return None if retire is None else int(retire)


def last_refresh_month(scenario: Scenario, vintage: str) -> int:
    """The default last candidate month: the horizon - 1, or the month before the vintage's own
    fleet.retire_month where that is earlier (the new fleet is bought in the refresh month and
    retired in its own retire month, so it must be bought before it)."""
    retire = vintage_retire_month(scenario, vintage)
    return (scenario.horizon if retire is None else min(retire, scenario.horizon)) - 1


def candidate_months(scenario: Scenario, vintage: str, months=None) -> np.ndarray:
    """The refresh months to project: `months` as given (checked by `refresh_scenarios`), by
    default every month from `first_refresh_month` to `last_refresh_month`."""
    if months is None:
        return np.arange(
            first_refresh_month(scenario, vintage), last_refresh_month(scenario, vintage) + 1
        )
    return np.asarray(list(months), dtype=int)


@dataclass(frozen=True)
class RefreshSize:
    """What a refresh analysis projects: `cases` scenarios (the keep case and one per candidate
    month) of up to `rows` rows each (the old fleet and every vintage), each row over `months`
    months (the horizon and month 0)."""

    cases: int
    rows: int
    months: int

    @property
    def row_months(self) -> int:
        """Rows x months projected, which the time and memory of the analysis grow with: a
        scenario of 10 vintages over 600 months has 600 cases of 11 rows over 601 months, 4.0
        million."""
        return self.cases * self.rows * self.months


def refresh_size(scenario: Scenario, vintage: str, months=None) -> RefreshSize:
    """The size of `refresh_analysis(scenario, vintage, months)`, counted before anything is
    built (see refresh_scenarios for the arguments)."""
    cases = 1 + candidate_months(scenario, vintage, months).size
    return RefreshSize(cases, 1 + len(scenario.vintages), scenario.horizon + 1)


def refresh_scenarios(
    scenario: Scenario, vintage: str, months=None, power_mw: float | None = None
) -> tuple[Scenario, list[Scenario], np.ndarray, int]:
    """The keep case (the fleet to the horizon, no replacement) and one case per refresh month.

    Parameters
    ----------
    scenario : a scenario with a vintage named `vintage` (the new generation)
    vintage : name of the replacing vintage
    months : candidate refresh months; default every month from the vintage's purchase month in the
        scenario (taken as the month it becomes available), or from the old fleet's first month
        where that is later (`first_refresh_month`), to the horizon - 1
    power_mw : IT power envelope [MW]; default the installed fleet's full-load IT power. The new
        vintage is sized to whole racks within it.
    """
    names = [v.name for v in scenario.vintages]
    if vintage not in names:
        raise RefreshError(
            f"vintage '{vintage}' is not in scenario '{scenario.name}'; expected one of: "
            + (", ".join(names) if names else "(the scenario has no vintages)")
        )
    horizon = scenario.horizon
    replacement = scenario.vintages[names.index(vintage)]
    candidates = candidate_months(scenario, vintage, months)
    outside = candidates[(candidates < 1) | (candidates >= horizon)]
    if candidates.size == 0 or outside.size:
        said = f"refresh month {int(outside[0])} is outside" if outside.size else "no month in"
        raise RefreshError(
            f"{said} 1..{horizon - 1}; expected refresh months in that range (the horizon is "
            f"{horizon} months: the old fleet serves before the refresh month, the new one after)"
        )
    first = first_retire_month(scenario)
    if (candidates < first).any():
        raise RefreshError(
            f"refresh month {int(candidates[candidates < first][0])} is before month {first}, "
            f"the first the old fleet can retire in ({first_retire_input(scenario)}); expected "
            f"refresh months from {first}"
        )
    retire = vintage_retire_month(scenario, vintage)
    if retire is not None and (candidates >= retire).any():
        # (each case buys the new fleet in the refresh month: one bought at or after its own
        # retire month was refused as "fleet.retire_month is 60; expected a month after the
        # purchase month (60)", a purchase month the file does not give)
        raise RefreshError(
            f"refresh month {int(candidates[candidates >= retire][0])} is at or after month "
            f"{retire}, the fleet.retire_month of vintage '{vintage}': the new fleet is bought "
            f"in the refresh month and retired in that month; expected refresh months before "
            f"{retire} (or no retire_month in the vintage: kept to the horizon)"
        )
    repeated = np.unique(candidates, return_counts=True)
    if (repeated[1] > 1).any():
        raise RefreshError(
            f"refresh month {int(repeated[0][repeated[1] > 1][0])} is given more than once; "
            "expected distinct months (each is one case, named by its month)"
        )
    new = scenario.expand()[1 + names.index(vintage)]
    # both fleets on the IT boundary (power.kw_per_gpu_definition), as the projection draws them
    new_kw_per_gpu = it_kw_per_gpu(new.power)
    if power_mw is not None and not power_mw > 0:  # also NaN
        raise RefreshError(
            f"an IT power envelope of {power_mw:g} MW; expected an envelope above 0 MW (none: "
            "the installed fleet's)"
        )
    envelope_kw = power_mw * KW_PER_MW if power_mw is not None else installed_it_kw(scenario)
    if not envelope_kw / new_kw_per_gpu <= MAX_GPUS:  # also NaN and infinity
        raise RefreshError(
            f"an IT power envelope of {envelope_kw / KW_PER_MW:g} MW holds more than {MAX_GPUS:,} "
            f"'{vintage}' GPUs (fleet.gpu_count's bound); expected a smaller envelope"
        )
    new_gpus = gpus_for_power(envelope_kw, new_kw_per_gpu, new.fleet.gpus_per_rack)
    if new_gpus < 1:
        # in MW, the envelope's unit (--mw, the app's box): "-1,000 kW" answered a box's -1 MW
        # and "0 kW" its 0.0001 MW
        rack_kw = new.fleet.gpus_per_rack * new_kw_per_gpu
        raise RefreshError(
            f"an IT power envelope of {envelope_kw / KW_PER_MW:,.6g} MW ({envelope_kw:,.6g} kW) "
            f"holds no whole rack of '{vintage}' ({new.fleet.gpus_per_rack} GPUs x "
            f"{new_kw_per_gpu:g} kW of IT load, {rack_kw:,.6g} kW); expected at least "
            f"{rack_kw / KW_PER_MW:,.6g} MW"
        )
    others = [v for v in scenario.vintages if v.name != vintage]
    base = scenario.model_dump(exclude={"sources"})
    file = scenario.source_file  # the cases' errors name the scenario's file
    keep = validate_dict(
        {
            **base,
            "name": f"{scenario.name}/keep",
            "fleet": {**base["fleet"], "retire_month": None},
            "vintages": [v.model_dump() for v in others],
        },
        file,
    )
    cases = []
    for k in candidates:  # building inputs, not projecting: one small scenario per month
        fleet = {**replacement.fleet, "purchase_month": int(k), "gpu_count": new_gpus}
        fleet.pop("racks", None)
        moved = replacement.model_copy(update={"fleet": fleet})
        data = {
            **base,
            "name": f"{scenario.name}/refresh@{k}",
            "fleet": {**base["fleet"], "retire_month": int(k)},
            "vintages": [v.model_dump() for v in others] + [moved.model_dump()],
        }
        cases.append(validate_dict(data, file))
    return keep, cases, candidates, new_gpus


def first_retire_input(scenario: Scenario) -> str:
    """Which input `first_retire_month` comes from, with its value."""
    fleet = scenario.fleet
    if fleet.service_start_month is not None:
        return f"fleet.service_start_month = {fleet.service_start_month}"
    return f"the month after fleet.purchase_month = {fleet.purchase_month}"


def refresh_analysis(
    scenario: Scenario, vintage: str, months=None, power_mw: float | None = None
) -> Refresh:
    """NPV of replacing the scenario's fleet by `vintage` at each candidate month, and the best.

    See refresh_scenarios for the arguments. All cases are projected together in one batch.
    """
    keep, cases, candidates, new_gpus = refresh_scenarios(scenario, vintage, months, power_mw)
    result = project([keep, *cases])
    metrics = result.metrics
    npv = metrics["npv_usd"][1:]
    # The sale in month k is the old fleet's (the new vintage is bought then, sold at the end),
    # less that of another vintage retired in month k, which sells then in the keep case too (it
    # was counted as the old fleet's: 25,868,800 USD for the H200s' 24,064,000 in month 30)
    disposal = result.lines["disposal_usd"]
    sold = disposal[1 + np.arange(len(candidates)), candidates] - disposal[0, candidates]
    table = pd.DataFrame(
        {
            "npv_usd": npv,
            "gain_usd": npv - metrics["npv_usd"][0],
            "irr_project_annual": metrics["irr_project_annual"][1:],
            "lcot_usd_per_mtok": metrics["lcot_usd_per_mtok"][1:],
            "new_gpu_count": new_gpus,
            "sale_proceeds_usd": sold,
        },
        index=pd.Index(candidates, name="refresh_month"),
    )
    best = int(np.argmax(npv))
    return Refresh(
        table=table,
        best_month=int(candidates[best]),
        npv_keep_usd=float(metrics["npv_usd"][0]),
        npv_best_usd=float(npv.max()),
        warnings=tuple(dict.fromkeys(filter(None, (  # (in order, each once)
            early_warning(scenario, vintage, candidates, int(candidates[best])),
            *refresh_warnings(
                scenario, cases[best], int(candidates[best]),
                float(sold[best]), disposal[1 + best], new_gpus, power_mw,
            ),
            *case_warnings(cases[best]),
        )))),
    )  # fmt: skip


def case_warnings(case: Scenario) -> tuple[str, ...]:
    """What `econ validate` warns of a refresh case's inputs (`econ.plausibility.
    validate_warnings`): of the scenario's own (a vintage that borrows the old fleet's power per
    GPU, a rack size taken from the old fleet...) and of the refresh's (a GPU count sized to the
    envelope that is not a whole number of systems). A row's are named as a projection names it:
    [base] for the old fleet, [VINTAGE] for the new one."""
    from econ.plausibility import validate_warnings  # the catalogs load only here

    rows = f"{case.name}/"
    return tuple(
        warning if whose == case.name else f"[{whose.removeprefix(rows)}] {warning}"
        for whose, warning in validate_warnings(case)
    )


def early_warning(scenario: Scenario, vintage: str, candidates, best_month: int) -> str | None:
    """Where candidate months come before the vintage's purchase month in the file, which the
    refresh takes as when the new generation becomes available (`earliest_month`): those cases
    buy GPUs that cannot yet be had. None where every candidate is at or after it."""
    available = earliest_month(scenario, vintage)
    early = np.sort(np.asarray(candidates, dtype=int)[np.asarray(candidates) < available])
    if not early.size:
        return None
    first, last = int(early[0]), int(early[-1])
    if early.size == 1:
        months = f"refresh month {first} is"
    elif early.size == last - first + 1:
        months = f"refresh months {first} to {last} are"
    else:
        months = f"{early.size} refresh months, {first} to {last}, are"
    best = f" (the best month, {best_month}, is one of them)" if best_month < available else ""
    return (
        f"{months} before month {available}, the purchase month of vintage '{vintage}' in the "
        f"file, taken as when its GPUs become available: those cases buy them before they can "
        f"be had{best}; expected candidate months from {available} (the default)"
    )


def refresh_warnings(
    scenario: Scenario,
    best: Scenario,
    month: int,
    old_sale: float,
    disposal,
    new_gpus: int,
    power_mw,
) -> tuple[str, ...]:
    """What the best refresh rests on that no input priced, and an envelope that grows the fleet.

    A retirement with neither `depreciation.sale_value_share` nor a resale table sells at book
    value: the old fleet's sale at `month` (`old_sale` USD) and the new fleet's (`disposal`, the
    best case's line) at the horizon or its own retire month are then the refresh's proceeds,
    which the NPV gain may rest on (the ready-made case's +28.6M USD becomes a loss with nothing
    recovered). An envelope above
    the installed fleet's IT power buys more GPUs than it retires: the gain then holds an
    expansion's as well.
    """
    out = []
    old, new = scenario, best.expand()[-1]
    # the new fleet is sold at the horizon, or in its own retire month where the vintage gives one
    new_retire = new.fleet.retire_month or new.horizon
    sold_at = "at the horizon" if new_retire == new.horizon else f"in month {new_retire}"
    at_book = [
        f"the old fleet's sale in month {month} ({old_sale:,.0f} USD)"
        if _sold_at_book(old) else "",
        f"the new fleet's {sold_at} ({disposal[new_retire]:,.0f} USD)"
        if _sold_at_book(new) and disposal[new_retire] > 0 else "",
    ]  # fmt: skip
    if any(at_book):
        out.append(
            f"{' and '.join(filter(None, at_book))} {'are' if all(at_book) else 'is'} at book "
            "value: no resale table (market.resale_*) or depreciation.sale_value_share prices "
            f"{'them' if all(at_book) else 'it'}, and the refresh's NPV rests on "
            f"{'them' if all(at_book) else 'it'}; a resale table prices a sale by the GPUs' age "
            "in the refresh month, while depreciation.sale_value_share is a share of cost at any "
            "age (the same proceeds in every refresh month); depreciation.sale_value_share = 0 "
            "values the refresh with nothing recovered"
        )
    installed_kw = installed_it_kw(old)
    if power_mw is not None and power_mw * KW_PER_MW > installed_kw * (1 + 1e-9):
        out.append(
            f"the envelope of {power_mw:g} MW is {power_mw * KW_PER_MW / installed_kw:,.1f}x the "
            f"installed fleet's {installed_kw / KW_PER_MW:,.3g} MW: {new_gpus:,} new GPUs replace "
            f"{old.fleet.gpu_count:,}, so the gain holds an expansion's, not only the refresh's"
        )
    return tuple(out)


def _sold_at_book(scenario: Scenario) -> bool:
    """Whether a retirement of the scenario's fleet is priced at its book value (no sale value
    share, no resale table)."""
    return scenario.depreciation.sale_value_share is None and not scenario.market.has_resale
