"""A scenario with thousands of problems lists the first PROBLEM_LINES_LIMIT and counts the rest
(a security review: 20,000 unknown keys printed 20,000 lines, 3.5 MB, on the command line and
in the app, whose page then took 16 s)."""

from __future__ import annotations

import pytest

from econ.scenario import ScenarioError, read_toml, validate_dict
from econ.text import PROBLEM_LINES_LIMIT, problem_lines
from econ.ui import state
from tests.conftest import ROOT

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"


def _with_unknown_keys(count: int) -> dict:
    data = read_toml(SEED)
    data["fleet"].update({f"bad{i}": 1 for i in range(count)})
    return data


@pytest.mark.parametrize(("count", "lines"), [(3, 3), (PROBLEM_LINES_LIMIT, 20), (3000, 21)])
def test_the_command_line_lists_at_most_the_limit(count, lines):
    with pytest.raises(ScenarioError) as caught:
        validate_dict(_with_unknown_keys(count), file="many.toml")
    said = str(caught.value).splitlines()
    assert len(said) == lines and said[0].startswith("many.toml: fleet.bad0 = 1: unknown field")
    if count > PROBLEM_LINES_LIMIT:
        assert (
            said[-1].strip()
            == f"... and {count - PROBLEM_LINES_LIMIT:,} more problems (fix these first)"
        )
        assert said[-2].strip().startswith(f"fleet.bad{PROBLEM_LINES_LIMIT - 1} = 1")


def test_the_app_lists_at_most_the_limit():
    message = state.validate(_with_unknown_keys(3000)).message
    said = message.splitlines()
    assert len(said) == PROBLEM_LINES_LIMIT + 1 and all(line.startswith("- ") for line in said)
    assert said[-1] == "- ... and 2,980 more problems (fix these first)"


def test_problem_lines_keeps_a_short_list_as_it_is():
    assert problem_lines(["a", "b"], limit=2) == ["a", "b"]
    assert problem_lines(["a", "b", "c"], limit=2) == [
        "a",
        "b",
        "... and 1 more problem (fix these first)",
    ]
