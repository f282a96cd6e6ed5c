"""CLI subcommands by feature. Each module here defines `register(commands)`, which adds its
subparsers to argparse's subparsers object and sets `run=callable(args) -> int` on each. The CLI
discovers the modules, so a feature adds a command without editing econ/cli.py.

The CLI imports every module here before it parses the arguments, so a module imports at its top
only what building its parsers needs (the standard library, econ.errors, small constants); the
library parts that do the work load inside the functions that run the command, or through `lazy`.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType

from econ.bounds import BOUND_WORDS, expected_within, within_bounds
from econ.errors import InputError
from econ.text import clipped

EXAMPLES_HEADING = "examples:"


class _KeepExamples(argparse.HelpFormatter):
    """argparse's formatter, leaving an examples epilog's lines as they are (one command a line,
    ready to paste) and wrapping the description as usual."""

    def _fill_text(self, text, width, indent):
        if text.startswith(EXAMPLES_HEADING):
            return "\n".join(indent + line for line in text.splitlines())
        return super()._fill_text(text, width, indent)


def examples(*commands: str) -> dict:
    """`add_parser` keywords ending the command's help with `commands`, one a line, kept as
    written (argparse reflows every other text); a test runs each from the repository's root, so
    they work when pasted there."""
    lines = "\n".join(f"  {command}" for command in commands)
    return {"epilog": f"{EXAMPLES_HEADING}\n{lines}", "formatter_class": _KeepExamples}


SCENARIO_HELP = "scenario TOML file, the name of a ready-made one, or library:NAME[@VERSION]"
"""What a command's scenario argument takes (`scenario_path`)."""
SCENARIO_FILE_HELP = "scenario TOML file, or the name of a ready-made one"
"""What `econ library save` takes: a file to store (a stored version is saved again by restore)."""
SCENARIO_FILES_HELP = "scenario TOML files, names of ready-made ones, or library:NAME[@VERSION]"
"""The same for several scenarios."""


def scenario_path(name: str) -> str | os.PathLike:
    """The scenario a command's argument names: a file, or `library:NAME[@VERSION]`, as given;
    a bare name that is no file here (no folder, no suffix) is the ready-made scenario of that
    name (models/scenarios/NAME.toml), so a file named NAME in the working folder wins; NAME.toml
    there does not, and a note on stderr says which was read and how to read the other. Every
    command that takes a scenario reads its argument so (`econ project deepseek-r1-gb200-nvl72`
    as `econ export deepseek-r1-gb200-nvl72`)."""
    from econ.catalog import ready_made_path

    found = ready_made_path(name)
    if found is None:
        return name
    path = Path(name)
    if path.with_name(f"{path.name}.toml").is_file():
        import sys

        from econ.text import printable

        local = f"./{name}.toml"
        note = (
            f"note: {name} is the ready-made scenario {found}, not {local} in this folder; "
            f"give {local} to read that one"
        )
        print(printable(note, line=True), file=sys.stderr)
    return found


def check_distinct_names(files: Sequence[str], scenarios: Sequence) -> None:
    """InputError when two of the scenarios given share a name: names are the keys of a
    projection's output (one summary row per name, the monthly schedule by name and month), so
    two rows with one key would read as one scenario twice, or overwrite each other."""
    seen: dict[str, str] = {}
    for path, scenario in zip(files, scenarios, strict=True):
        file, first = str(path), seen.get(scenario.name)
        if first is None:
            seen[scenario.name] = file
        elif first == file:
            raise InputError(
                f"{file} is given twice; names are the keys of the output (its rows, the "
                "monthly schedule's scenario and month): expected each scenario file once"
            )
        else:
            raise InputError(
                f"{file}: name = {scenario.name!r} is also the name of the scenario in "
                f"{first}; names are the keys of the output (its rows, the monthly schedule's "
                "scenario and month): expected distinct names (set `name` in one of the files)"
            )


class LazyHelp(str):
    """A help string whose `%(NAME)s` fields are read from a library module only when argparse
    prints the help, as LazyChoices does for choices: `loaders` maps NAME to a function giving
    its text (`LazyHelp("... (default: %(cases)s)", cases=lambda: build.default_cases_text())`),
    so the help says what the library does without the parser importing it."""

    _loaders: dict[str, Callable[[], str]]

    def __new__(cls, template: str, **loaders: Callable[[], str]) -> LazyHelp:
        text = super().__new__(cls, template)
        text._loaders = loaders
        return text

    def __mod__(self, params):
        values = {name: load() for name, load in self._loaders.items()}
        return str(self) % {**params, **values}


class lazy:  # noqa: N801 - stands in for a module name, e.g. `sim = lazy("...simulator")`
    """A module imported on first attribute access, so `sim.simulate_curve(...)` reads as usual."""

    def __init__(self, name: str) -> None:
        self._name = name

    def _module(self) -> ModuleType:
        return importlib.import_module(self._name)

    def __getattr__(self, attr: str):
        return getattr(self._module(), attr)

    def __repr__(self) -> str:
        return f"lazy({self._name!r})"


class LazyChoices(Sequence):
    """Choices of an argument, read from a library module only when argparse needs them.

    argparse reads choices to check a value or to print help, not when the parser is built, as
    long as the argument has a `metavar` (otherwise it lists the choices in the usage line). In a
    help string, `%(choices)s` lists them; `str()` gives the same list for other help fields.
    """

    def __init__(self, load: Callable[[], Iterable[str]], first: Sequence[str] = ()) -> None:
        self._load = load
        self._first = tuple(first)
        self._values: tuple[str, ...] | None = None

    def _all(self) -> tuple[str, ...]:
        if self._values is None:
            self._values = (*self._first, *self._load())
        return self._values

    def __getitem__(self, index):
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())

    def __contains__(self, value) -> bool:
        return value in self._all()

    def __str__(self) -> str:
        return ", ".join(self._all())


def add_format(parser, choices: Sequence[str] = ("table", "json", "csv")) -> None:
    """The `--format` option of a command that prints a table by default."""
    parser.add_argument(
        "--format",
        choices=tuple(choices),
        default="table",
        help="what to print: %(choices)s (default %(default)s)",
    )


def add_overrides(parser, help: str, dest: str = "overrides") -> None:
    """The `--set PATH=VALUE` option (repeatable): fields of the scenario overridden by dotted
    path, each value read as TOML; a path set twice is a usage error (`_SetOnce`)."""
    parser.add_argument(
        "--set", dest=dest, action=_SetOnce, default=[], metavar="PATH=VALUE", help=help
    )


class _SetOnce(argparse._AppendAction):
    """argparse's `append` for --set, refusing a path given twice (the last value would
    silently win: `--set utilization.share=0.5 --set utilization.share=0.6` projected 0.6) and
    one with no `=VALUE`: both usage errors."""

    def __call__(self, parser, namespace, values, option_string=None):
        if "=" not in values:  # a usage error (exit 2), before any file is read
            parser.error(
                f"{option_string} {values!r} gives no value; expected PATH=VALUE, such as "
                f"{option_string} utilization.share=0.7"
            )
        path = values.split("=", 1)[0].strip()
        if path in (v.split("=", 1)[0].strip() for v in getattr(namespace, self.dest) or ()):
            parser.error(f"{option_string} {path} is given twice; expected each field once")
        super().__call__(parser, namespace, values, option_string)


def warning_lines(records) -> list[str]:
    """Each scenario's warnings, one line each: "warning [NAME]: ...", `printable` (a warning may
    quote text of a file: a benchmark file's column names)."""
    from econ.text import printable

    return [
        printable(f"warning [{record['name']}]: {warning}")
        for record in records
        for warning in record["summary"]["warnings"]
    ]


def say_warnings(lines: Iterable[str]) -> None:
    """Print warnings on stderr, one per line, worded as the command's table words them
    (`warning [NAME]: ...`, `warning: ...`), `printable`: a warning may quote text of a file
    someone else wrote (a benchmark file's column names), which must not reach a terminal raw.

    For outputs that have no place of their own for them (CSV): the warnings say why a figure is
    empty, so they must reach the reader, and stdout must hold nothing but the data.
    """
    import sys

    from econ.library import hide_credentials
    from econ.text import printable

    for line in lines:
        print(printable(hide_credentials(line)), file=sys.stderr)


def say_wrote(written: Iterable[os.PathLike]) -> None:
    """Print on stderr the files a command wrote ("wrote r.csv, r.summary.csv") and, where the
    write removed the files an earlier output of that name left and this one does not replace
    (`econ.files.Written.removed`: a capital stack's tranche tables), those too ("removed
    r.tranches.csv, r.tranches.summary.csv (from another output of this name)")."""
    import sys

    print("wrote " + ", ".join(str(p) for p in written), file=sys.stderr)
    removed = getattr(written, "removed", ())
    if removed:
        listed = ", ".join(str(p) for p in removed)
        print(f"removed {listed} (from another output of this name)", file=sys.stderr)


def say_error(error: BaseException | str) -> None:
    """Print an error on stderr as `error: MESSAGE`, `printable`: the message may quote a file's
    keys, a column name, a file name (each message escapes what it quotes; this is the net); and
    with any password it quotes hidden (`econ.library.hide_credentials`): a library URL typed
    where a name or a file belongs is quoted back as the name or file not found."""
    import sys

    from econ.library import hide_credentials
    from econ.text import printable

    print(f"error: {printable(hide_credentials(str(_what_it_is(error))))}", file=sys.stderr)


def _what_it_is(error: BaseException | str) -> BaseException | str:
    """For a scenario file that is no TOML but a benchmark result (`econ project run.csv`), what
    the file is and where it goes, in place of the TOML parser's complaint about its first line;
    `error` as it is otherwise. The file is recognized as `econ throughput import` recognizes
    one (`detect_format`), and only its format is named, never its content."""
    import sys

    # A ScenarioError exists only once its module is loaded: an error of a command that reads
    # no scenario does not load the scenario package for this.
    errors = sys.modules.get("econ.scenario.errors")
    if errors is None or not isinstance(error, errors.ScenarioError):
        return error
    file = error.file
    if not (error.expected.startswith("malformed TOML") and file and os.path.isfile(file)):
        return error
    from econ.throughput.importers import FORMATS, detect_format
    from econ.throughput.importers._common import read_source

    try:
        kind = FORMATS[detect_format(read_source(file))][0]
    except (InputError, OSError, ValueError, RecursionError):  # none: the TOML parser's words
        return error
    import shlex

    from econ.text import PATH_LIMIT

    shown = clipped(file, limit=PATH_LIMIT)
    command = f"econ throughput import {shlex.quote(shown)} --out curve.csv"
    return (
        f"{shown}: a benchmark result ({kind}), not a scenario: a scenario is a TOML file (econ "
        "schema describes its fields); name this file in a scenario's throughput.measured.curve "
        f"(relative to the scenario's folder), or read it with `{command}`"
    )


class OptionValueError(Exception):
    """A number that an option's `Number` type refused. econ.cli's parser turns it into an
    InputError naming the option (exit 3): the text is a number, but not one the option takes.
    Not a ValueError, which argparse would report as a usage error (exit 2)."""

    def __init__(self, text: str, expected: str) -> None:
        super().__init__(f"{text}: expected {expected}")
        self.text, self.expected = text, expected


class Number:
    """argparse type: a finite float (or a whole number, `kind=int`) within bounds.

    Text that is not a number stays argparse's usage error (exit 2), and a number is written as
    index files write one (`econ.index_files.cell_number`): ASCII digits, no underscore (float()
    reads "8_0" as 80, "٨٠" and "８０" too). NaN, infinity and numbers out of bounds raise
    OptionValueError (exit 3, naming the option and the value as typed: "1e-400", not the 0 it
    rounds to). Bounds are `ge`, `gt`, `le`
    and `lt`, or `field="module:Model.name"` for the bounds a scenario section declares for a
    field (`econ.scenario.<module>`, read when the option is given, so start-up stays light);
    `what` and `unit` word the expectation, e.g. "a rate from 0 to 1 [1/year]" (or `expected`
    says it all). `whole` takes any number but refuses one that is not whole as out of bounds
    (exit 3, naming the option: "--gpus = 2.5"), and returns it as int; `kind=int` does the
    same (NaN, infinity and 2.5 exit 3 there too, not argparse's "invalid int value"). Finite bounds
    also keep the computation inside floating point (1e308 USD overflows a loan schedule).
    """

    def __init__(
        self,
        kind: type = float,
        *,
        field: str | None = None,
        what: str = "a number",
        unit: str = "",
        expected: str | None = None,
        whole: bool = False,
        **bounds: float,
    ) -> None:
        unknown = set(bounds) - set(BOUND_WORDS)
        if unknown:
            raise TypeError(f"Number: unknown bounds {sorted(unknown)}; expected ge, gt, le, lt")
        self.kind, self.field, self.what, self.unit = kind, field, what, unit
        self._expected = expected
        self._bounds = bounds
        self.whole = whole
        self.__name__ = kind.__name__  # argparse's "invalid float value: 'x'"

    def bounds(self) -> dict[str, float]:
        """The bounds: the field's, then the ones given here (which win)."""
        found: dict[str, float] = {}
        if self.field:
            from econ.scenario.section import field_bounds

            module, model = self.field.split(":")
            model, name = model.split(".")
            section = getattr(importlib.import_module(f"econ.scenario.{module}"), model)
            found.update(field_bounds(section, name))
        found.update(self._bounds)
        return found

    def expected(self) -> str:
        if self._expected:
            return self._expected
        whole = self.kind is int or self.whole
        return expected_within(self.bounds(), self.what, self.unit, whole=whole)

    def __call__(self, text: str):
        from econ.index_files import cell_number

        whole_only = self.whole or self.kind is int
        try:
            value = cell_number(text, self.kind)  # not a number: argparse's usage error
        except ValueError:
            if self.kind is not int:
                raise
            # a whole-number option given nan, inf or 2.5: refused by name as `whole` refuses
            # them (exit 3), and 1e3 taken as 1000
            value = cell_number(text, float)
        typed = clipped(text.strip())
        if not math.isfinite(value):
            expected = self.expected()  # (said to be finite, unless it says so already)
            finite = expected if "finite" in expected else f"a finite number ({expected})"
            raise OptionValueError(typed, finite)
        if whole_only and not float(value).is_integer():
            expected = self.expected()  # (said to be whole, unless it says so already)
            raise OptionValueError(
                typed, expected if "whole" in expected else f"a whole number ({expected})"
            )
        if not within_bounds(value, self.bounds()):
            raise OptionValueError(typed, self.expected())
        return int(value) if whole_only else value

    def __repr__(self) -> str:
        return f"Number({self.kind.__name__}, {self.expected()!r})"
