"""CLI subcommands by feature. Each module here defines `register(commands)`, which adds its
subparsers to argparse's subparsers object and sets `run=callable(args) -> int` on each. The CLI
discovers the modules, so a feature adds a command without editing econ/cli.py.

The CLI imports every module here before it parses the arguments, so a module imports at its top
only what building its parsers needs (the standard library, econ.errors, small constants); the
library parts that do the work load inside the functions that run the command, or through `lazy`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from types import ModuleType


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


def say_warnings(lines: Iterable[str]) -> None:
    """Print warnings on stderr, one per line, worded as the command's table words them
    (`warning [NAME]: ...`, `warning: ...`).

    For outputs that have no place of their own for them (CSV): the warnings say why a figure is
    empty, so they must reach the reader, and stdout must hold nothing but the data.
    """
    import sys

    for line in lines:
        print(line, file=sys.stderr)
