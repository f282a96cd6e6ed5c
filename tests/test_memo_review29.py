"""A lender's credit officer on the memo (review 29).

1. A Monte Carlo memo whose --dist options were not given in alphabetical order failed `econ
   verify` untouched (69 of 241 figures differ for the seed with utilization.share before
   market.price_decline_annual): each distribution draws from the seed by its position, and the
   stamp keeps the distributions with its JSON keys sorted, so verify drew them in another order.
   The memo now draws them by path, whatever the order given.
"""

from __future__ import annotations

import json

from econ.cli import main
from tests.test_memo import SEED, _parsed, _verify

DISTS = {
    "utilization.share": "uniform(0.5,0.8)",
    "market.price_decline_annual": "uniform(0.2,0.4)",
}


def _mc_memo(tmp_path, name, order):
    out = tmp_path / f"{name}.html"
    args = ["memo", str(SEED), "--out", str(out), "--montecarlo", "12", "--seed", "3"]
    for path in order:
        args += ["--dist", f"{path}={DISTS[path]}"]
    assert main(args) == 0
    return out


def test_a_montecarlo_memo_verifies_whatever_the_order_of_its_distributions(tmp_path, capsys):
    given = _mc_memo(tmp_path, "given", list(DISTS))  # (not alphabetical)
    code, report = _verify(capsys, given)
    assert code == 0, report
    swapped = _mc_memo(tmp_path, "swapped", sorted(DISTS))
    figures = [json.loads(_parsed(p).stamp_text)["figures"] for p in (given, swapped)]
    assert figures[0] == figures[1]
