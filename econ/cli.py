"""Command line: parse arguments, call the library, print or write. No formulas live here.

Exit codes: 0 success, 2 usage error, 3 invalid input (scenario, data file or output path), with a
message naming the file, the field, the value and what was expected, and no traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import pkgutil
import subprocess
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from econ import __version__, commands
from econ.commands import Number, OptionValueError, add_format, add_overrides, examples
from econ.errors import InputError

if TYPE_CHECKING:
    from econ.engine import Projection

# Start-up is most of a one-off command's time, so nothing heavy loads before the arguments are
# parsed: each command imports the library parts it uses when it runs (pandas, the pydantic models
# and the engine for `project`; never scipy, Dask, Streamlit or SQLAlchemy), and the modules in
# econ/commands/ register their parsers without importing their work (see econ/commands/__init__.py).

EXIT_OK, EXIT_USAGE, EXIT_INVALID, EXIT_INTERRUPTED = 0, 2, 3, 130
APP_HOST = "127.0.0.1"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit code. Output goes through `_Stdout` for the run, so a failed
    write to standard output (a full disk, a closed stdout) is exit 3 with one line, a closed
    pipe (`| head`) a quiet 0, and Ctrl-C in any command 130 with one line (the batch commands
    catch it themselves, to say which chunks were kept)."""
    stdout = sys.stdout
    sys.stdout = _Stdout(stdout)
    try:
        try:
            return _main(argv)
        finally:  # buffered output meets a full disk here (also after --help, --version)
            sys.stdout.flush()
    except BrokenPipeError:  # e.g. `econ project ... | head`
        _discard(stdout)
        return EXIT_OK
    except _OutputError as exc:
        _discard(stdout)
        print(f"error: cannot write to standard output: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except KeyboardInterrupt:
        print("interrupted (Ctrl-C)", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        sys.stdout = stdout


def _main(argv: Sequence[str] | None) -> int:
    argv, allowed = _take_allow_paths(list(sys.argv[1:] if argv is None else argv))
    argv = _library_first(argv)
    parser = _parser(features=_command_of(argv) not in BUILT_IN)
    try:
        args, extras = parser.parse_known_args(argv)
        if extras:  # the usage of the (sub)command they follow, not the top level's
            _innermost(parser, args).error(f"unrecognized arguments: {' '.join(extras)}")
    except InputError as exc:  # a number an option refuses (econ.commands.Number)
        commands.say_error(exc)
        return EXIT_INVALID
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        with _allowing(allowed), _using_library(args.library):  # library:NAME uses it
            return args.run(args)
    except InputError as exc:
        commands.say_error(exc)
        return EXIT_INVALID


def _innermost(parser: argparse.ArgumentParser, args) -> argparse.ArgumentParser:
    """The parser of the deepest (sub)command `args` were parsed by (`econ market list` for
    `econ market list --bogus`)."""
    while True:
        subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(args, subcommands[0].dest, None) if subcommands else None
        if name not in (subcommands[0].choices if subcommands else {}):
            return parser
        parser = subcommands[0].choices[name]


class _OutputError(Exception):
    """A write to standard output failed (not an OSError, which a command may catch for its
    own files)."""


class _Stdout:
    """Standard output for one run: writes and flushes that fail raise _OutputError with the
    reason in words; a closed stdout (None: the process started with fd 1 closed) refuses
    output instead of dropping it, as print() would."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if self._stream is None:
            raise _OutputError("it is closed")
        return self._call(self._stream.write, text)

    def flush(self) -> None:
        if self._stream is not None:
            self._call(self._stream.flush)

    def isatty(self) -> bool:
        return self._stream is not None and self._stream.isatty()

    def __getattr__(self, name: str):
        return getattr(self._stream, name)  # a closed stdout has none: AttributeError

    @staticmethod
    def _call(method, *args):
        try:
            return method(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            from econ.files import reason

            raise _OutputError(reason(exc)) from None


def _discard(stream) -> None:
    """Point stdout's file descriptor at /dev/null, so that the interpreter's last flush of
    what could not be written does not fail again (a second message, exit code 120)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)
    except (AttributeError, OSError, ValueError):  # no file descriptor (captured, closed)
        pass


def _using_library(url: str | None):
    """`econ.library.using_url(url)`, loading the library module only if --library is given
    (a library:NAME argument loads it when it is read); an empty one is refused there."""
    if url is None:
        return contextlib.nullcontext()
    from econ.library import using_url

    return using_url(url)


def _allowing(folders: list[str]):
    """`econ.scenario.paths.allow_paths(folders)`, loading the scenario package only if needed;
    InputError for a value that is not an existing folder: an empty one would allow the current
    folder, a misspelt one nothing, both without a word."""
    if not folders:
        return contextlib.nullcontext()
    from econ.text import PATH_LIMIT, clipped

    for folder in folders:
        if not folder:
            raise InputError(
                f"--allow-paths {folder!r}: an empty value; expected a folder (an empty one "
                "would allow the current folder; write . to mean it)"
            )
        if not os.path.isdir(folder):
            what = "is not a folder" if os.path.exists(folder) else "does not exist"
            raise InputError(
                f"--allow-paths {clipped(folder, limit=PATH_LIMIT)}: {what}; expected an existing "
                "folder that scenario paths may point into"
            )
    from econ.scenario.paths import allow_paths

    return allow_paths(folders)


def _taken(argv: list[str], option: str, metavar: str) -> tuple[list[str], list[str]]:
    """argv without every `OPTION VALUE` (or `OPTION=VALUE`), wherever it stands before a `--`,
    and the values taken, in order."""
    rest, values = [], []
    items = iter(argv)
    for item in items:
        if item == "--":
            rest += [item, *items]
            break
        if item == option:
            value = next(items, None)
            if value is None or value.startswith("-"):  # as argparse reads an option's value
                _parser(features=False).error(
                    f"argument {option}: expected one argument ({metavar})"
                )
            values.append(value)
        elif item.startswith(f"{option}="):
            values.append(item.split("=", 1)[1])
        else:
            rest.append(item)
    return rest, values


def _take_allow_paths(argv: list[str]) -> tuple[list[str], list[str]]:
    """Remove every `--allow-paths DIR` (before or after the command) from argv; return both.

    The option applies to every command that reads scenario files, so it is taken out before
    argparse sees the command's own options.
    """
    return _taken(argv, "--allow-paths", "DIR")


def _library_first(argv: list[str]) -> list[str]:
    """argv with every `--library URL` (or `--library=URL`) moved before the command: the option
    is the command line's, and `econ project library:X --library URL` was a usage error
    ("unrecognized arguments") where `econ library save FILE --library URL` worked."""
    rest, urls = _taken(argv, "--library", "URL")
    return [part for url in urls for part in ("--library", url)] + rest


BUILT_IN = ("project", "validate", "schema", "app")
"""Commands defined in this module; the others come from the modules in econ/commands/."""


def _command_of(argv: Sequence[str]) -> str | None:
    """The command argv names: its first argument that is neither an option nor the value of
    --library (None if there is none, or if the top-level help or version is asked first)."""
    items = iter(argv)
    for item in items:
        if item in ("-h", "--help", "--version", "--"):
            return None
        if len(item) > 2 and "--library".startswith(item):  # argparse takes --lib for --library
            next(items, None)
        elif not item.startswith("-"):
            return item
    return None


class _StoreOnce(argparse._StoreAction):
    """argparse's `store`, refusing an option given twice (a usage error, exit 2): the second
    would silently replace the first (`econ export --csv a.csv --csv b.csv` wrote b.csv only)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string is not None and getattr(self, "_namespace", None) is namespace:
            parser.error(f"{option_string} is given twice; expected it once")
        self._namespace = namespace
        super().__call__(parser, namespace, values, option_string)


class _Parser(argparse.ArgumentParser):
    """argparse, reading "-1e6" (and "-inf", "-nan") as a number: Python 3.11's argparse takes a
    negative number in scientific notation for an option ("expected one argument"), though
    "-1000000" works; a number an option's `Number` type refuses is invalid input (exit 3,
    naming the option), not a usage error; and an option that takes one value is refused when
    given twice (`_StoreOnce`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        import re

        self.register("action", "store", _StoreOnce)
        self.register("action", None, _StoreOnce)
        self._negative_number_matcher = re.compile(
            r"^-((\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|inf|infinity|nan)$", re.IGNORECASE
        )

    def _get_value(self, action, arg_string):
        try:
            return super()._get_value(action, arg_string)
        except OptionValueError as exc:
            option = max(action.option_strings, key=len, default=action.metavar or action.dest)
            raise InputError(f"{option} = {exc.text}: expected {exc.expected}") from None

    def _check_value(self, action, value):
        # A misspelt command or choice names the closest ones first ("econ projcet": did you
        # mean 'project'?), then all of them as argparse does.
        if action.choices is not None and value not in action.choices:
            from econ.text import did_you_mean

            hint = did_you_mean(str(value), map(str, action.choices))
            if hint:
                choices = ", ".join(map(repr, action.choices))
                message = f"invalid choice: {value!r} ({hint}choose from {choices})"
                raise argparse.ArgumentError(action, message)
        super()._check_value(action, value)

    def error(self, message: str):
        # argparse quotes arguments back ("unrecognized arguments: --library URL"): no password
        from econ.library import hide_credentials

        action = self._missing_action(message)
        if action is not None:  # `econ throughput` alone: its help, as `econ` alone prints
            self.print_help(sys.stderr)
            names = list(action.choices)
            listed = f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else names[0]
            article = "an" if action.metavar[0] in "AEIOU" else "a"
            self.exit(2, f"{self.prog}: error: expected {article} {action.metavar}: {listed}\n")
        super().error(hide_credentials(message))

    def _missing_action(self, message: str):
        """The subcommands' action `message` says is missing (`econ market` without one), else
        None."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction) and action.required:
                missing = message.partition("the following arguments are required: ")[2]
                if action.metavar in missing.split(", "):
                    return action
        return None


def _parser(features: bool = True) -> argparse.ArgumentParser:
    """The command line's parser; `features=False` leaves out the commands of econ/commands/
    (importing them all is a large part of a one-off command's start-up), for a command defined
    here."""
    parser = _Parser(
        prog="econ",
        description="GPU inference economics: cost per token and asset-life projections.",
    )
    parser.add_argument("--version", action="version", version=f"econ {__version__}")
    parser.add_argument(
        "--allow-paths",
        metavar="DIR",
        action="append",
        help="let paths inside scenario files (throughput.measured.curve) point into DIR as well "
        "as the scenario's own folder; may be repeated, before or after the command",
    )
    parser.add_argument(
        "--library",
        metavar="URL",
        help="scenario library for library:NAME[@VERSION] arguments (default: ECON_LIBRARY, "
        "else the per-user SQLite file); sqlite:///PATH.db or postgresql+psycopg://USER@HOST/DB",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = subparsers.add_parser(
        "project",
        help="project scenarios and print or write the results",
        **examples(
            "econ project models/scenarios/deepseek-r1-gb200-nvl72.toml",
            "econ project models/scenarios/deepseek-r1-gb200-nvl72.toml "
            "--set market.price_usd_per_mtok=0.4 --format json",
        ),
    )
    p.add_argument("files", nargs="+", metavar="FILE", help=commands.SCENARIO_FILES_HELP)
    add_overrides(
        p,
        "override a field by dotted path (TOML value; repeat for several), e.g. "
        "capex.system_price_usd=2900000, or to price per GPU instead "
        "capex.system_price_usd=none with capex.gpu_price_usd=35000",
    )
    p.add_argument(
        "--hold-debt",
        action="store_true",
        help="hold the loan sized for each scenario as written (before --set), instead of "
        "sizing it again for the overrides: as `econ sweep --hold-debt` and an edited workbook "
        "hold it",
    )
    add_format(p)
    p.add_argument(
        "--out",
        metavar="PATH",
        help="write the monthly schedule and summary (.csv, .parquet, .xlsx) or the JSON "
        "summary (.json); CSV and Parquet also write, for a capital stack's tranches, each "
        "tranche's monthly lines (<stem>.tranches<suffix>) and their summary "
        "(<stem>.tranches.summary<suffix>)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="overwrite existing output files, and remove the tranche files an earlier output "
        "of the same name left where these scenarios have no tranches",
    )
    p.set_defaults(run=_cmd_project)

    v = subparsers.add_parser(
        "validate",
        help="check scenario files without projecting them",
        **examples("econ validate models/scenarios/*.toml"),
    )
    v.add_argument("files", nargs="+", metavar="FILE", help=commands.SCENARIO_FILES_HELP)
    v.set_defaults(run=_cmd_validate)

    s = subparsers.add_parser(
        "schema",
        help="print the JSON schema of a scenario file",
        **examples("econ schema > scenario.schema.json"),
    )
    s.set_defaults(run=_cmd_schema)

    a = subparsers.add_parser("app", help="start the Streamlit app")
    a.add_argument(
        "--port",
        type=Number(int, what="a port", ge=1, le=65535),
        default=8501,
        help="port to listen on (default %(default)s)",
    )
    a.add_argument(
        "--host",
        default=APP_HOST,
        metavar="ADDRESS",
        help=f"address to listen on (default {APP_HOST}: this machine only); 0.0.0.0 opens the "
        "app, and every file it can read, to anyone who can reach the port",
    )
    a.set_defaults(run=_cmd_app)

    if features:
        for module in pkgutil.iter_modules(commands.__path__):
            importlib.import_module(f"{commands.__name__}.{module.name}").register(subparsers)
    return parser


def _cmd_project(args) -> int:
    from econ.engine import project

    if args.out is not None:  # checked before the projection; an empty path is no path left out
        from econ.export import output_kind

        output_kind(args.out, option="--out")
    scenarios = [_scenario(f, args.overrides, args.hold_debt) for f in args.files]
    commands.check_distinct_names(args.files, scenarios)
    projection = project(scenarios)
    if args.out or args.format != "table":  # the writers load only for files, JSON and CSV
        from econ.embedding import embedded_stamp, named_by_file
        from econ.export import csv_text, projection_json, stamped_summary, write_projection

        # Stamped like every output: version, scenario hashes, catalog versions, creation time
        # (one stamp for the files and stdout). JSON and CSV on stdout are the files' text:
        # warnings name a curve file by its file name, not by this machine's folder.
        st = embedded_stamp(projection, scenarios)
        shared = named_by_file(projection, scenarios)
    if args.out:
        written = write_projection(
            projection, args.out, overwrite=args.force, scenarios=scenarios, created=st.created_utc
        )
        commands.say_wrote(written)
    if args.format == "json":
        sys.stdout.write(projection_json(shared, st))
    elif args.format == "csv":  # the summary file's table: the same columns, provenance included
        sys.stdout.write(csv_text(stamped_summary(shared, st)))
        commands.say_warnings(commands.warning_lines(shared.summary_records()))
    elif not args.out:
        print(format_table(projection))
    else:  # the files hold the warnings too; covenant breaches must not pass unseen
        commands.say_warnings(commands.warning_lines(shared.summary_records()))
    return EXIT_OK


def _scenario(file: str, overrides: Sequence[str], hold_debt: bool):
    """The scenario of `file` with its overrides; with `hold_debt`, holding the loan sized for
    the scenario as written (`econ.analysis.committed.held_loan`, as `econ sweep --hold-debt`
    holds its base case's), what is held said on stderr."""
    from econ.scenario import load_scenario

    path = commands.scenario_path(file)
    scenario = load_scenario(path, overrides)
    if not hold_debt:
        return scenario
    from econ.analysis.committed import held_loan, holding, loan_terms

    base = load_scenario(path) if overrides else scenario
    varied = loan_terms(item.split("=", 1)[0].strip() for item in overrides)
    loan, held = held_loan(base, varied, who="the projection", whose="its")
    commands.say_warnings([f"held loan: {held['note']}"])
    if loan is None:
        return scenario
    return holding(scenario, loan, f"{scenario.name} holding {base.name}'s loan")


def _cmd_validate(args) -> int:
    from econ.engine import project
    from econ.scenario import ScenarioError, load_scenario

    failed = 0
    for name in args.files:
        try:
            scenario = load_scenario(commands.scenario_path(name))
            # What `project` would refuse is refused here too: a curve file's content, a price
            # table, a MACRS convention of the wrong quarter... (the summary only: a few ms).
            project(scenario, monthly=False)
        except ScenarioError as exc:
            failed += 1
            commands.say_error(exc)
        except InputError as exc:  # as `project` names them
            from econ.batch import in_file

            failed += 1
            commands.say_error(in_file(exc, name))
        else:
            from econ.plausibility import validate_warnings
            from econ.text import printable

            defaults = scenario.default_sections
            note = f"; defaults for {', '.join(defaults)}" if defaults else ""
            said = f"{name}: ok ({scenario.name}, {scenario.horizon} months{note})"
            print(printable(said, line=True))  # (a name's invisible characters escaped)
            # the scenario's covenant once, then the fleet and each vintage, as projected
            commands.say_warnings(
                f"warning [{whose}]: {warning}" for whose, warning in validate_warnings(scenario)
            )
    return EXIT_INVALID if failed else EXIT_OK


def _cmd_schema(args) -> int:
    import json

    from econ.scenario import json_schema

    print(json.dumps(json_schema(), indent=2))
    return EXIT_OK


def _cmd_app(args) -> int:
    _check_listening(args.host, args.port)
    app = Path(__file__).with_name("ui") / "streamlit_app.py"
    command = [sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(args.port)]
    command += ["--server.address", args.host]
    # From the project folder, so Streamlit reads .streamlit/config.toml (theme, upload limit).
    folder = Path(__file__).resolve().parents[1]
    # --library reaches the app as the ECON_LIBRARY it reads, in the environment: on the
    # command line a password in the URL would show to anyone who runs `ps`
    if args.library is not None:
        from econ.library import ENV_VAR

        os.environ[ENV_VAR] = args.library
    if os.name != "posix":
        return subprocess.call(command, cwd=folder)
    # Streamlit replaces this process (same pid), so a signal that stops `econ app` (SIGTERM
    # from a service manager, Ctrl-C) stops the server itself: no orphan left serving the port.
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(folder)
    os.execv(sys.executable, command)
    return EXIT_OK  # not reached


def _check_listening(host: str, port: int) -> None:
    """InputError (exit 3) unless Streamlit can listen on `host`:`port`, found by binding a
    socket there for a moment as Streamlit binds its own (IPv6 for an address with a colon,
    SO_REUSEADDR on POSIX). Streamlit took an empty host for every interface without a word,
    and an address that does not resolve or is not this machine's, or a port in use, ended in a
    traceback or a log line with exit 1, which the CLI keeps for "a figure does not reproduce"."""
    import errno
    import socket

    from econ.files import reason
    from econ.text import clipped

    if host.startswith("unix://"):  # Streamlit's socket file: no address, no port to check
        return
    named = f"--host {clipped(host)!r}"
    expected = (
        f"expected an address of this machine, such as {APP_HOST} (this machine only, the "
        "default) or 0.0.0.0 (every interface, on purpose)"
    )
    if not host.strip():
        raise InputError(f"{named}: an empty address listens on every interface; {expected}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            if os.name != "nt":  # as Streamlit: a port left in TIME_WAIT is free
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except socket.gaierror as exc:
        raise InputError(
            f"{named}: no such address or host name ({exc.strerror}); {expected}"
        ) from None
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise InputError(
                f"--port {port}: already in use on {clipped(host)} (another program listens "
                f"there); expected a free port, such as --port {_free_port(family, host)}"
            ) from None
        if exc.errno == errno.EADDRNOTAVAIL:
            raise InputError(f"{named}: not an address of this machine; {expected}") from None
        why = reason(exc)
        if exc.errno in (errno.EACCES, errno.EPERM) and port < 1024:
            why += ": ports below 1024 need privileges"
        raise InputError(
            f"{named} --port {port}: cannot listen there ({why}); {expected}, on a port this "
            "user may listen on"
        ) from None


def _free_port(family: int, host: str) -> int:
    """A port free on `host` now, for the message about a busy one."""
    import socket

    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


CODE_NAME = "name"
"""The format of a row whose value is a category's code (econ.engine.CODED_METRICS): the table
writes the category's name ("minimum DSCR"), where JSON and CSV keep the code."""


@cache
def summary_rows() -> tuple[tuple[str, str, str], ...]:
    """Summary metrics as table rows: (key, label with unit, format); other commands pick from it.

    Labels and units are econ.labels' (the app's, the workbook's); the rows and number formats
    are the table's own. A function (also readable as `SUMMARY_ROWS`) because the components come
    from the engine, which only commands that project load."""
    from econ.engine import COMPONENTS, TOKEN_KINDS
    from econ.labels import label_with_unit

    rows = []
    for key, fmt in _SUMMARY_ROWS:
        label = label_with_unit(key)
        if fmt == CODE_NAME:  # no legend of the codes: the cells give the names
            label = label.split(" (", 1)[0]
        rows.append((key, label, fmt))
        if key == "lcot_usd_per_mtok":
            rows += [
                (f"component:{c}", label_with_unit(f"cost_usd_per_mtok_{c}"), fmt)
                for c in COMPONENTS
            ]
            all_tokens = "lcot_usd_per_mtok_all_tokens"
            rows.append((all_tokens, label_with_unit(all_tokens), fmt))
        elif key == "revenue_usd_total":
            rows += [
                (f"{kind}_revenue_usd_total", label_with_unit(f"{kind}_revenue_usd_total"), fmt)
                for kind in TOKEN_KINDS
            ]
        elif key == "cost_usd_per_gpu_hour":
            rows += [(f"{key}_{c}", label_with_unit(f"{key}_{c}"), fmt) for c in COMPONENTS]
    return tuple(rows)


def __getattr__(name: str):
    if name == "SUMMARY_ROWS":
        return summary_rows()
    raise AttributeError(f"module 'econ.cli' has no attribute {name!r}")


_SUMMARY_ROWS = (
    ("lcot_usd_per_mtok", "{:,.4f}"),
    ("breakeven_price_usd_per_mtok", "{:,.4f}"),
    ("tokens_total", "{:,.4g}"),
    ("input_tokens_total", "{:,.4g}"),
    ("revenue_usd_total", "{:,.0f}"),
    ("ebitda_usd_total", "{:,.0f}"),
    ("npv_usd", "{:,.0f}"),
    ("npv_equity_usd", "{:,.0f}"),
    ("irr_project_annual", "{:.2%}"),
    ("irr_equity_annual", "{:.2%}"),
    ("mirr_project_annual", "{:.2%}"),
    ("mirr_equity_annual", "{:.2%}"),
    ("moic_equity", "{:.2f}"),
    ("profitability_index", "{:.3f}"),
    ("payback_months", "{:.1f}"),
    ("min_dscr", "{:.2f}"),
    ("dscr_headroom", "{:+.2f}"),
    ("months_of_headroom", "{:.0f}"),
    ("min_llcr", "{:.2f}"),
    ("covenant_breach_months", "{:.0f}"),
    ("first_breach_month", "{:.0f}"),
    ("debt_usd_total", "{:,.0f}"),
    ("debt_sizing_constraint", CODE_NAME),
    ("cost_usd_per_gpu_hour", "{:,.4f}"),
    ("tokens_per_s_per_mw", "{:,.0f}"),
    ("revenue_usd_per_mw_year", "{:,.0f}"),
    ("tokens_per_s_per_mw_utility", "{:,.0f}"),
    ("revenue_usd_per_rack_year", "{:,.0f}"),
    ("joules_per_token_utility", "{:.3f}"),
    ("power_cost_usd_per_mtok", "{:.4f}"),
    ("gpu_count", "{:,.0f}"),
    ("capex_usd_total", "{:,.0f}"),
    ("discount_rate_annual", "{:.2%}"),
    ("horizon_months", "{:.0f}"),
)
"""The table's metrics in order, each with its number format (the levelized cost's components,
the token revenue by kind and the GPU-hour cost's components follow their total)."""

CONSTRUCTION_ROWS = ("construction_interest_usd", "debt_at_conversion_usd")
"""Rows the table adds after the debt's where a scenario capitalizes construction interest: the
debt row is what is drawn, these what the lender is owed when service starts (elsewhere they are
0 and the debt again, and left out)."""


def _table_rows(records) -> list[tuple[str, str, str]]:
    """summary_rows(), with CONSTRUCTION_ROWS after the debt's where a record capitalizes
    construction interest."""
    from econ.labels import label_with_unit

    rows = list(summary_rows())
    if any((r["summary"].get("construction_interest_usd") or 0) > 0 for r in records):
        at = [key for key, _, _ in rows].index("debt_usd_total") + 1
        rows[at:at] = [(key, label_with_unit(key), "{:,.0f}") for key in CONSTRUCTION_ROWS]
    return rows


def format_table(projection: Projection) -> str:
    """Metrics as rows, scenarios as columns, then each scenario's warnings."""
    from econ.text import printable

    records = projection.summary_records()
    header = ["metric"] + [printable(r["name"], line=True) for r in records]
    rows = [header]
    for key, label, fmt in _table_rows(records):
        row = [label]
        for record in records:
            summary = record["summary"]
            if key.startswith("component:"):
                value = summary["cost_usd_per_mtok_by_component"][key.split(":", 1)[1]]
            else:
                value = summary[key]
            row.append("n/a" if value is None else _cell(key, fmt, value))
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = []
    for j, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines + commands.warning_lines(records))


def _cell(key: str, fmt: str, value: float) -> str:
    """A table cell: a category's name in words for a coded metric (the words of the app's
    warnings, econ.labels.CONSTRAINT_WORDS), else `table_cell`."""
    if fmt != CODE_NAME:
        return table_cell(fmt, value)
    from econ.engine import CODED_METRICS
    from econ.labels import CONSTRAINT_WORDS

    name = CODED_METRICS[key][int(value)]
    return CONSTRAINT_WORDS.get(name, name).removeprefix("the ")


LONG_CELL = len("999,999,999,999")
"""A cell longer than this may hold a figure the app writes short (econ.labels.HUGE)."""


def table_cell(fmt: str, value: float) -> str:
    """A table cell in its row's format, or from a trillion on in the app's short form
    (econ.labels.compact): an NPV of 203 digits stretched its column across the screen."""
    text = fmt.format(value)
    if len(text) <= LONG_CELL:  # the labels load only for a cell this long
        return text
    from econ.labels import HUGE, compact

    percent = fmt.endswith("%}")
    shown = value * 100 if percent else value
    if abs(shown) < HUGE:
        return text
    sign = "+" if "+" in fmt and shown > 0 else ""
    return sign + compact(shown) + ("%" if percent else "")


if __name__ == "__main__":
    sys.exit(main())
