"""CLI: `econ sweep`, `econ montecarlo` and `econ sensitivity` (batch projections at scale).

Thin: parse, build the job through econ.analysis, run it on the chosen executor, print or write.
Every command takes `--engine serial|process|dask [--workers K] [--scheduler ADDRESS]`,
`--out FILE` (.parquet or .csv: one row per scenario, with run metadata), `--format
table|json|csv` for what is printed, `--chunks DIR` to keep chunk files (a rerun resumes them),
and `--report PREFIX` for a Markdown table plus a PNG chart. A progress bar goes to stderr when
it is a terminal.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
from pathlib import Path

import numpy as np

from econ import strict_json
from econ.commands import (
    SCENARIO_HELP,
    Number,
    add_format,
    add_overrides,
    say_error,
    say_warnings,
    say_wrote,
    scenario_path,
)
from econ.errors import InputError
from econ.labels import counted

EXIT_OK, EXIT_INVALID, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 3, 130, 143


def register(subparsers) -> None:
    def common(p):
        p.add_argument("scenario", metavar="SCENARIO", help="base scenario: " + SCENARIO_HELP)
        add_overrides(p, "override a field of the base scenario (TOML value)", dest="set_values")
        p.add_argument(
            "--engine",
            choices=("serial", "process", "dask"),
            default="serial",
            help="where the chunks run: %(choices)s (default %(default)s)",
        )
        p.add_argument(
            "--workers",
            type=Number(int, what="a number", ge=1),
            metavar="K",
            help="worker processes (process, dask)",
        )
        p.add_argument(
            "--scheduler",
            metavar="ADDRESS",
            help="Dask scheduler, e.g. tcp://host:8786 (default: start a local cluster)",
        )
        p.add_argument(
            "--chunk-size",
            type=Number(int, what="a number", ge=1),
            metavar="ROWS",
            help="rows per chunk (default 16,384, econ.analysis.runner.DEFAULT_CHUNK_SIZE)",
        )
        p.add_argument(
            "--chunks",
            metavar="DIR",
            help="keep per-chunk Parquet files here; rerunning the same command resumes",
        )
        p.add_argument("--out", metavar="FILE", help="write one row per scenario (.parquet, .csv)")
        add_format(p)
        p.add_argument("--report", metavar="PREFIX", help="write PREFIX.md and a PNG chart")
        p.add_argument(
            "--force",
            action="store_true",
            help="overwrite --out and --report files, and discard a chunk folder's files of "
            "another run; this run's own finished chunks are reused (delete the folder to "
            "recompute them)",
        )
        p.add_argument(
            "--hold-debt",
            action="store_true",
            help="every scenario holds the base case's sized loan instead of sizing its own: a "
            "stress test of the committed loan",
        )
        p.add_argument(
            "--progress",
            action=argparse_bool(),
            default=None,
            help="progress bar on stderr (default: when stderr is a terminal)",
        )

    s = subparsers.add_parser("sweep", help="a grid or a table of overrides around a scenario")
    common(s)
    group = s.add_mutually_exclusive_group(required=True)
    group.add_argument(
        "--grid",
        action="append",
        metavar="PATH=V1,V2,...",
        help="values of a field; several --grid make a cartesian product",
    )
    group.add_argument(
        "--overrides",
        dest="table",
        metavar="FILE",
        help="CSV or Parquet table, one column per field path",
    )
    s.set_defaults(run=_cmd_sweep)

    m = subparsers.add_parser("montecarlo", help="Monte Carlo over input distributions")
    common(m)
    m.add_argument(
        "--dist",
        action="append",
        default=[],
        metavar="PATH=DIST(ARGS)",
        help="e.g. market.price_decline_annual=triangular(0.15,0.3,0.5); uniform, triangular, "
        "pert, normal, lognormal, discrete, empirical",
    )
    m.add_argument(
        "--corr",
        action="append",
        default=[],
        metavar="PATH1,PATH2=RHO",
        help="Spearman rank correlation between two distributions (Iman-Conover)",
    )
    m.add_argument(
        "-n",
        "--scenarios",
        dest="n",
        default="10000",
        metavar="N",
        help="scenarios drawn (default %(default)s)",
    )
    m.add_argument(
        "--seed",
        default="0",
        metavar="S",
        help="root seed, a whole number from 0 to 2^53 - 1 (default %(default)s)",
    )
    m.add_argument(
        "--sampling",
        choices=("random", "sobol", "sobol-plain"),
        default="random",
        help="how the draws are made: %(choices)s (default %(default)s)",
    )
    m.add_argument(
        "--output",
        action="append",
        metavar="METRIC",
        help="outputs to summarize (default: the main ones)",
    )
    m.set_defaults(run=_cmd_montecarlo)

    t = subparsers.add_parser(
        "sensitivity", help="tornado, Sobol indices or Morris screening of outputs"
    )
    common(t)
    t.add_argument(
        "--method",
        choices=("tornado", "sobol", "morris"),
        default="tornado",
        help="%(choices)s (default %(default)s)",
    )
    t.add_argument(
        "--range",
        action="append",
        default=[],
        metavar="PATH=LOW,HIGH",
        help="low and high values of a field (tornado); repeat for several",
    )
    t.add_argument(
        "--vary", action="append", default=[], metavar="PATH", help="vary by --pct around base"
    )
    t.add_argument(
        "--pct",
        type=Number(what="a percentage", gt=0),
        help="+- percent of the base value for --vary, in percent: 10 is +-10%% of it, "
        "relative (a utilization of 0.7 swings to 0.63 and 0.77) (default 10)",
    )
    t.add_argument(
        "--dist",
        action="append",
        default=[],
        metavar="PATH=DIST(ARGS)",
        help="input distribution (sobol, morris)",
    )
    t.add_argument(
        "-n",
        "--samples",
        dest="n",
        metavar="N",
        help="Sobol base samples N (N (d + 2) runs; default 1024)",
    )
    t.add_argument(
        "--trajectories",
        type=Number(int, what="a number", ge=1),
        help="Morris trajectories (default 20)",
    )
    t.add_argument(
        "--levels",
        type=Number(int, what="a number", ge=2),
        help="Morris grid levels (default 4)",
    )
    t.add_argument(
        "--seed",
        metavar="S",
        help="root seed, a whole number from 0 to 2^53 - 1 (default 0)",
    )
    t.add_argument(
        "--sampling",
        choices=("random", "sobol", "sobol-plain"),
        help="how the samples are drawn: %(choices)s (default sobol)",
    )
    t.add_argument(
        "--output",
        action="append",
        metavar="METRIC",
        help="outputs to analyse (default: npv_usd, lcot_usd_per_mtok, irr_project_annual); "
        "repeat for several",
    )
    t.set_defaults(run=_cmd_sensitivity)


def _module(name: str):
    # econ.analysis re-exports functions named like its modules (montecarlo, sweep...).
    import importlib

    return importlib.import_module(f"econ.analysis.{name}")


def argparse_bool():
    import argparse

    return argparse.BooleanOptionalAction


def _base(args):
    from econ.scenario import load_scenario

    return load_scenario(scenario_path(args.scenario), args.set_values)


class Terminated(KeyboardInterrupt):
    """SIGTERM (a batch scheduler's or Kubernetes' stop), raised in the main thread while a
    batch command runs, so that it stops as Ctrl-C does: finished chunks kept and said."""


@contextlib.contextmanager
def _terminate_as_interrupt():
    """SIGTERM raises `Terminated` while the block runs, where it ended the process at once
    (exit 143, nothing on stderr). Only the main thread may set signal handlers; elsewhere
    nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise Terminated

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stopped(exc: KeyboardInterrupt) -> tuple[str, int]:
    """How a stopped run is said, and its exit code: Ctrl-C 130, SIGTERM 143 (128 + 15)."""
    if isinstance(exc, Terminated):
        return "terminated (SIGTERM)", EXIT_TERMINATED
    return "interrupted", EXIT_INTERRUPTED


def _run_on_executor(args, store, call):
    """`call(executor)` on the run's executor, SIGTERM taken as Ctrl-C; its result, or the exit
    code of a run stopped (said in one line, naming the chunks kept), a worker lost or running
    other econ code, or a chunk the disk did not take."""
    from econ.analysis.executors import WorkerCodeError, WorkerLostError
    from econ.analysis.runner import ChunkWriteError

    with _terminate_as_interrupt():
        try:
            executor = _make_executor(args)
        except KeyboardInterrupt as exc:
            # a Dask scheduler slow to answer, a local cluster starting
            where = (
                f"connecting to the Dask scheduler at {args.scheduler}"
                if args.scheduler
                else f"starting the {args.engine} engine"
            )
            said, code = _stopped(exc)
            print(f"{said} while {where}; nothing was run", file=sys.stderr)
            return code
        with executor:
            try:
                return call(executor)
            except KeyboardInterrupt as exc:
                said, code = _stopped(exc)
                print(f"{said}: {_resume(store)}", file=sys.stderr)
                return code
            except (WorkerLostError, WorkerCodeError) as exc:
                return _worker_lost(exc, store)
            except ChunkWriteError as exc:
                return _chunk_not_written(exc, args)


def _make_executor(args):
    """The run's executor; what make_executor notes (ExecutorNote: --workers ignored, workers
    beyond the CPUs) printed as `note: ...` lines on stderr, before any error it raises. Other
    warnings are passed on as they came."""
    import warnings

    from econ.analysis.executors import ExecutorNote, make_executor

    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ExecutorNote)
            return make_executor(args.engine, args.workers, args.scheduler)
    finally:
        for said in caught:
            if issubclass(said.category, ExecutorNote):
                say_warnings([f"note: {said.message}"])
            else:
                warnings.warn_explicit(said.message, said.category, said.filename, said.lineno)


def _progress(args) -> bool:
    return sys.stderr.isatty() if args.progress is None else args.progress


def _int(name: str, text: str, minimum: int = 1) -> int:
    try:
        value = int(str(text).replace("_", ""))
    except ValueError:
        raise InputError(
            f"{name} = {text!r}: expected a whole number >= {minimum}" + _whole_hint(text, minimum)
        ) from None
    if value < minimum:
        raise InputError(f"{name} = {value}: expected a whole number >= {minimum}")
    return value


def _whole_hint(text: str, minimum: int) -> str:
    """How to write a whole number given in a float's form ("1e6", "1000.0"), where it is one
    the option takes."""
    try:
        number = float(str(text).replace("_", ""))
    except ValueError:
        return ""
    if not (np.isfinite(number) and number.is_integer() and number >= minimum):
        return ""
    return f" (write {int(number)})"


def _run_options(args, out_rows: bool) -> dict:
    from econ.analysis.output import check_out
    from econ.analysis.runner import DEFAULT_CHUNK_SIZE, check_store

    store = args.chunks
    check_store(store)  # (an empty --out or --report is refused too, never skipped)
    if args.report is not None:  # checked with --out before the run: a refusal writes nothing
        from econ.analysis.report import report_targets

        report_targets(args.report, args.force, getattr(args, "method", "histogram"))
    if args.out is not None:
        check_out(args.out, args.force)
        if store is not None and Path(store).resolve() == Path(args.out).resolve():
            raise InputError(
                f"--out {args.out} and --chunks {store} name the same path; expected a file "
                "for the rows and a folder for the chunk files"
            )
        if store is None:
            store = str(Path(args.out).with_name(Path(args.out).name + ".chunks"))
            _check_chunk_folder(args.out, store)
    return {
        "chunk_size": DEFAULT_CHUNK_SIZE if args.chunk_size is None else args.chunk_size,
        "store": store,
        "progress": _progress(args),
        "overwrite": args.force,
        "hold_debt": args.hold_debt,
        "out_file": args.out,  # its disk checked for room before the run, as the chunks' is
    }


def _check_chunk_folder(out: str, store: str) -> None:
    """Refuse an --out whose chunk folder (FILE.chunks, which the user did not name) cannot be
    created beside it, naming the output: created and removed again, so a run refused later
    leaves no empty folder behind. An existing FILE.chunks is taken only where it is econ's (its
    manifest, which the chunk store checks against the run), or empty: a folder of other files
    is refused, since econ removes the chunk folder of --out after the run."""
    import os

    from econ.analysis.chunks import MANIFEST
    from econ.files import reason

    if os.path.isdir(store):
        try:
            names = sorted(os.listdir(store))
        except OSError:
            return  # the chunk store names what is wrong with it
        if MANIFEST in names or all(_is_chunk_file(name) for name in names):
            return  # a run to resume, or chunk files the chunk store refuses without --force
        from econ.text import listed

        others = [name for name in names if not _is_chunk_file(name)]
        raise InputError(
            f"{out}: its chunk files would go to {store}, a folder that exists and holds files "
            f"econ did not write ({listed(others, 5)}); expected no such folder, an empty one "
            "or one of econ's (it removes its chunk files after the run): move it away, or keep "
            "the chunk files in a folder of your choice with --chunks DIR"
        )
    if os.path.lexists(store):
        return  # something the chunk store names and refuses
    try:
        os.mkdir(store)
    except OSError as exc:
        raise InputError(
            f"{out}: cannot write it: the folder of its chunk files beside it "
            f"({Path(store).name}) cannot be created: {reason(exc)}; choose another place for "
            "--out, or keep the chunk files elsewhere with --chunks DIR"
        ) from None
    os.rmdir(store)


def _is_chunk_file(name: str) -> bool:
    return name.startswith("chunk-") and name.endswith(".parquet")


def _say_notes(result) -> None:
    """The run's notes (`result.notes`) on stderr: what --hold-debt held (`held loan: ...`),
    then each other as `note: ...` (a chunk size rounded up, an input that moves no output); the
    metadata of --out and --format json has them too."""
    from econ.analysis.runner import HELD_NOTE

    say_warnings(note if note.startswith(HELD_NOTE) else f"note: {note}" for note in result.notes)


def _say_resumed(result, force: bool) -> None:
    """How many chunks a rerun took from the chunk files of an earlier one (a run stopped, or
    one run again), on stderr. With --force, that they are this run's: --force discards only
    another run's, and this run's are the bits a recomputation would give."""
    if result.resumed:
        computed = result.chunks - result.resumed
        kept = (
            f"; --force discards only another run's chunk files, and these are this run's "
            f"(same scenario, plan, seed, size and econ version): delete "
            f"{result.store.directory} to recompute them"
            if force
            else ""
        )
        print(
            f"resumed: reused {counted(result.resumed, 'finished chunk')} of {result.chunks:,} "
            f"from {result.store.directory}, computed {computed:,}{kept}",
            file=sys.stderr,
        )


def _worker_lost(exc, store) -> int:
    say_error(f"{exc}; {_resume(store)}")
    return EXIT_INVALID


def _resume(store) -> str:
    if store:
        saved = _saved_chunks(store)
        if saved == 0:
            return f"no chunk had finished (none is saved in {store}); rerun the same command"
        if saved is not None:
            return (
                f"{counted(saved, 'finished chunk')} {'is' if saved == 1 else 'are'} saved in "
                f"{store}; rerun the same command to resume"
            )
        return f"finished chunks are saved in {store}; rerun the same command to resume"
    return "rerun the same command (with --chunks DIR to keep finished chunks)"


def _saved_chunks(store) -> int | None:
    """The chunk files in the run's chunk folder (each checked against the run before a rerun
    reuses it); None where the folder cannot be listed."""
    try:
        return sum(1 for _ in Path(store).glob("chunk-*.parquet"))
    except OSError:
        return None


def _chunk_not_written(exc, args) -> int:
    """A chunk file the disk did not take: what is kept where, and what to do."""
    if args.chunks is None and args.out:
        say_error(
            f"{exc}, the chunk files of --out {args.out}; rerun the same command to resume "
            f"once there is space, or delete {exc.folder}"
        )
    else:
        say_error(f"{exc}; rerun the same command to resume once there is space")
    return EXIT_INVALID


def _finish_out(args, result, store_given: bool) -> int | None:
    """Write --out from the run's rows or chunk files; None once written, or the exit code of a
    write stopped by Ctrl-C or SIGTERM (said with what is kept, as a stopped run says it)."""
    from econ.analysis.output import write_rows
    from econ.files import WriteError

    if not args.out:
        return None
    try:
        with _terminate_as_interrupt():
            written = write_rows(result, args.out, overwrite=args.force)
    except KeyboardInterrupt as exc:
        said, code = _stopped(exc)
        kept = (
            _kept_for_out(args, result, store_given)
            if result.store is not None
            else "rerun the same command"
        )
        print(f"{said} while writing {args.out}: nothing was written; {kept}", file=sys.stderr)
        return code
    except WriteError as exc:
        if result.store is None:
            raise
        short = _out_short_of_space(args, result, store_given)
        raise WriteError(f"{exc}; {short or _kept_for_out(args, result, store_given)}") from None
    if result.store is not None and not store_given:
        result.store.discard(result.chunks)  # what the run wrote there, nothing else
    say_wrote(written)
    return None


def _out_short_of_space(args, result, store_given: bool) -> str | None:
    """Where --out could not be written and its disk has less room than the file needs, the
    sizes and what to do: a rerun as it was would fail the same way (the chunk files it is
    written from fill the disk they share with it). None where the room would do."""
    import os
    import shutil

    from econ.analysis.output import rows_file_bytes
    from econ.analysis.runner import _compared_sizes
    from econ.files import size_text

    folder = result.store.directory
    out = Path(args.out)
    try:
        need = rows_file_bytes(result, out)
        free = shutil.disk_usage(out.absolute().parent).free
        same = os.stat(out.absolute().parent).st_dev == os.stat(folder).st_dev
    except (OSError, StopIteration):
        return None
    if need <= free:
        return None
    kept = _chunk_files_kept(folder) + (", on the same disk" if same else "")
    elsewhere = (
        "rerun it with --out on another disk (the chunk files are reused)"
        if store_given
        else f"write it on another disk from them: rerun it with --chunks {folder} --out "
        f"OTHER_DISK/{out.name} (the chunk files are reused; delete {folder} after)"
    )
    need_text, free_text = _compared_sizes(need, free)
    room = f"more than the {free_text} free on its disk" if free else "and its disk is full"
    return (
        f"{out} needs about {need_text}, {room}; {kept}: "
        f"free at least {size_text(need - free)} more there and rerun the same command, or "
        f"{elsewhere}"
    )


def _kept_for_out(args, result, store_given: bool) -> str:
    """The chunk files kept for --out after its write failed or was stopped, and the rerun that
    writes it from them."""
    folder = result.store.directory
    return f"{_chunk_files_kept(folder)}: rerun the same command to write {args.out} from them" + (
        "" if store_given else f", or delete {folder}"
    )


def _chunk_files_kept(folder: Path) -> str:
    """ "the run's 5 chunk files (2.0 MB) are kept in FOLDER"."""
    from econ.files import size_text

    files = list(folder.glob("chunk-*.parquet"))
    size = size_text(sum(f.stat().st_size for f in files))
    are = "is" if len(files) == 1 else "are"
    return f"the run's {counted(len(files), 'chunk file')} ({size}) {are} kept in {folder}"


def _cmd_sweep(args) -> int:
    sweeps = _module("sweeps")
    from econ.analysis.output import format_frame, rows_csv_text
    from econ.analysis.runner import run

    base = _base(args)
    options = _run_options(args, out_rows=True)
    grid = sweeps.parse_grid(args.grid) if args.grid else None
    job = sweeps.sweep_job(base, grid=grid, table=args.table)
    # Rows written with --out are streamed from the chunk files; they are kept in memory only
    # where they are printed or charted (checked against econ.analysis.runner.MAX_ROW_BYTES).
    keep = not args.out or args.format != "table" or bool(args.report) or job.n <= 50
    result = _run_on_executor(
        args, options["store"], lambda ex: run(job, executor=ex, keep_rows=keep, **options)
    )
    if isinstance(result, int):
        return result
    _say_resumed(result, args.force)
    code = _finish_out(args, result, args.chunks is not None)
    if code is not None:
        return code
    _say_notes(result)
    rows = result.kept_rows  # None where --out streamed them to the file
    job = result.job
    inputs = list(job.axes if isinstance(job, sweeps.GridSweep) else job.columns)
    if args.report:
        from econ.analysis.report import sweep_report

        key = ["name", *inputs, "npv_usd", "lcot_usd_per_mtok", "irr_project_annual"]
        say_wrote(
            sweep_report(rows, result.metadata, args.report, overwrite=args.force, columns=key)
        )
    if args.format == "json":
        print(strict_json.dumps(sweep_json(result, inputs), indent=2))
    elif args.format == "csv":
        sys.stdout.write(rows_csv_text(rows))
    elif rows is not None and (not args.out or len(rows) <= 50):
        loan = ["min_dscr", "covenant_breach_months"] if args.hold_debt else []
        shown = rows[
            [
                "name",
                *inputs,
                "lcot_usd_per_mtok",
                "npv_usd",
                "irr_project_annual",
                "payback_months",
                *loan,
            ]
        ]
        print(
            format_frame(
                shown,
                {"payback_months": "{:.1f}", "min_dscr": "{:.2f}"},
            )
        )
    return EXIT_OK


def sweep_json(result, inputs) -> dict:
    from econ.analysis.output import whole_number_columns
    from econ.analysis.runner import WARNING_SEPARATOR
    from econ.engine import COMPONENTS, SUMMARY_COLUMNS

    rows = result.rows
    whole = set(whole_number_columns(inputs))  # 72 GPUs, not 72.0
    records = []
    # The keys in the order of `econ project --format json` (outputs it lacks after them); an
    # input that is also a summary key (horizon_months) is both.
    known = {key: i for i, key in enumerate(SUMMARY_COLUMNS)}
    metrics = [
        c
        for c in rows.columns
        if c not in ("scenario", "name", "warnings") and (c not in inputs or c in known)
    ]
    spread = ("cost_usd_per_mtok_by_component", "warnings")
    keys = [k for k in metrics if not k.startswith("cost_usd_per_mtok_")] + list(spread)
    keys.sort(key=lambda k: known.get(k, len(known)))  # stable: unknown keys keep their order
    for row in rows.to_dict("records"):
        values = {k: strict_json.number(row[k]) for k in keys if k not in spread}
        values["cost_usd_per_mtok_by_component"] = {
            c: strict_json.number(row[f"cost_usd_per_mtok_{c}"]) for c in COMPONENTS
        }
        values["warnings"] = [
            w for w in str(row.get("warnings") or "").split(WARNING_SEPARATOR) if w
        ]
        summary = {k: values[k] for k in keys}
        records.append(
            {
                "name": row["name"],
                "inputs": {k: _json_value(row[k], k in whole) for k in inputs},
                "summary": summary,
            }
        )
    return {
        "econ_version": result.metadata["econ_version"],
        "metadata": json.loads(strict_json.dumps(result.metadata, default=str)),
        "scenarios": records,
    }


def _json_value(value, whole: bool = False):
    """A value of the rows as JSON takes it: None for NaN, an int for a whole-number field's."""
    if isinstance(value, float | np.floating):
        if not np.isfinite(value):
            return None
        return int(value) if whole and float(value).is_integer() else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def _cmd_montecarlo(args) -> int:
    from econ.analysis.runner import default_outputs, run

    mc = _module("montecarlo")
    from econ.analysis.sampling import check_seed

    base = _base(args)
    n = _int("-n", args.n)
    seed = check_seed(args.seed)
    dists = mc.parse_dists(args.dist, base_dir=Path.cwd())
    correlation = mc.parse_correlations(args.corr, list(dists))
    outputs = args.output or default_outputs(args.hold_debt)
    plan = mc.MonteCarloPlan(dists, n, seed, args.sampling, correlation, outputs=tuple(outputs))
    job = mc.MonteCarlo(base, plan)
    options = _run_options(args, out_rows=bool(args.out))
    result = _run_on_executor(
        args,
        options["store"],
        lambda ex: run(job, executor=ex, keep_rows=False, summarize=True, **options),
    )
    if isinstance(result, int):
        return result
    _say_resumed(result, args.force)
    code = _finish_out(args, result, args.chunks is not None)
    if code is not None:
        return code
    _say_notes(result)
    summary = result.summary
    if args.report:
        from econ.analysis.report import montecarlo_report

        say_wrote(montecarlo_report(summary, result.metadata, args.report, overwrite=args.force))
    from econ.analysis.report import summary_frame

    frame = summary_frame(summary)
    if args.format == "json":
        print(json.dumps(mc.summary_json(result), indent=2, allow_nan=False))
    elif args.format == "csv":
        from econ.analysis.report import summary_csv_frame
        from econ.export import csv_text

        sys.stdout.write(csv_text(summary_csv_frame(summary)))
    else:
        from econ.analysis.output import format_frame, risk_text
        from econ.analysis.report import risk_figures

        print(
            f"{summary.n:,} scenarios of {base.name}, {_seed_text(seed, plan)}, "
            f"quantiles {summary.quantile_method}"
        )
        print(format_frame(frame))
        for key, value in risk_figures(summary).items():
            label = key.replace("_", " ").replace("of covenant", "of a covenant")
            print(f"{label}: {risk_text(key, value)}")
    return EXIT_OK


def _missing_notes(name: str, part, n_base: int | None = None) -> list[str]:
    """Why a sensitivity figure of output `name` is n/a (empty in CSV), where one is. A Sobol
    output undefined at some point of the design (`used` below `n_base`) has no indices at all,
    which the run's note says. A tornado's input the base leaves unset has no `base` value,
    which is not a figure of the output (the note said the output had no value)."""
    from econ.analysis.sensitivity import INPUT_COLUMNS

    notes = []
    if "base" in part and part["base"].isna().any():
        unset = ", ".join(part.loc[part["base"].isna(), "input"])
        notes.append(f"base n/a: the base scenario leaves {unset} unset")
    figures = part.drop(columns=[c for c in INPUT_COLUMNS if c in part])
    if not figures.select_dtypes("number").isna().to_numpy().any():
        return notes
    if n_base is not None and (part["used"] < n_base).any():
        return [
            f"n/a: {name} is undefined (null) at some points of the Sobol design, so it has no "
            "indices (see the note)"
        ]
    return [
        f"n/a: {name} has no value (null) at the sampled points behind that figure; "
        "econ project's warnings of such a scenario say why",
        *notes,
    ]


def _seed_text(seed: int, plan) -> str:
    """Seed and sampling of a Monte Carlo run's header. Unscrambled Sobol points without rank
    correlation (whose permutations are drawn from the seed) are the same for every seed."""
    if plan.sampling == "sobol-plain" and plan.correlation is None:
        return "sobol-plain sampling (no seed: the same points for every seed)"
    return f"seed {seed}, {plan.sampling} sampling"


SENSITIVITY_OPTIONS = {
    "n": ("-n", "1024", ("sobol",)),
    "seed": ("--seed", "0", ("sobol", "morris")),
    "sampling": ("--sampling", "sobol", ("sobol",)),
    "trajectories": ("--trajectories", 20, ("morris",)),
    "levels": ("--levels", 4, ("morris",)),
}
"""`econ sensitivity`'s sampling options by their dest: the option, its default and the methods
that use it."""


def _settle_sensitivity_options(args) -> None:
    """Put the defaults of the options the user left out, noting on stderr those given that the
    method does not use (a tornado samples nothing: -n, --seed and --sampling were silently
    ignored), and --pct without --vary."""
    ignored = []
    for dest, (option, default, methods) in SENSITIVITY_OPTIONS.items():
        value = getattr(args, dest)
        if value is not None and args.method not in methods:
            ignored.append(f"{option} {value} (--method {' or '.join(methods)})")
        setattr(args, dest, default if value is None else value)
    if ignored:
        say_warnings([f"note: --method {args.method} ignores {', '.join(ignored)}"])
    if args.pct is not None and not args.vary:
        say_warnings([f"note: --pct {args.pct:g} is ignored: it is the +-percent of --vary"])
    args.pct = 10.0 if args.pct is None else args.pct


def _cmd_sensitivity(args) -> int:
    mc, sa = _module("montecarlo"), _module("sensitivity")
    from econ.analysis.sensitivity import DEFAULT_OUTPUTS

    _settle_sensitivity_options(args)
    base = _base(args)
    outputs = tuple(args.output or DEFAULT_OUTPUTS)
    if args.method == "tornado" and args.dist:
        raise InputError("a tornado takes --range or --vary, not --dist")
    # One input, one option: a path given twice is refused, never silently replaced.
    given = [("--range", sa.parse_ranges(args.range))]
    if args.vary:
        if args.pct < 1:  # every rate in a scenario is a fraction; this one option is a percent
            say_warnings(
                [
                    f"warning: --pct {args.pct:g} varies each input by +-{args.pct:g}%, not "
                    f"+-{args.pct:.0%}; for +-{args.pct:.0%} give --pct {args.pct * 100:g}"
                ]
            )
        varied = sa.percent_ranges(base, args.vary, args.pct)
        for path, pair in varied.items():  # a range past the field's bounds, in the options' words
            try:
                sa.check_range(path, pair)
            except InputError as exc:
                raise InputError(f"--vary {path} --pct {args.pct:g}: {exc}") from None
        given.append(("--vary", varied))
    if args.dist:
        given.append(("--dist", mc.parse_dists(args.dist, base_dir=Path.cwd())))
    inputs = sa.combine_inputs(*given)
    options = _run_options(args, out_rows=bool(args.out))
    if args.method != "tornado":  # before any executor starts (a tornado draws nothing)
        from econ.analysis.sampling import check_seed

        seed = check_seed(args.seed)

    def analyse(executor):
        if args.method == "tornado":
            return sa.tornado(base, inputs, outputs, executor=executor, **options)
        if args.method == "sobol":
            n = _int("-n", args.n, 2)
            return sa.sobol(
                base, inputs, n, seed, args.sampling, outputs, executor=executor, **options
            )
        return sa.morris(
            base,
            inputs,
            args.trajectories,
            args.levels,
            seed,
            outputs,
            executor=executor,
            **options,
        )

    result = _run_on_executor(args, options["store"], analyse)
    if isinstance(result, int):
        return result
    _say_resumed(result.run, args.force)
    code = _finish_out(args, result.run, args.chunks is not None)
    if code is not None:
        return code
    _say_notes(result.run)
    if args.report:
        from econ.analysis.report import sensitivity_report

        say_wrote(sensitivity_report(result, args.report, overwrite=args.force))
    table = result.table
    n_base = result.run.job.n_base if args.method == "sobol" else None
    if args.format == "json":
        print(json.dumps(_clean(result.as_dict()), indent=2, allow_nan=False))
    elif args.format == "csv":
        from econ.export import csv_text

        sys.stdout.write(csv_text(table))
        say_warnings(
            line
            for name, part in table.groupby("output", sort=False)
            for line in _missing_notes(name, part.drop(columns="output"), n_base)
        )
    else:
        from econ.analysis.output import format_frame

        for name, part in table.groupby("output", sort=False):
            print(f"{args.method}: {name}")
            shown = part.drop(columns="output")
            print(format_frame(shown, max_rows=200))
            for line in _missing_notes(name, shown, n_base):
                print(line)
            if args.method == "morris" and (shown["used"] < args.trajectories).any():
                print(
                    f"used: of each input's {args.trajectories} elementary effects (one per "
                    f"trajectory), those where {name} has a value at both ends of the move"
                )
            if n_base is not None and (shown["used"] < n_base).any():
                print(
                    f"used: of the {n_base:,} base samples, those where {name} has a value at "
                    "every point of the design"
                )
            print()
    return EXIT_OK


def _clean(value):
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return _json_value(value)
