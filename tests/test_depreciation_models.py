"""Tests of econ.scenario.depreciation_models: one valid base, then small functions that each break
one thing; the registry the models share with econ.depreciation; settings into schedules."""

from __future__ import annotations

import copy
import typing

import numpy as np
import pytest
from pydantic import ValidationError

from econ import depreciation as dep
from econ.catalog import macrs_gds_tables
from econ.commands.depreciation import method_settings
from econ.scenario import depreciation_models as dm
from econ.scenario.depreciation_models import DepreciationPolicy

TABLES = macrs_gds_tables()

BASE = {
    "method": "straight_line",
    "life_years": 6.0,
    "salvage_share": 0.05,
    "tax": {
        "method": "macrs_gds",
        "recovery_years": 5,
        "convention": "half-year",
        "bonus_share": 1.0,
    },
    "in_service_month": 1,
    "sale_value_share": 0.2,
    "market_value_table": [
        {"month": 0, "share": 1.0},
        {"month": 24, "share": 0.5},
        {"month": 72, "share": 0.1},
    ],
    "impairment": {
        "standard": "us_gaap",
        "price_drop_threshold": 0.5,
        "trigger_price": "token_price",
        "fair_value_source": "market_value",
    },
}


BOOK_KEYS = ("method", "life_years", "salvage_share")


def policy(book: dict | None = None, **changes) -> DepreciationPolicy:
    """BASE with some fields changed (``a__b`` is field b of sub-table a); ``book`` replaces the
    book method's fields."""
    data = copy.deepcopy(BASE)
    if book is not None:
        for key in BOOK_KEYS:
            data.pop(key)
        data.update(book)
    for path, value in changes.items():
        node = data
        parts = path.split("__")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        if value is _DELETE:
            node.pop(parts[-1], None)
        else:
            node[parts[-1]] = value
    return DepreciationPolicy.model_validate(data)


_DELETE = object()


def test_base_and_defaults_are_valid():
    p = policy()
    assert p.life_years == 6.0 and p.book.life_years == 6.0 and p.tax.method == "macrs_gds"
    assert p.tax_method is p.tax
    d = DepreciationPolicy()
    assert d.book.method == "straight_line" and d.tax.method == "book"
    assert d.life_years == 6.0 and d.salvage_share == 0.0 and d.method == "straight_line"
    assert d.tax_method == d.book
    assert d.impairment.price_drop_threshold is None


def test_registry_matches_the_domain_module():
    assert dm.METHOD_NAMES == dep.METHOD_NAMES
    assert dm.TAX_METHOD_NAMES == ("book", *dep.METHOD_NAMES)
    assert dm.CHANGE_OF_ESTIMATE_METHODS == dep.CHANGE_OF_ESTIMATE_METHODS
    assert typing.get_args(dm.MacrsConvention) == dep.MACRS_CONVENTIONS
    field = dm.DepreciationMethod.model_fields["recovery_years"].annotation
    assert typing.get_args(field) == dep.MACRS_RECOVERY_YEARS


def test_dumped_policies_validate_again():
    for p in (policy(), policy(book={"method": "custom", "custom_percent": [25, 75]})):
        assert DepreciationPolicy.model_validate(p.model_dump()) == p


def test_earlier_section_is_still_valid_and_means_the_book_method():
    # The [depreciation] table of schema version 1 scenario files.
    p = DepreciationPolicy.model_validate(
        {"method": "straight_line", "life_years": 4.0, "salvage_share": 0.1}
    )
    assert p.book.life_years == 4.0 and p.book.salvage_share == 0.1 and p.tax.method == "book"


def test_frozen_and_strict():
    p = policy()
    with pytest.raises(ValidationError):
        p.in_service_month = 3
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        policy(lifetime=5)
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        policy(**{"book": None, "tax__lifetime": 5})
    assert "description" in DepreciationPolicy.model_json_schema()["properties"]["in_service_month"]


@pytest.mark.parametrize(
    "changes, message",
    [
        (
            {"method": "straigth_line"},
            r"unknown depreciation method 'straigth_line'; valid methods: straight_line, "
            r"declining_balance, fixed_declining_balance, sum_of_years_digits, units_of_production, "
            r"macrs_gds, economic, custom",
        ),
        ({"tax__method": "macrs"}, r"unknown tax depreciation method 'macrs'; valid methods: book"),
        ({"life_years": 0}, r"\nlife_years\n.*at least one month"),
        ({"life_years": -3}, r"at least one month"),
        ({"salvage_share": 1.2}, r"salvage_share\n.*less than 1"),
        ({"salvage_share": -0.1}, r"greater than or equal to 0"),
        (
            {"method": "fixed_declining_balance", "first_year_months": 13},
            r"first_year_months\n.*less than or equal to 12",
        ),
        (
            {"method": "fixed_declining_balance", "first_year_months": 0},
            r"greater than or equal to 1",
        ),
        (
            {"method": "fixed_declining_balance", "life_years": 5.5},
            r"whole number of years",
        ),
        (
            {
                "method": "custom",
                "custom_percent": [50, 40],
                "life_years": _DELETE,
            },
            r"custom_percent sums to 90; expected percentages that sum to 100",
        ),
        (
            {"method": "custom", "custom_percent": [], "life_years": _DELETE},
            r"needs custom_percent",
        ),
        ({"custom_percent": [110, -10]}, r"custom_percent holds -10"),
        (
            {"change_month": 90, "change_life_years": 8},
            r"change_month is 90, beyond the useful life \(last month 72\)",
        ),
        (
            {"in_service_month": 6, "change_month": 4, "change_life_years": 8},
            r"change_month is 4, not after the in-service month 6",
        ),
        (
            {"change_month": 37, "change_life_years": 2},
            r"change_life_years is 2, not longer than the 3 years already in service",
        ),
        ({"change_month": 37}, r"needs both change_month and change_life_years"),
        (
            {
                "method": "macrs_gds",
                "salvage_share": 0.0,
                "change_month": 13,
                "change_life_years": 4,
            },
            r"does not apply to macrs_gds",
        ),
        (
            {"tax__method": "straight_line", "tax__change_month": 13, "tax__change_life_years": 4},
            r"applies to the book method only",
        ),
        ({"tax__salvage_share": 0.1}, r"expected 0 for macrs_gds"),
        ({"tax__recovery_years": 4}, r"recovery_years\n.*3, 5 or 7"),
        ({"tax__convention": "mid-month"}, r"convention\n.*half-year"),
        ({"tax__bonus_share": 1.5}, r"bonus_share\n.*less than or equal to 1"),
        ({"in_service_month": 0}, r"in_service_month\n.*greater than or equal to 1"),
        ({"sale_value_share": -1}, r"sale_value_share"),
        (
            {"market_value_table": [{"month": 24, "share": 0.5}, {"month": 12, "share": 0.7}]},
            r"months must increase",
        ),
        ({"market_value_table": [{"month": 0, "share": 1.5}]}, r"less than or equal to 1"),
        ({"market_value_table": []}, r"uses the market value but .*market_value_table is empty"),
        (
            {
                "method": "economic",
                "market_value_table": [],
                "impairment__price_drop_threshold": None,
            },
            r"method economic with value_source market_value_table needs market_value_table",
        ),
        ({"impairment__price_drop_threshold": 1.0}, r"less than 1"),
        ({"impairment__standard": "gaap"}, r"standard\n.*'us_gaap' or 'ifrs'"),
        ({"factor": 0}, r"factor\n.*greater than 0"),
    ],
)
def test_each_broken_field_is_named(changes, message):
    with pytest.raises(ValidationError, match=message):
        policy(**changes)


@pytest.mark.parametrize("method", dep.METHOD_NAMES)
def test_validated_settings_drive_the_schedules(method):
    book = {"method": method, "life_years": 5.0}
    if method == "custom":
        book = {"method": method, "custom_percent": [40, 30, 20, 10]}
    if method == "macrs_gds":
        book["salvage_share"] = 0.0
    p = policy(book=book)
    settings = method_settings(p.book, p.in_service_month)
    m = np.arange(90)
    value = dep.value_share_from_table([0, 24, 72], [1.0, 0.5, 0.1], m)
    x = dep.schedule(
        settings, [1000.0], m, usage=np.ones((1, 90)), value_curve=value, tables=TABLES
    )
    assert x.sum() == pytest.approx(1000.0 * (1 - p.book.salvage_share))
    assert p.book.effective_life_years >= 4.0


def test_compiled_policies_drive_mixed_schedules():
    policies = [
        policy(),
        policy(book={"method": "declining_balance", "life_years": 4.0, "factor": 1.5}),
        policy(book={"method": "custom", "custom_percent": [50, 50]}, tax={"method": "book"}),
        policy(book={"method": "custom", "custom_percent": [25, 25, 25, 25]}),
        DepreciationPolicy(),
    ]
    arrays = dm.compile_policies(policies)
    book = {k.removeprefix("book."): v for k, v in arrays.items() if k.startswith("book.")}
    assert set(book) == {"method", "usage_driver", "value_source", *dm.METHOD_ARRAY_FIELDS}
    fields = set(dep.MethodSettings.__dataclass_fields__)
    # (the three months place the schedule and its sale: the engine passes them, not the
    # method's fields)
    placed = {"method", "in_service_month", "purchase_month", "disposal_month"}
    assert set(dm.METHOD_ARRAY_FIELDS) | placed == fields
    assert arrays["book.custom_percent"].shape == (5, 4)
    assert arrays["tax.is_book"].tolist() == [False, False, True, False, True]
    assert arrays["tax.method"].tolist()[2] == "custom"  # the book's method stands in
    assert arrays["market_value_months"].shape == (5, 3)
    assert arrays["market_value_shares"][4].tolist() == [1.0, 1.0, 1.0]
    m = np.arange(100)
    kwargs = {k: v for k, v in book.items() if k in dm.METHOD_ARRAY_FIELDS}
    x = dep.schedule_mixed(
        book["method"],
        [1000.0] * 5,
        m,
        in_service_month=arrays["in_service_month"],
        **kwargs,
        tables=TABLES,
    )
    np.testing.assert_allclose(x.sum(axis=1), 1000.0 * (1 - book["salvage_share"]))
    alone = dep.schedule(method_settings(policies[1].book, 1), [1000.0], m, tables=TABLES)
    np.testing.assert_allclose(x[1], alone[0])
    np.testing.assert_allclose(dep.yearly_totals(x[2:3])[0, :2], [500.0, 500.0])
    with pytest.raises(dep.DepreciationError, match="unknown depreciation method 'sl'; valid"):
        dep.schedule_mixed(["sl"], [1.0], m, tables=TABLES)
