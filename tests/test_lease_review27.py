"""A lender's credit officer's review of `econ lease-vs-own` and `econ loan`: convertible notes
settled in shares are a cost of owning, the projection's warnings reach the reader, the after-tax
cost of debt discounts every debt-like flow (Brealey, Myers & Allen ch. 25.4-25.5), a lease term
longer than the service is said, and contradictory loan and renter options are refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

from econ import load_scenario, project
from econ.cli import main
from econ.lease import shares_settling_debt_usd
from tests.conftest import SCENARIOS

STACK = next(p for p in SCENARIOS if p.stem == "deepseek-r1-gb200-nvl72-capital-stack")
SEED = next(p for p in SCENARIOS if p.stem == "deepseek-r1-gb200-nvl72")


def converting_stack(tmp_path, settlement="physical", growth=0.5):
    """The capital stack with its convertible notes maturing in month 36 and the share price
    growing `growth` a year from 100 USD: above the 125 USD conversion price then (at 50%,
    337.50 USD), so the notes convert."""
    text = STACK.read_text()
    assert text.count("maturity_month = 84\n") == 1  # the convertible notes'
    terms = f'share_price_growth_annual = {growth}\nsettlement = "{settlement}"\n'
    path = tmp_path / f"stack-{settlement}-{growth}.toml"
    path.write_text(text.replace("maturity_month = 84\n", "maturity_month = 36\n" + terms))
    return path


def lease_json(capsys, *args):
    assert main(["lease-vs-own", *map(str, args), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


# --- 1. Convertible notes repaid in shares are a cost of owning --------------------------------


def test_the_shares_that_settle_convertible_notes_are_a_cost_of_owning(tmp_path, capsys):
    # Reviewer's repro: physical settlement repays the 353,560 USD face (10% of capex 3,535,600)
    # with 2,200 new shares worth 742,476 USD, and owning cost 4,107,175 (break-even 1.8339)
    # against 4,358,832 (1.9505) for the same notes not converting: the face repaid in shares
    # counted as free. By hand: conversion price K = 100 x 1.25 = 125, share price in month 36
    # S = 100 x 1.5^3 = 337.50, face / K = 2,828.48 shares delivered; the capped call (cap 200)
    # returns (200 - 125) x 2,828.48 / 337.50 = 628.55 of them: net 2,199.93 shares x 337.50 =
    # 742,476 USD, a cost of the debt in month 36, discounted at 12% a year: 1.12^-3.
    face = 0.10 * 3_535_600.0
    gross = face / 125.0
    net = gross - (200.0 - 125.0) * gross / 337.5
    value = net * 337.5
    assert value == pytest.approx(742_476.0, abs=0.5)
    path = converting_stack(tmp_path)
    projection = project(load_scenario(path))
    settled = shares_settling_debt_usd(projection)
    assert settled[0, 36] == pytest.approx(value, rel=1e-12)
    assert np.count_nonzero(settled) == 1
    physical = lease_json(capsys, path, "--price", "4")
    assert physical["settled_in_shares_usd"] == pytest.approx(value, rel=1e-12)
    # the same stack, owning as before less that cost (the reviewer's 4,107,175)
    reviewed = 4_107_175.385
    assert physical["pv_cost_own_usd"] == pytest.approx(reviewed + value / 1.12**3, abs=0.01)
    assert physical["breakeven_usd_per_gpu_hour"] > 1.8339 + 0.2
    # Net share settlement pays the face in cash and only the 388,916 USD above it in shares:
    # the same notes cost the owner the same, however they settle.
    net_share = lease_json(capsys, converting_stack(tmp_path, "net_share"), "--price", "4")
    assert net_share["settled_in_shares_usd"] == pytest.approx(value - face, rel=1e-9)
    assert net_share["pv_cost_own_usd"] == pytest.approx(physical["pv_cost_own_usd"], rel=1e-12)
    # notes that do not convert (the share price flat) are repaid in cash, at face
    flat = lease_json(capsys, converting_stack(tmp_path, growth=0.0), "--price", "4")
    assert flat["settled_in_shares_usd"] == 0.0


def test_the_table_says_what_the_shares_settling_debt_are_worth(tmp_path, capsys):
    assert main(["lease-vs-own", str(converting_stack(tmp_path)), "--price", "4"]) == 0
    out = capsys.readouterr().out
    assert "with the shares that settle convertible notes, worth 742,476 USD when issued" in out


def test_the_projections_warnings_reach_the_reader(tmp_path, capsys):
    # Reviewer's finding: econ project gives 11 warnings on the converting stack (the covenant
    # breach, the conversion's dilution...), lease-vs-own none.
    path = converting_stack(tmp_path)
    expected = project(load_scenario(path)).warnings[0]
    assert len(expected) >= 10
    assert main(["lease-vs-own", str(path), "--price", "4"]) == 0
    said = capsys.readouterr()
    name = load_scenario(path).name
    for warning in expected:
        assert f"warning [{name}]: {warning}" in said.err
    assert "warning" not in said.out
    printed = lease_json(capsys, path, "--price", "4")
    assert printed["warnings"] == expected
    assert any("covenant breached" in w for w in printed["warnings"])
