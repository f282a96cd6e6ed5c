"""A finance team's review of lease versus own: a last renewal cut short by the end of service is
said as a term longer than the service is."""

from __future__ import annotations

import json

from econ.cli import main
from econ.lease import term_warning
from tests.conftest import SCENARIOS

SEED = next(p for p in SCENARIOS if p.stem == "deepseek-r1-gb200-nvl72")


# --- 1. A last renewal cut short by the end of service is warned of ---------------------------


def test_a_last_renewal_cut_short_is_warned_of():
    # 72 months in service (1-72): 60-month terms renew in month 61 for 12 of their 60 months.
    text = term_warning(60, 1, 72)
    assert text.startswith("the last 60-month contract, renewed in month 61, runs 12 of its 60")
    assert "cut at month 72 and the rent of its other 48 months" in text
    assert "which a lessee bound to the term would owe, is not counted" in text
    assert term_warning(48, 1, 72).startswith("the last 48-month contract, renewed in month 49")
    # a term that divides the months in service cuts no contract; a longer one is said as before
    assert term_warning(36, 1, 72) is None
    assert term_warning(24, 1, 72) is None
    assert term_warning(72, 1, 72) is None
    assert term_warning(100, 1, 72).startswith("the 100-month term is longer than the 72 months")


def test_the_command_says_a_renewal_is_cut(capsys):
    # Reviewer's repro: --term-months 60 on the seed printed no word that the renewal in month
    # 61 is cut after 12 of its 60 months (48 x 72 GPUs x 4 USD x 730 h = 10,091,520 USD of rent
    # a lessee bound to the term would owe, not counted).
    args = ["lease-vs-own", str(SEED), "--price", "4", "--term-months", "60"]
    assert main([*args, "--upfront-share", "0.25"]) == 0
    err = capsys.readouterr().err
    assert "warning: the last 60-month contract, renewed in month 61, runs 12 of its 60" in err
    assert main([*args, "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert any("renewed in month 61" in w for w in printed["warnings"])
    assert main(["lease-vs-own", str(SEED), "--price", "4", "--term-months", "36"]) == 0
    assert "contract" not in capsys.readouterr().err
