"""Pydantic sections of a scenario's [market] and [utilization] tables: prices, contracts, demand.

`Market` is a drop-in superset of the section in models.py (today's fields keep their names and
meaning: price_usd_per_mtok, price_decline_annual, contract_usd_per_gpu_hour, contract_share) and
adds the token mix (input and cached input prices beside the output price, and the cache hit
share), the curves of econ.market: constant-capability deflation given as a fall factor, a table of
dated token prices, a GPU-hour rental market (a decline to a floor, or a table), contract renewals
at the market price, and spot capacity selling tokens or GPU-hours; the rental price may come from
a published index series (`rental_series`, resolved into the rental table by econ.batch through
econ.rental_index). `Utilization` adds churn to the ramp. `compile_market` turns sections into the
padded arrays the engine needs.

A scenario file:

    [market]
    price_usd_per_mtok = 0.3261
    price_fall_factor_annual = 10.0          # a16z "LLMflation": 10x a year, a decline of 0.9
    input_price_usd_per_mtok = 0.08          # prompt tokens, following the output price's path
    cached_input_price_usd_per_mtok = 0.02   # prompt tokens served from the cache
    cache_hit_share = 0.5
    contract_share = 0.6
    contract_usd_per_gpu_hour = 4.00
    contract_term_months = 36                # renewed at the market rental price
    rental_usd_per_gpu_hour = 4.00
    rental_decline_annual = 0.35
    rental_floor_usd_per_gpu_hour = 1.86
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field, field_validator, model_serializer, model_validator

from econ.scenario.gain_models import check_time_order, table_months
from econ.scenario.section import Section as _Section
from econ.scenario.section import exactly_one

SPOT_SELLS = ("tokens", "gpu_hours")
"""What uncontracted capacity sells; the order is the integer code in a ScenarioBatch column."""

SHARE_TOLERANCE = 1e-9
"""contract_share + spot_share may differ from 1 by this much (decimal input rounding)."""


class _Point(_Section):
    month: int | None = Field(
        None, ge=-600, le=1200, description="Month of the price (0 = purchase month) [month]"
    )
    date: dt.date | None = Field(None, description="Date of the price instead of `month`")

    @model_validator(mode="after")
    def _month_or_date(self):
        if (self.month is None) == (self.date is None):
            raise ValueError(exactly_one({"month": self.month, "date": self.date}))
        return self


class TokenPricePoint(_Point):
    """A dated token price quote."""

    price_usd_per_mtok: float = Field(
        ..., gt=0, description="Price of output tokens at this time [USD per million tokens]"
    )


class RentalPricePoint(_Point):
    """A dated GPU-hour rental price quote."""

    price_usd_per_gpu_hour: float = Field(
        ..., gt=0, description="Market rental price at this time [USD/GPU-hour]"
    )


class ResaleValuePoint(_Section):
    """A point of a resale value table: what a used GPU resells for at an age."""

    age_months: int = Field(
        ..., ge=0, le=600, description="Age of the GPUs since purchase [months]"
    )
    share: float = Field(
        ...,
        ge=0,
        le=1,
        description="Resale value at that age as a share of the new hardware price [fraction]",
    )
    share_low: float | None = Field(
        None, ge=0, le=1, description="Low end of the published range at that age [fraction]"
    )
    share_high: float | None = Field(
        None, ge=0, le=1, description="High end of the published range at that age [fraction]"
    )

    @model_validator(mode="after")
    def _band_around_share(self):
        if self.share_low is not None and self.share_low > self.share:
            raise ValueError(
                f"share_low {self.share_low} is above share {self.share}; expected the low end "
                "of the range at or below the share"
            )
        if self.share_high is not None and self.share_high < self.share:
            raise ValueError(
                f"share_high {self.share_high} is below share {self.share}; expected the high "
                "end of the range at or above the share"
            )
        return self


def check_resale_table(table: Sequence[ResaleValuePoint], name: str = "resale_value_table"):
    """Ages strictly increasing; shares (and their low and high ends) not rising with age."""
    for i in range(1, len(table)):
        before, point = table[i - 1], table[i]
        if point.age_months <= before.age_months:
            order = "repeats" if point.age_months == before.age_months else "comes before"
            raise ValueError(
                f"{name}[{i}].age_months {point.age_months} {order} {name}[{i - 1}].age_months "
                f"{before.age_months}; expected strictly increasing ages"
            )
        for column in ("share", "share_low", "share_high"):
            now, then = getattr(point, column), getattr(before, column)
            if now is not None and then is not None and now > then:
                raise ValueError(
                    f"{name}[{i}].{column} {now} is above {name}[{i - 1}].{column} {then}; "
                    "expected shares that do not rise with age (a used GPU does not gain value "
                    "as it ages)"
                )


class Utilization(_Section):
    share: float = Field(
        0.7, ge=0.0, le=1.0, description="Share of hours the GPUs serve tokens at the rated speed [fraction]"
    )
    ramp_months: int = Field(
        0, ge=0, description="Months to ramp linearly from 0 to `share`; 0 = no ramp [months]"
    )
    churn_annual: float = Field(
        0.0,
        ge=0.0,
        lt=1.0,
        description="Share of booked capacity lost each year and not re-let, e.g. to newer GPUs "
        "[fraction/year]",
    )


class Market(_Section):
    """Who pays for the capacity, and at what price, month by month."""

    price_usd_per_mtok: float = Field(
        1.0, ge=0, description="Price of output tokens in month 1 [USD per million tokens]"
    )
    price_decline_annual: float = Field(
        0.0,
        ge=0,
        lt=1,
        description="Annual fall of the token price, e.g. 0.3; 0.9 is 10x a year [fraction/year]",
    )
    price_fall_factor_annual: float | None = Field(
        None,
        ge=1.0,
        description="Alternative to price_decline_annual: the factor the price falls by each year, "
        "e.g. 10 for the ~10x a year constant-capability deflation of a16z's LLMflation (2024) "
        "[ratio/year]",
    )
    price_table: tuple[TokenPricePoint, ...] = Field(
        (),
        description="Token prices by month or date, instead of price_usd_per_mtok and a decline; "
        "interpolated monotonically (PCHIP in log price), held flat outside the table",
    )
    input_price_usd_per_mtok: float = Field(
        0.0,
        ge=0,
        description="Price of uncached input (prompt) tokens in month 1; 0 = input tokens are "
        "not charged, today's output-only pricing [USD per million tokens]",
    )
    cached_input_price_usd_per_mtok: float | None = Field(
        None,
        ge=0,
        description="Price of input tokens served from the prompt cache in month 1; default: the "
        "input price [USD per million tokens]",
    )
    cache_hit_share: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Share of input tokens served from the prompt cache, billed at "
        "cached_input_price_usd_per_mtok [fraction]",
    )
    input_price_decline_annual: float | None = Field(
        None,
        ge=0,
        lt=1,
        description="Annual fall of the input price; default: the input price follows the output "
        "price's path (its decline or table) [fraction/year]",
    )
    cached_input_price_decline_annual: float | None = Field(
        None,
        ge=0,
        lt=1,
        description="Annual fall of the cached input price; default: it follows the output "
        "price's path (the input price's, where no cached price is given) [fraction/year]",
    )
    contract_usd_per_gpu_hour: float = Field(
        0.0, ge=0, description="Contracted rental price for covered GPUs [USD/GPU-hour]"
    )
    contract_share: float = Field(
        0.0, ge=0, le=1, description="Share of GPUs under the rental contract; the rest sell tokens [fraction]"
    )
    spot_share: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Share of GPUs selling at market prices; if given, must be 1 - contract_share "
        "[fraction]",
    )
    contract_term_months: int = Field(
        0,
        ge=0,
        le=600,
        description="Contract term; at each renewal the price resets to the market rental price "
        "for another term; 0 = one contract for the whole horizon [months]",
    )
    spot_sells: Literal["tokens", "gpu_hours"] = Field(
        "tokens",
        description="What uncontracted GPUs sell: tokens at the token price, or GPU-hours at the "
        "market rental price (times utilization)",
    )
    rental_usd_per_gpu_hour: float = Field(
        0.0,
        ge=0,
        description="Market rental price of a GPU-hour in month 1, for renewals and spot GPU-hours "
        "[USD/GPU-hour]",
    )
    rental_decline_annual: float = Field(
        0.0,
        ge=0,
        lt=1,
        description="Annual decline of the rental price's premium over its floor [fraction/year]",
    )
    rental_floor_usd_per_gpu_hour: float = Field(
        0.0,
        ge=0,
        description="Level the rental price declines towards, e.g. the hourly cost of ownership "
        "[USD/GPU-hour]",
    )
    rental_table: tuple[RentalPricePoint, ...] = Field(
        (),
        description="Rental prices by month or date instead of the decline, e.g. H100 quotes "
        "2023-2026; interpolated monotonically (PCHIP in log price), held flat outside",
    )
    rental_series: str | None = Field(
        None,
        max_length=100,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$",
        description="Rental index series (PUBLISHER/INDEX, e.g. 'CCIR/CRI-T2IF'; `econ market "
        "list`) whose dated points set the market rental price instead of rental_table, "
        "extended beyond its last point by a fitted decay (or by rental_decline_annual and "
        "rental_floor_usd_per_gpu_hour when a decline is given)",
    )
    rental_series_gpu: str | None = Field(
        None,
        max_length=40,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
        description="GPU of the rental series, e.g. 'H100'; default: fleet.hardware's first part "
        "in upper case (h100-sxm -> H100)",
    )
    rental_series_term_months: int = Field(
        0,
        ge=0,
        le=120,
        description="Contract term of the rental series' points: 0 = on-demand, 12 = one-year "
        "contracts [months]",
    )
    rental_series_band_sigmas: float = Field(
        0.0,
        ge=-4.0,
        le=4.0,
        description="Shift of the prices extrapolated beyond the rental series' last point, in "
        "residual standard errors of the fit's log price: -1.645 / +1.645 are the 5th / 95th "
        "percentile; Monte Carlo samples it, e.g. normal(0, 1, low=-4, high=4) [standard errors]",
    )

    resale_value_table: tuple[ResaleValuePoint, ...] = Field(
        (),
        description="Resale value of the GPUs by age (age_months, share of the new hardware "
        "price, optional share_low and share_high): straight line between points from (0, 1), "
        "flat after the last; sets the sale proceeds at retirement, the collateral value for "
        "financing.max_ltv and the impairment test's 'resale_value' (docs/market.md)",
    )
    resale_series: str | None = Field(
        None,
        max_length=100,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$",
        description="Resale index series (PUBLISHER/NAME, e.g. 'GLRI/ResidualGuide'; `econ "
        "market resale`) whose points are the resale value table, instead of "
        "resale_value_table",
    )
    resale_series_gpu: str | None = Field(
        None,
        max_length=40,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
        description="GPU of the resale series, e.g. 'H100'; default: each row's fleet.hardware "
        "first part in upper case (h100-sxm -> H100)",
    )
    resale_band: float = Field(
        0.0,
        ge=-1.0,
        le=1.0,
        description="Position between the resale table's low (-1), mid (0) and high (+1) "
        "shares, linear on each side; Monte Carlo samples it, e.g. uniform(-1, 1) [band "
        "position]",
    )

    @model_validator(mode="before")
    @classmethod
    def _decline_from_factor(cls, data: Any) -> Any:
        # A fall factor is another way to write the decline; the engine reads the decline only.
        if isinstance(data, dict) and data.get("price_fall_factor_annual") is not None:
            factor = data["price_fall_factor_annual"]
            if (
                isinstance(factor, int | float)
                and factor >= 1
                and "price_decline_annual" not in data
            ):
                data = {**data, "price_decline_annual": 1.0 - 1.0 / factor}
        return data

    @field_validator("price_table", "rental_table")
    @classmethod
    def _tables_in_order(cls, table, info):
        check_time_order(table, info.field_name)
        return table

    @field_validator("resale_value_table")
    @classmethod
    def _resale_in_order(cls, table):
        check_resale_table(table)
        return table

    @model_serializer(mode="wrap")
    def _without_replaced_prices(self, handler) -> dict[str, Any]:
        """The section's data without the month-1 price a table replaces, where the file does
        not give it: its default would read back as given beside the table, and be refused
        (every sweep, Monte Carlo and gains analysis of a scenario priced by a table was)."""
        data = handler(self)
        for table, price in (
            ("price_table", "price_usd_per_mtok"),
            ("rental_table", "rental_usd_per_gpu_hour"),
        ):
            if getattr(self, table) and price not in self.model_fields_set:
                data.pop(price, None)
        return data

    @property
    def has_resale(self) -> bool:
        """Whether a resale value table or series is given."""
        return bool(self.resale_value_table) or self.resale_series is not None

    @model_validator(mode="after")
    def _consistent(self) -> Market:
        if self.resale_series is not None and self.resale_value_table:
            raise ValueError(
                "resale_series is given together with resale_value_table; the series is the "
                "table, expected one of the two"
            )
        if self.resale_series_gpu is not None and self.resale_series is None:
            raise ValueError(
                "resale_series_gpu is set but resale_series is not; expected the name of a "
                "resale index series (econ market resale)"
            )
        if self.resale_band != 0 and not self.has_resale:
            raise ValueError(
                f"resale_band is {self.resale_band} but there is no resale_value_table or "
                "resale_series; expected a resale table whose low and high shares it picks from"
            )
        if self.rental_series is not None:
            for name in ("rental_table", "rental_usd_per_gpu_hour"):
                if getattr(self, name):
                    raise ValueError(
                        f"rental_series is given together with {name}; the series sets every "
                        "month's rental price, expected one of the two"
                    )
        elif self.rental_series_gpu is not None or self.rental_series_band_sigmas != 0:
            raise ValueError(
                "rental_series_gpu or rental_series_band_sigmas is set but rental_series is not; "
                "expected the name of a rental index series (econ market list)"
            )
        if (
            self.contract_share > 0
            and self.contract_usd_per_gpu_hour <= 0
            and self.rental_series is None  # the series' month-1 price is the first contract's
        ):
            raise ValueError(
                f"contract_share is {self.contract_share} but contract_usd_per_gpu_hour is "
                f"{self.contract_usd_per_gpu_hour}; expected a price above 0 for contracted GPUs"
            )
        self._check_token_mix()
        if self.spot_share is not None:
            total = self.contract_share + self.spot_share
            if abs(total - 1.0) > SHARE_TOLERANCE:
                raise ValueError(
                    f"contract_share {self.contract_share} and spot_share {self.spot_share} add up "
                    f"to {total:g}; expected shares of the fleet that add up to 1"
                )
        factor = self.price_fall_factor_annual
        if factor is not None and abs(self.price_decline_annual - (1.0 - 1.0 / factor)) > 1e-12:
            raise ValueError(
                f"price_fall_factor_annual {factor:g} means a decline of {1 - 1 / factor:.6g}, "
                f"but price_decline_annual is {self.price_decline_annual}; give one of the two"
            )
        if self.price_table:
            if self.price_decline_annual > 0:
                raise ValueError(
                    "price_table is given together with a price decline; the table sets every "
                    "month's price, expected one of the two"
                )
            if "price_usd_per_mtok" in self.model_fields_set:
                raise ValueError(
                    "price_table is given together with price_usd_per_mtok; the table sets every "
                    "month's price, expected one of the two"
                )
        if self.rental_table and "rental_usd_per_gpu_hour" in self.model_fields_set:
            raise ValueError(
                "rental_table is given together with rental_usd_per_gpu_hour; expected one of the two"
            )
        # A decline or floor that sets no price would read as applied: a table or a fitted decay
        # went below the floor given, with no word (docs/market.md).
        if self.rental_table:
            given = [
                f"{name} {getattr(self, name)}"
                for name in ("rental_decline_annual", "rental_floor_usd_per_gpu_hour")
                if getattr(self, name) > 0
            ]
            if given:
                raise ValueError(
                    f"rental_table is given together with {' and '.join(given)}; the table sets "
                    "every month's rental price (its last price held after it), expected the "
                    "table alone, or a rental price with its decline and floor"
                )
        if (
            self.rental_series is not None
            and self.rental_floor_usd_per_gpu_hour > 0
            and self.rental_decline_annual == 0
        ):
            raise ValueError(
                f"rental_floor_usd_per_gpu_hour {self.rental_floor_usd_per_gpu_hour} is given with "
                f"rental_series {self.rental_series} but rental_decline_annual is 0: the series' "
                "fitted decay extends it and has no floor, so prices would fall below this one; "
                "expected rental_decline_annual above 0 for the floor to apply, or no floor"
            )
        if (
            self.rental_floor_usd_per_gpu_hour > self.rental_usd_per_gpu_hour
            and not self.rental_table
            and self.rental_series is None
        ):
            raise ValueError(
                f"rental_floor_usd_per_gpu_hour {self.rental_floor_usd_per_gpu_hour} is above "
                f"rental_usd_per_gpu_hour {self.rental_usd_per_gpu_hour}; expected a floor at or "
                "below the month-1 rental price"
            )
        has_rental_market = (
            self.rental_usd_per_gpu_hour > 0
            or bool(self.rental_table)
            or self.rental_series is not None
        )
        if self.contract_term_months > 0 and self.contract_share > 0 and not has_rental_market:
            raise ValueError(
                f"contract_term_months is {self.contract_term_months}: contracts renew at the "
                "market rental price, but neither rental_usd_per_gpu_hour nor rental_table is set"
            )
        if self.spot_sells == "gpu_hours" and self.contract_share < 1 and not has_rental_market:
            raise ValueError(
                "spot_sells is 'gpu_hours' but neither rental_usd_per_gpu_hour nor rental_table is "
                "set; expected the market price of the spot GPU-hours"
            )
        return self

    def _check_token_mix(self) -> None:
        cached = self.cached_input_price_usd_per_mtok
        if self.cache_hit_share > 0 and cached is None:
            raise ValueError(
                f"cache_hit_share is {self.cache_hit_share} but cached_input_price_usd_per_mtok "
                "is not set; expected the price of input tokens served from the cache"
            )
        if cached is not None and cached > 0 and self.input_price_usd_per_mtok <= 0:
            raise ValueError(
                f"cached_input_price_usd_per_mtok is {cached} but input_price_usd_per_mtok is "
                f"{self.input_price_usd_per_mtok}; expected an input price above 0 for the "
                "uncached input tokens"
            )
        if self.cached_input_price_decline_annual is not None and cached is None:
            raise ValueError(
                "cached_input_price_decline_annual is set but cached_input_price_usd_per_mtok "
                "is not; expected the month-1 price of cached input tokens"
            )

    @property
    def charges_input_tokens(self) -> bool:
        """Whether input tokens earn revenue (an input price above 0; a cached price needs one)."""
        return self.input_price_usd_per_mtok > 0


def compile_market(
    sections: Sequence[Market], start_dates: Sequence[dt.date]
) -> dict[str, np.ndarray]:
    """Arrays the engine needs beyond the scalar batch columns, one row per scenario.

    Returns
    -------
    dict of arrays (tables padded with NaN):
        price_table_months, price_table_usd_per_mtok : float (n, k)  [month, USD/Mtok]
        rental_table_months, rental_table_usd_per_gpu_hour : float (n, k2)  [month, USD/GPU-hour]
        spot_sells_gpu_hours : bool (n,)
    """
    n = len(sections)
    if n != len(start_dates):
        raise ValueError(
            f"got {n} market sections and {len(start_dates)} start dates; expected one each"
        )
    k = max([1, *(len(s.price_table) for s in sections)])
    k2 = max([1, *(len(s.rental_table) for s in sections)])
    out = {
        "price_table_months": np.full((n, k), np.nan),
        "price_table_usd_per_mtok": np.full((n, k), np.nan),
        "rental_table_months": np.full((n, k2), np.nan),
        "rental_table_usd_per_gpu_hour": np.full((n, k2), np.nan),
        "spot_sells_gpu_hours": np.array([s.spot_sells == "gpu_hours" for s in sections]),
    }
    for row, (section, start) in enumerate(zip(sections, start_dates, strict=True)):
        if section.price_table:  # compiling inputs, not projecting
            length = len(section.price_table)
            out["price_table_months"][row, :length] = table_months(section.price_table, start)
            out["price_table_usd_per_mtok"][row, :length] = [
                p.price_usd_per_mtok for p in section.price_table
            ]
        if section.rental_table:
            length = len(section.rental_table)
            out["rental_table_months"][row, :length] = table_months(section.rental_table, start)
            out["rental_table_usd_per_gpu_hour"][row, :length] = [
                p.price_usd_per_gpu_hour for p in section.rental_table
            ]
    return out


__all__ = [
    "SPOT_SELLS",
    "Market",
    "ResaleValuePoint",
    "check_resale_table",
    "RentalPricePoint",
    "TokenPricePoint",
    "Utilization",
    "compile_market",
]
