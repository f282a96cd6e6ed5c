"""Electricity: power drawn as a function of load, its price, and energy per token.

This module owns the chain from a GPU's rated power to the electricity bill and to energy per token:

1. the power figure's boundary (chip only, chip plus host share, or at the utility meter) converted to
   IT power per GPU, or a measured energy per token converted to the same basis;
2. IT power drawn as a function of load (idle vs serving, the linear server power model);
3. power at the utility meter through PUE (The Green Grid WP#49);
4. the price per kWh: a base price, annual escalation and a time-of-day shape folded into a monthly
   average factor;
5. energy per token [J/token] and electricity cost per million tokens [USD/Mtok].

Every function is pure and vectorized: per-scenario parameters are arrays shaped (n,) (or scalars),
monthly quantities are arrays shaped (n, T). Nothing here loops over scenarios.
"""

from __future__ import annotations

import numpy as np

from econ.units import HOURS_PER_MONTH, SECONDS_PER_HOUR, TOKENS_PER_MTOK, annual_growth_factor

WATTS_PER_KW = 1000.0
"""Watts in a kilowatt [W/kW]."""
JOULES_PER_KWH = WATTS_PER_KW * SECONDS_PER_HOUR
"""Joules in a kilowatt-hour, 3.6e6 [J/kWh]."""

POWER_BOUNDARIES = ("chip_plus_host", "chip_only", "utility_meter")
"""Where a power figure is measured; the order is the code stored in a ScenarioBatch column.

- chip_plus_host: the GPU plus its share of the host (CPUs, memory, NICs, fans, switches in the rack):
  the IT load a rack PDU sees. SemiAnalysis' "all-in power per GPU" and MLPerf Power (wall power of
  the system under test) are on this boundary.
- chip_only: the GPU's board power (TDP); the host share is added by `host_overhead_share`.
- utility_meter: everything the facility draws for this GPU, cooling and losses included (IT x PUE).
"""


def _per_scenario(values) -> np.ndarray:
    """A per-scenario parameter as a column (n, 1) that broadcasts against (n, T); scalars stay 0-d."""
    array = np.asarray(values, dtype=float)
    return array[:, None] if array.ndim == 1 else array


def load_share(utilization, idle_power_share):
    """Average IT power as a share of full-load power [fraction].

    The linear server power model of Fan, Weber and Barroso (2007): P(u) = P_idle + (P_max - P_idle) u,
    so P(u) / P_max = u + (1 - u) * idle, where idle = P_idle / P_max and u is the share of hours
    serving at the rated speed.

    Parameters
    ----------
    utilization : array (n, T) or (n,)  share of hours serving [fraction]
    idle_power_share : array (n,)  power drawn while not serving as a share of full load [fraction]

    Returns
    -------
    array, broadcast of the inputs [fraction]

    References
    ----------
    X. Fan, W.-D. Weber, L. A. Barroso, "Power provisioning for a warehouse-sized computer", ISCA 2007,
    doi:10.1145/1250662.1250665, eq. (1).
    """
    u = np.asarray(utilization, dtype=float)
    idle = _per_scenario(idle_power_share) if u.ndim == 2 else np.asarray(idle_power_share, float)
    return u + (1.0 - u) * idle


def it_power_kw(gpus, kw_per_gpu, utilization, idle_power_share):
    """Average IT power drawn by the GPUs in service [kW].

    P_IT = N * kW_GPU * (u + (1 - u) * idle)  (linear power model, see `load_share`).

    Parameters
    ----------
    gpus : array (n, T)  GPUs in service [GPUs]
    kw_per_gpu : array (n,)  IT power per GPU at full load, chip plus host share [kW/GPU]
    utilization : array (n, T)  share of hours serving [fraction]
    idle_power_share : array (n,)  [fraction]
    """
    return (
        np.asarray(gpus, dtype=float)
        * _per_scenario(kw_per_gpu)
        * load_share(utilization, idle_power_share)
    )


def utility_power_kw(it_kw, pue):
    """Power at the utility meter: IT power times PUE [kW].

    PUE = total facility energy / IT equipment energy (The Green Grid, White Paper #49, "PUE: A
    Comprehensive Examination of the Metric", 2012; ISO/IEC 30134-2:2016), so total = IT * PUE.

    Parameters
    ----------
    it_kw : array (n, T) or (n,)  IT power [kW]
    pue : array (n,)  power usage effectiveness, >= 1 [ratio]
    """
    it = np.asarray(it_kw, dtype=float)
    return it * (_per_scenario(pue) if it.ndim == 2 else np.asarray(pue, dtype=float))


def it_kw_per_gpu(kw_per_gpu, boundary, host_overhead_share=0.0, pue=1.0):
    """A power figure per GPU converted to the IT boundary (chip plus host share) [kW/GPU].

    - chip_plus_host (code 0): unchanged;
    - chip_only (code 1): kW * (1 + host_overhead_share), the host's IT power added;
    - utility_meter (code 2): kW / PUE, the facility overhead removed (The Green Grid WP#49).

    Parameters
    ----------
    kw_per_gpu : array (n,)  power per GPU on `boundary` [kW/GPU]
    boundary : int array (n,)  index into POWER_BOUNDARIES
    host_overhead_share : array (n,)  host IT power per unit of chip power [fraction]
    pue : array (n,)  [ratio]
    """
    kw = np.asarray(kw_per_gpu, dtype=float)
    code = np.asarray(boundary)
    chip_only = POWER_BOUNDARIES.index("chip_only")
    meter = POWER_BOUNDARIES.index("utility_meter")
    return np.where(
        code == chip_only,
        kw * (1.0 + np.asarray(host_overhead_share, dtype=float)),
        np.where(code == meter, kw / np.asarray(pue, dtype=float), kw),
    )


def kw_per_gpu_from_joules_per_token(joules_per_token, tokens_per_s_per_gpu):
    """Serving power per GPU implied by a measured energy per token [kW/GPU].

    P = E_token * r / 1000, with E_token in J/token and r the tokens/s per GPU at which it was measured
    (1 W = 1 J/s). MLPerf Power reports system power and throughput of the same run, so
    E_token = W / (tokens/s).

    Parameters
    ----------
    joules_per_token : array (n,)  measured energy per output token [J/token]
    tokens_per_s_per_gpu : array (n,)  throughput of the same measurement [tokens/s/GPU]
    """
    return (
        np.asarray(joules_per_token, dtype=float)
        * np.asarray(tokens_per_s_per_gpu, dtype=float)
        / WATTS_PER_KW
    )


def serving_kw_per_gpu(
    nameplate_kw_per_gpu,
    measured_joules_per_token,
    measured_tokens_per_s_per_gpu,
    measured_boundary=0,
    host_overhead_share=0.0,
    pue=1.0,
):
    """IT power per GPU at full load: measured where given, else the nameplate figure [kW/GPU].

    A measured energy per token (MLPerf Power, InferenceX power data, a user's CSV) replaces the
    nameplate figure (issue 7, item 5); it is first converted to power with
    `kw_per_gpu_from_joules_per_token`, then to the IT boundary with `it_kw_per_gpu`. Software gains
    after the measurement raise tokens/s at the same power, so energy per token then falls.

    Parameters
    ----------
    nameplate_kw_per_gpu : array (n,)  IT power per GPU, already on the IT boundary [kW/GPU]
    measured_joules_per_token : array (n,)  NaN where nothing was measured [J/token]
    measured_tokens_per_s_per_gpu : array (n,)  throughput of the measurement [tokens/s/GPU]
    measured_boundary : int array (n,)  index into POWER_BOUNDARIES of the measurement
    host_overhead_share, pue : array (n,)  for the boundary conversion

    Returns
    -------
    kw_per_gpu : array (n,)  [kW/GPU]
    measured : bool array (n,)  True where the measured figure was used
    """
    joules = np.asarray(measured_joules_per_token, dtype=float)
    measured = np.isfinite(joules) & np.isfinite(
        np.asarray(measured_tokens_per_s_per_gpu, dtype=float)
    )
    from_measurement = it_kw_per_gpu(
        kw_per_gpu_from_joules_per_token(joules, measured_tokens_per_s_per_gpu),
        measured_boundary,
        host_overhead_share,
        pue,
    )
    return np.where(measured, from_measurement, nameplate_kw_per_gpu), measured


def time_of_day_factor(price_shape, load_shape=None):
    """Load-weighted average electricity price over its time average [ratio].

    f = (sum_h L_h p_h / sum_h L_h) / mean_h(p_h)

    The scenario's price per kWh is the time-averaged price; a load concentrated in expensive hours
    pays f > 1, a load shifted to cheap hours f < 1, and a flat load exactly 1 whatever the shape.
    The shape may be absolute prices or multipliers (only ratios matter), over 24 hours or any other
    set of equal periods (e.g. the 168 hours of a week). This is the energy-weighted average price of
    time-of-use tariffs (e.g. U.S. EIA, "Electric Power Annual", average price = revenue / kWh sold).

    Parameters
    ----------
    price_shape : array (k,) or (n, k)  price in each period [any price unit, > 0 on average]
    load_shape : array (k,) or (n, k), optional  IT load in each period [any unit]; flat if omitted

    Returns
    -------
    array () or (n,)  [ratio]
    """
    price = np.asarray(price_shape, dtype=float)
    load = np.ones_like(price) if load_shape is None else np.asarray(load_shape, dtype=float)
    price, load = np.broadcast_arrays(price, load)
    weighted = (price * load).sum(axis=-1) / load.sum(axis=-1)
    return weighted / price.mean(axis=-1)


def price_usd_per_kwh_path(price_usd_per_kwh, escalation_annual, months, time_of_day_factor=1.0):
    """Electricity price paid in each month [USD/kWh].

    p_m = p * (1 + e)^(max(m - 1, 0) / 12) * f_tod: the base price holds in month 1 and escalates at
    a compound annual rate (docs/methodology.md, "Time, units and signs"); f_tod is the monthly
    average time-of-day factor.

    Parameters
    ----------
    price_usd_per_kwh, escalation_annual, time_of_day_factor : array (n,)  [USD/kWh], [1/year], [ratio]
    months : array (T,)  month indices, 0 = purchase month

    Returns
    -------
    array (n, T)  [USD/kWh]
    """
    m = np.maximum(np.asarray(months) - 1, 0)[None, :]
    growth = annual_growth_factor(_per_scenario(escalation_annual), m)
    return _per_scenario(price_usd_per_kwh) * growth * _per_scenario(time_of_day_factor)


def energy_kwh_per_month(power_kw):
    """Energy of an average power held for a month of 730 hours [kWh/month].

    Parameters
    ----------
    power_kw : array (n, T)  average power [kW]
    """
    return np.asarray(power_kw, dtype=float) * HOURS_PER_MONTH


def power_cost_usd_per_month(it_kw, pue, price_usd_per_kwh_by_month):
    """Electricity bill per month at the utility meter [USD/month].

    cost_m = P_IT,m * PUE * 730 h * p_m.

    Parameters
    ----------
    it_kw : array (n, T)  average IT power [kW]
    pue : array (n,)  [ratio]
    price_usd_per_kwh_by_month : array (n, T)  from `price_usd_per_kwh_path` [USD/kWh]
    """
    return energy_kwh_per_month(utility_power_kw(it_kw, pue)) * price_usd_per_kwh_by_month


def power_usd_per_month(
    gpus,
    kw_per_gpu,
    utilization,
    idle_power_share,
    pue,
    price_usd_per_kwh,
    escalation_annual,
    months,
    time_of_day_factor=1.0,
):
    """Electricity bill per month at the utility meter [USD/month].

    cost_m = N_m * kW * (u_m + (1 - u_m) * idle) * PUE * 730 h * p * (1 + e)^((m - 1)/12) * f_tod

    The composition of `it_power_kw` (linear power model, Fan et al. 2007), PUE (The Green Grid WP#49)
    and `price_usd_per_kwh_path`.

    Parameters
    ----------
    gpus, utilization : array (n, T)  GPUs in service [GPUs], share of hours serving [fraction]
    kw_per_gpu : array (n,)  IT power per GPU at full load [kW/GPU]
    idle_power_share : array (n,)  [fraction]
    pue : array (n,)  [ratio]
    price_usd_per_kwh : array (n,)  price in month 1 [USD/kWh]
    escalation_annual : array (n,)  [1/year]
    months : array (T,)  month indices
    time_of_day_factor : array (n,), optional  monthly average time-of-day factor [ratio]
    """
    it_kw = it_power_kw(gpus, kw_per_gpu, utilization, idle_power_share)
    price = price_usd_per_kwh_path(price_usd_per_kwh, escalation_annual, months, time_of_day_factor)
    return power_cost_usd_per_month(it_kw, pue, price)


def joules_per_token(energy_kwh, tokens):
    """Energy per token [J/token]; NaN where no tokens were produced.

    E = kWh * 3.6e6 J/kWh / tokens.

    Parameters
    ----------
    energy_kwh : array  energy over a period [kWh]
    tokens : array  tokens produced in the same period [tokens]
    """
    tokens = np.asarray(tokens, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            tokens > 0, np.asarray(energy_kwh, dtype=float) * JOULES_PER_KWH / tokens, np.nan
        )


def joules_per_token_at_load(kw_per_gpu, tokens_per_s_per_gpu):
    """Energy per token while serving at full load [J/token].

    E = P * 1000 / r (1 W = 1 J/s): the instantaneous figure MLPerf Power reports, before idle hours.

    Parameters
    ----------
    kw_per_gpu : array  power per GPU while serving [kW/GPU]
    tokens_per_s_per_gpu : array  [tokens/s/GPU]
    """
    rate = np.asarray(tokens_per_s_per_gpu, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rate > 0, np.asarray(kw_per_gpu, dtype=float) * WATTS_PER_KW / rate, np.nan)


def power_cost_usd_per_mtok(power_usd, tokens):
    """Electricity cost per million tokens [USD/Mtok]; NaN where no tokens were produced.

    Parameters
    ----------
    power_usd : array  electricity bill over a period [USD]
    tokens : array  tokens produced in the same period [tokens]
    """
    tokens = np.asarray(tokens, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            tokens > 0, np.asarray(power_usd, dtype=float) * TOKENS_PER_MTOK / tokens, np.nan
        )


def energy_cost_usd_per_mtok(joules_per_token_at_meter, price_usd_per_kwh):
    """Electricity cost per million tokens from an energy per token at the meter [USD/Mtok].

    c = E * 1e6 / 3.6e6 * p: one million tokens at E J/token need E / 3.6 kWh.

    Parameters
    ----------
    joules_per_token_at_meter : array  energy per token including facility overhead [J/token]
    price_usd_per_kwh : array  [USD/kWh]
    """
    return (
        np.asarray(joules_per_token_at_meter, dtype=float)
        * TOKENS_PER_MTOK
        / JOULES_PER_KWH
        * np.asarray(price_usd_per_kwh, dtype=float)
    )


__all__ = [
    "JOULES_PER_KWH",
    "POWER_BOUNDARIES",
    "WATTS_PER_KW",
    "energy_cost_usd_per_mtok",
    "energy_kwh_per_month",
    "it_kw_per_gpu",
    "it_power_kw",
    "joules_per_token",
    "joules_per_token_at_load",
    "kw_per_gpu_from_joules_per_token",
    "load_share",
    "power_cost_usd_per_month",
    "power_cost_usd_per_mtok",
    "power_usd_per_month",
    "price_usd_per_kwh_path",
    "serving_kw_per_gpu",
    "time_of_day_factor",
    "utility_power_kw",
]
