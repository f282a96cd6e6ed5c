"""How every output reaches the disk: atomic, all-or-nothing writes that never overwrite unasked.

Every writer of econ (projections, workbooks, curves, batch rows and their `.meta.json`, reports,
chunk files, saved scenarios) goes through `write_files`:

- the targets are checked first, all of them, before anything is written: the folder exists, the
  name is one the file system can hold, what is at the target (if anything) is a regular file (a
  folder, a symbolic link, a FIFO, a device or a socket is never replaced, `overwrite` or not:
  `--out /dev/stdout --force` would put a file in place of the link), and an existing file is
  refused unless `overwrite` (so a refused write leaves every file as it was);
- each file is written to a temporary file beside it (`.<name>.<random>.tmp`), flushed and
  fsync'ed, then all are renamed over their targets; a failure midway (full disk, permissions, a
  read-only file system, an exception, Ctrl-C) removes the temporary files and the files this call
  had already renamed into place where none existed before;
- an OS error becomes a WriteError (an InputError: exit 3 on the command line) naming the file and
  the reason, e.g. `out.csv: cannot write it: the disk is full (no space left on device); nothing
  was written`;
- temporary files of the same output left by a killed run (older than this write and not held by
  a live writer, which keeps an advisory lock on its temporary file) are removed first;
- files get the permissions of an ordinary new file: 0666 less the process umask (a temporary file
  from `tempfile.mkstemp` is 0600).

The readers of input files a user names (scenarios, benchmark results, market indexes) go through
`read_regular`: a regular file of bounded size, never a FIFO (whose opening waits for a writer), a
device (/dev/zero never ends) or a folder; a ReadError names the file, what it is and the limit.
The readers of zip packages (MLPerf submissions, workbooks to verify) refuse a member that
`zip_member_refusal` names before reading it.

This module imports nothing of econ but `econ.errors`.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from econ.errors import InputError

try:
    import fcntl
except ImportError:  # not POSIX: no advisory locks; stale files are told apart by age alone
    fcntl = None

ZIP_METHODS = {
    zipfile.ZIP_STORED: "stored",
    zipfile.ZIP_DEFLATED: "deflate",
    zipfile.ZIP_BZIP2: "bzip2",
    zipfile.ZIP_LZMA: "lzma",
}
"""Compression methods of zip members econ reads (what Python's zipfile reads), by id."""
MAX_ZIP_RATIO = 200
"""Largest compression ratio of one member: beyond it an archive is treated as a zip bomb."""
_ZIP_ENCRYPTED = 0x1  # general purpose flag bit 0 (APPNOTE 4.4.4)


def zip_member_refusal(member: zipfile.ZipInfo) -> str | None:
    """Why a zip member is not read, as a phrase after its name ("is encrypted ..."): encrypted,
    compressed by a method ZIP_METHODS does not hold, or expanding more than MAX_ZIP_RATIO times
    as its header declares (a zip bomb); None where none holds."""
    if member.flag_bits & _ZIP_ENCRYPTED:
        return "is encrypted (password protected), so it cannot be read"
    if member.compress_type not in ZIP_METHODS:
        return (
            f"is compressed with method {member.compress_type}, which econ cannot read (it reads "
            f"{', '.join(ZIP_METHODS.values())})"
        )
    if member.compress_size and member.file_size / member.compress_size > MAX_ZIP_RATIO:
        return (
            f"expands {member.file_size / member.compress_size:,.0f} times (more than "
            f"{MAX_ZIP_RATIO}), refused as a zip bomb"
        )
    return None


TEMP_SUFFIX = ".tmp"
TEMP_NAME_BYTES = 200
"""At most this many bytes of the target's name go into its temporary file's name, so a target
whose name the file system can hold (255 bytes) gets a temporary file it can hold too."""
_RANDOM = "[a-z0-9_]{8}"  # what tempfile.mkstemp puts between prefix and suffix


class ReadError(InputError):
    """An input that is not a regular file of bounded size (a FIFO, a device, a socket, a file over
    the reader's limit). `path` is the file; `why` the message without it."""

    def __init__(self, path: str | os.PathLike, why: str):
        self.path = os.fspath(path)
        self.why = why
        super().__init__(f"{self.path}: {why}")


class WriteError(InputError):
    """An output that cannot be written as asked (unknown suffix, existing file, bad folder, a name
    too long, read-only or full disk, permissions)."""


@dataclass(frozen=True)
class Stream:
    """A payload written by a function into the open temporary file (binary), for outputs too
    large to hold in memory (rows streamed chunk by chunk, Parquet writers)."""

    write: Callable[[BinaryIO], None]


Payload = bytes | str | Callable[[], bytes | str] | Stream


def reason(exc: OSError) -> str:
    """Why an OS call failed, in words a user can act on."""
    reasons = {
        errno.ENOSPC: "the disk is full (no space left on device)",
        errno.EDQUOT: "the disk quota is exceeded",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.EROFS: "the file system is read-only",
        errno.ENAMETOOLONG: "the file name is too long for the file system",
    }
    return reasons.get(exc.errno) or exc.strerror or str(exc)


def _cannot(path: Path, why: str) -> WriteError:
    return WriteError(f"{path}: cannot write it: {why}")


def refuse_empty_path(
    path: str | os.PathLike | None, option: str, argument: str, expected: str
) -> None:
    """Refuse an output path given empty (`--chunks ""`, an unset variable in a script): pathlib
    reads "" as the current folder, so chunk files went there, and an empty --out was skipped
    as if not given. `option` and `argument` name it on the command line and from Python."""
    if isinstance(path, str) and not path.strip():
        raise WriteError(
            f"{option} {path!r} ({argument}= from Python) is an empty path; expected {expected}"
        )


FROM_PYTHON = "(overwrite=True from Python)"
"""After the CLI's --force in a refusal: the argument of write_projection, save_scenario,
write_rows and the econ.analysis run options that does the same."""
FORCE_ADVICE = "use --force to overwrite"
"""The refusal's advice where only a command writes the file (`econ market import --out`)."""
OVERWRITE_ADVICE = f"{FORCE_ADVICE} {FROM_PYTHON}"


def check_targets(
    paths: Iterable[str | os.PathLike],
    overwrite: bool = False,
    advice: str = OVERWRITE_ADVICE,
    stale: Iterable[str | os.PathLike] = (),
) -> list[Path]:
    """Check that every path can be written (folder, name, existing file); returns them as Paths.

    Raises WriteError naming the first path that cannot, before anything is written; `advice`
    ends the refusal of an existing file. `stale`: files of another output of this name that
    the write removes (`write_files`), refused as existing files are unless `overwrite`.
    """
    paths = list(paths)
    if any(not os.fspath(p) for p in paths):  # pathlib reads "" as the current folder
        raise WriteError("'': an empty path; expected a file path")
    paths = [Path(p) for p in paths]
    existing = []
    for path in paths:
        if "\0" in str(path):  # pathlib answers "does not exist" for it; the OS call refuses it
            raise _cannot(path, "the path holds a NUL byte")
        try:
            if not path.parent.is_dir():
                what = "is not a folder" if path.parent.exists() else "does not exist"
                raise _cannot(path, f"folder {path.parent} {what}")
            info = _target_info(path)
        except OSError as exc:  # e.g. a name longer than the file system allows
            raise _cannot(path, reason(exc)) from None
        if info is not None:
            _refuse_unusual_target(path, info)
            existing.append(str(path))
    stale = stale_files(stale)
    if stale and not overwrite:
        raise WriteError(_stale_refusal(existing, stale, advice))
    if existing and not overwrite:
        raise WriteError(f"{_listed(existing)}; {advice}")
    return paths


def _listed(paths: Iterable[str | os.PathLike]) -> str:
    """The paths and the verb: "a.csv exists", "a.csv, a.summary.csv exist"."""
    names = [str(p) for p in paths]
    return f"{', '.join(names)} {'exists' if len(names) == 1 else 'exist'}"


def stale_files(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Those of `paths` that are regular files (by lstat: not what a link points to): the files
    of another output of a name that a write removes. Anything else there (a folder, a link, a
    FIFO) is no file econ wrote, and is left alone."""
    found = []
    for path in map(Path, paths):
        try:
            info = _target_info(path)
        except (OSError, ValueError):  # a name the file system cannot hold: nothing is there
            continue
        if info is not None and stat.S_ISREG(info.st_mode):
            found.append(path)
    return found


def _stale_refusal(existing: list[str], stale: list[Path], advice: str) -> str:
    """The refusal of a write that would remove `stale` files: "r.tranches.csv exists, from
    another output of this name; --force replaces it", after the targets that exist."""
    before = f"{_listed(existing)}; " if existing else ""
    them = "it" if len(stale) + len(existing) == 1 else "them"
    python = f" {FROM_PYTHON}" if FROM_PYTHON in advice else ""
    return (
        f"{before}{_listed(stale)}, from another output of this name; --force replaces "
        f"{them}{python}"
    )


class Written(list):
    """The paths a write wrote, in order (a list of Paths); `removed`: the files of another
    output of the same name it removed (`write_files`' `remove`), for the command to say so."""

    def __init__(self, written: Iterable[Path] = (), removed: Iterable[Path] = ()):
        super().__init__(written)
        self.removed = list(removed)


def _target_info(path: Path) -> os.stat_result | None:
    """What is at `path` itself (a symbolic link, not what it points to), or None: nothing."""
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _refuse_unusual_target(path: Path, info: os.stat_result) -> None:
    """WriteError unless what is at `path` is a regular file: a write renames its temporary file
    over the target, which would replace a symbolic link (to /dev/stdout, to a file elsewhere), a
    FIFO, a device or a socket with a regular file, whatever --force says."""
    if stat.S_ISDIR(info.st_mode):
        raise WriteError(f"{path}: is a folder; expected a file path")
    if not stat.S_ISREG(info.st_mode):
        raise WriteError(
            f"{path}: is {file_kind(info.st_mode)}, not a regular file; econ replaces only "
            f"regular files, even with --force {FROM_PYTHON}: remove it first, or write to "
            "another path"
        )


def make_folder(path: str | os.PathLike, parents: bool = False) -> Path:
    """Create a folder if missing (and its missing parents if `parents`); WriteError naming it
    and the reason when that fails."""
    path = Path(path)
    try:
        path.mkdir(parents=parents, exist_ok=True)
    except (OSError, ValueError) as exc:
        why = reason(exc) if isinstance(exc, OSError) else "the path holds a NUL byte"
        raise WriteError(f"{path}: cannot create the folder: {why}") from None
    return path


def file_mode() -> int:
    """Permissions of an ordinary new file: 0666 less the process umask."""
    try:  # Linux shows the umask without changing it (os.umask would, for every thread)
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def _temp_prefix(name: str) -> str:
    raw = os.fsencode(name)
    if len(raw) > TEMP_NAME_BYTES:  # a character cut in two is dropped
        name = raw[:TEMP_NAME_BYTES].decode("utf-8", "ignore")
    return "." + name + "."


def _lock(fd: int, blocking: bool) -> bool:
    """Take the advisory lock that marks a temporary file as being written; False if held."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except OSError:
        return False
    return True


def remove_stale_temporaries(
    folder: str | os.PathLike, name_pattern: str, before: float
) -> list[Path]:
    """Remove our temporary files of targets in `folder` whose names match `name_pattern` (a
    regular expression for the target's name) that a killed run left: modified before `before`
    (seconds since the epoch) and not locked by a live writer. Returns the paths removed.

    Only names of the form `.<target>.<8 random characters>.tmp` are touched; anything else in
    the folder is left alone.
    """
    pattern = re.compile(r"\." + name_pattern + r"\." + _RANDOM + re.escape(TEMP_SUFFIX) + r"\Z")
    removed = []
    try:
        entries = [e for e in os.scandir(folder) if pattern.match(e.name)]
    except OSError:
        return removed
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
            if not entry.is_file(follow_symlinks=False) or info.st_mtime >= before:
                continue
            fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            same = os.fstat(fd).st_ino == info.st_ino
            if same and _lock(fd, blocking=False):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


def write_files(
    payloads: Mapping[str | os.PathLike, Payload],
    overwrite: bool = False,
    *,
    sync: bool = True,
    clean: bool = True,
    advice: str = OVERWRITE_ADVICE,
    remove: Iterable[str | os.PathLike] = (),
) -> Written:
    """Write several files all-or-nothing: temporary files, flushed, then renamed over the targets.

    Parameters
    ----------
    payloads : target path -> bytes, text (UTF-8), a function returning either (called only once
        every target was checked, so a refused write costs nothing), or a Stream
    overwrite : replace existing files (otherwise WriteError before anything is written)
    sync : fsync each file before the rename (a resumable cache that verifies its files on reading
        may skip it)
    clean : first remove stale temporary files of these targets left by a killed run
    advice : how the refusal of an existing file says to overwrite it (FORCE_ADVICE where only
        a command writes it)
    remove : files of an earlier output of the same name that this one does not write (a
        capital stack's tranche tables beside a schedule that has none): those that are regular
        files are refused as existing targets are ("r.tranches.csv exists, from another output
        of this name; --force replaces it"), and with `overwrite` removed once every target is
        in place, so that the output's files are all of one run; nothing else is removed

    Returns the paths written (`Written`: the files removed in its `removed`). Raises WriteError
    for existing files without `overwrite`, missing folders, names too long and OS errors (full
    disk, permissions, read-only file system), naming the file and the reason; any other
    exception propagates after the same clean-up.
    """
    started = time.time()
    targets = {Path(t) for t in payloads}
    remove = [Path(p) for p in remove if Path(p) not in targets]  # (a target is replaced)
    paths = check_targets(payloads, overwrite, advice, stale=remove)
    items = list(zip(paths, payloads.values(), strict=True))
    if clean:
        for path in paths:
            remove_stale_temporaries(path.parent, re.escape(_temp_prefix(path.name)[1:-1]), started)
    mode = file_mode()
    open_files: list[tuple[Path, str, BinaryIO]] = []
    renamed: list[Path] = []
    existed = {p: p.exists() for p in paths}
    current = paths[0] if paths else None
    try:
        for path, payload in items:
            current = path
            fd, tmp = tempfile.mkstemp(
                dir=path.parent, prefix=_temp_prefix(path.name), suffix=TEMP_SUFFIX
            )
            handle = os.fdopen(fd, "wb")
            open_files.append((path, tmp, handle))
            _lock(fd, blocking=True)  # held until this call ends: a live write is never stale
            os.fchmod(fd, mode)
            if isinstance(payload, Stream):
                payload.write(handle)
            else:
                data = payload() if callable(payload) else payload
                _write_payload(handle, data.encode("utf-8") if isinstance(data, str) else data)
            handle.flush()
            if sync:
                os.fsync(fd)
        for path, tmp, _ in open_files:
            current = path
            info = _target_info(path)  # (what appeared or changed while writing)
            if info is not None:
                _refuse_unusual_target(path, info)
                if not overwrite:
                    raise WriteError(f"{path} exists; {advice}")
            os.replace(tmp, path)
            renamed.append(path)
    except BaseException as exc:
        for path, tmp, _ in open_files:
            if path not in renamed:
                Path(tmp).unlink(missing_ok=True)
        for path in renamed:
            if not existed[path]:
                path.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _cannot(current, f"{reason(exc)}; nothing was written") from None
        raise
    finally:
        for _, _, handle in open_files:
            try:
                handle.close()
            except OSError:
                pass  # the data is already written and fsync'ed, or the write failed above
    return Written(renamed, _remove_stale(remove, renamed))


def _remove_stale(paths: list[Path], written: list[Path]) -> list[Path]:
    """Remove those of `paths` that are regular files now (`stale_files`), once `written` are in
    place; the paths removed. A file that cannot be removed is a WriteError saying what was
    written and what is left."""
    removed = []
    for path in stale_files(paths):
        try:
            os.unlink(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            were = "was" if len(written) == 1 else "were"
            raise WriteError(
                f"{path}: cannot remove it: {reason(exc)}; {', '.join(map(str, written))} "
                f"{were} written, and {path} is left from another output of this name: remove "
                "it before reading them together"
            ) from None
        removed.append(path)
    return removed


def _write_payload(handle: BinaryIO, payload: bytes) -> None:
    """Write bytes in blocks (the one place bytes reach the disk; tests patch it to fail)."""
    view = memoryview(payload)
    for start in range(0, len(view), 1 << 20):
        handle.write(view[start : start + (1 << 20)])


_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    """What a file of `mode` (st_mode of lstat) is that is neither a regular file nor a folder,
    in words: "a symbolic link", "a FIFO (named pipe)", "a character device", ..."""
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def size_text(size: int) -> str:
    """A byte count in words: "16 MB" (MB = 2**20 bytes, as the limits are set), "512 kB", "100 bytes"."""
    for unit, name in ((1 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "kB")):
        if size >= unit:
            return f"{size / unit:g} {name}" if size % unit == 0 else f"{size / unit:.1f} {name}"
    return f"{size} bytes"


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def inside_folders(
    path: str | os.PathLike, folders: Iterable[str | os.PathLike], *, resolved: bool = True
) -> bool:
    """Whether `path` lies inside one of `folders`, as written (made absolute, `..` folded) and,
    unless `resolved` is False, also with symbolic links resolved (the path's and the folders').

    The one check of every file a scenario or a result file leads econ to open
    (`econ.scenario.paths.resolve_inside`, the importers' `companion_refusal`). It reads no file,
    and its answer does not depend on whether `path` exists, so a refusal tells nothing about
    the files of the machine."""
    lexical = Path(os.path.abspath(path))
    roots = [Path(os.path.abspath(f)) for f in folders]
    if not any(_under(lexical, root) for root in roots):
        return False
    if not resolved:
        return True
    real = Path(os.path.realpath(lexical))
    return any(_under(real, Path(os.path.realpath(root))) for root in roots)


def _check_regular(
    path: str | os.PathLike, info: os.stat_result, limit: int, expected: str
) -> None:
    """ReadError unless `info` is a regular file of at most `limit` bytes; IsADirectoryError for a
    folder (callers word it their own way, as an open() of a folder would)."""
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
    if not stat.S_ISREG(info.st_mode):
        raise ReadError(
            path,
            f"not a regular file but {file_kind(info.st_mode)}; expected {expected}, a regular "
            f"file of at most {size_text(limit)}",
        )
    if info.st_size > limit:
        raise ReadError(path, f"larger than {size_text(limit)}; expected {expected}")


def _open_regular(path: str | os.PathLike, limit: int, expected: str) -> int:
    """A descriptor of `path` open to read, checked by path and by descriptor (`read_regular`)."""
    if not os.fspath(path):  # an unset variable in a script; os.stat("") says only ENOENT
        raise ReadError("''", f"an empty path; expected {expected}")
    _check_regular(path, os.stat(path), limit, expected)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        _check_regular(path, os.fstat(fd), limit, expected)
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_regular(path: str | os.PathLike, limit: int, expected: str) -> None:
    """What `read_regular` checks before it reads, without reading: the same errors for a file
    missing, a folder, a FIFO, a device, a file over `limit` or one that cannot be opened to read
    (permission denied)."""
    os.close(_open_regular(path, limit, expected))


def read_failure(path: str | os.PathLike, exc: OSError | ReadError, expected: str) -> str:
    """Why `read_regular` (or `check_regular`) could not read `path`, naming it: its ReadError,
    or "no such file", "is a folder, expected ...", "cannot be read (Permission denied)"."""
    if isinstance(exc, ReadError):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"{path}: no such file"
    if isinstance(exc, IsADirectoryError):
        return f"{path}: is a folder, expected {expected}"
    return f"{path}: cannot be read ({exc.strerror})"


def read_regular(path: str | os.PathLike, limit: int, expected: str) -> bytes:
    """The bytes of a regular file of at most `limit` bytes.

    Raises ReadError naming the file, what it is and the limit for a FIFO, a device, a socket or a
    file over `limit` (also one that grows past it while read), IsADirectoryError for a folder,
    and lets other OSErrors (not found, permission denied) pass to the caller, which words them.

    The file is checked twice: by path before it is opened (opening some devices has effects) and
    by descriptor after (the path may have been replaced in between); it is opened non-blocking,
    so a FIFO put in its place in between cannot make the open wait for a writer.
    """
    fd = _open_regular(path, limit, expected)
    try:
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise ReadError(path, f"larger than {size_text(limit)}; expected {expected}")
    return b"".join(chunks)


_WIDE_ROW = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
MAX_TABLE_BYTES = 64 * 1024 * 1024
"""Bytes of a table econ reads whole into memory (a sweep's override table, the column of an
`empirical(FILE)` distribution; CSV or Parquet), as of a market index: a million rows of a few
fields. Checked before reading (`check_regular`): a CSV read as text takes several times its
size in memory, and a 2 GB file took 4.4 GB before it was refused."""


def read_csv_table(path: str | os.PathLike, expected: str = "a CSV table"):
    """A CSV file of at most MAX_TABLE_BYTES (`read_regular`: ReadError naming the file beyond,
    or for a FIFO or a device) as a pandas DataFrame of text: its first line names the columns,
    each later line is a row. A row with more fields than the header is a ReadError naming the
    line.

    Read with its header as such, pandas would take such a row's extra first field as the row's
    index and move every value one column left (0.6,0.3,9 under two columns read as 0.3 and 9);
    read as plain lines, the parser refuses a line wider than the first. Other parser errors
    pass to the caller. Blank lines are skipped, as pandas skips them.
    """
    import io

    import pandas as pd

    content = read_regular(path, MAX_TABLE_BYTES, expected)
    try:
        frame = pd.read_csv(io.BytesIO(content), dtype=str, keep_default_na=False, header=None)
    except pd.errors.ParserError as exc:
        wide = _WIDE_ROW.search(str(exc))
        if not wide:
            raise
        columns, line, seen = wide.groups()
        raise ReadError(
            path,
            f"line {line} has {seen} fields; expected {columns}, one per column of the header "
            "(a value holding a comma is quoted)",
        ) from None
    _check_values(path, len(frame) - 1, len(frame.columns), expected)
    frame.columns = list(frame.iloc[0])
    return frame.iloc[1:].reset_index(drop=True)


MAX_TABLE_VALUES = 10_000_000
"""Values (rows times the columns read) of a table econ reads whole (`read_csv_table`,
`read_parquet_table`): a million rows of ten fields, about what MAX_TABLE_BYTES of CSV holds at
6 or 7 bytes a value and its comma (`0.6125,`). The size of a file does not bound what it holds
once read: a 64 MB CSV of 33,554,372 one-character rows took 3.4 GB and 20 s of `econ sweep`
before the sweep's size was refused, and a 218 kB Parquet file holding one constant column of
50,000,000 rows 5.4 GB and 35 s."""
TEXT_BATCH_ROWS = 1_024
"""Rows per batch of the text of a table read to count it, where its pages are not dictionaries."""


def _check_values(path: str | os.PathLike, rows: int, columns: int, expected: str) -> None:
    """ReadError unless rows times columns is at most MAX_TABLE_VALUES."""
    if rows * columns > MAX_TABLE_VALUES:
        raise ReadError(
            path,
            f"{rows:,} rows of {columns:,} column{'s' if columns != 1 else ''} are "
            f"{rows * columns:,} values; expected at most {MAX_TABLE_VALUES:,} (a million rows "
            f"of ten columns) in {expected}",
        )


def read_parquet_table(
    path: str | os.PathLike,
    expected: str = "a Parquet table",
    select: Callable[[list[str]], Iterable[str]] | None = None,
):
    """The columns of a Parquet file of at most MAX_TABLE_BYTES as a pandas DataFrame, as
    `pandas.read_parquet` reads them: all, or those `select` returns given the file's column
    names (it may raise, e.g. for a column the file lacks).

    Parquet compresses and encodes its columns, so a small file can hold far more than its size
    (a million rows of one repeated value take a few bytes). From the file's footer,
    before any column is read, a ReadError naming the file refuses more than MAX_TABLE_VALUES
    values (rows times the columns read), a nested column (a list, a record or a map: a row may
    hold any number of values) and columns read larger than MAX_TABLE_BYTES uncompressed. The
    text of the columns read (strings, bytes) is then counted, read as dictionaries where it is
    stored as one (each distinct text once: a long text in every row is stored once but read
    once a row), batch by batch otherwise, and more than MAX_TABLE_BYTES of it is refused,
    before the columns are read for the DataFrame.
    """
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    check_regular(path, MAX_TABLE_BYTES, expected)
    with pq.ParquetFile(path) as file:
        meta, schema = file.metadata, file.schema_arrow
        names = list(schema.names)
        chosen = set(names if select is None else select(names))
        fields = [field for field in schema if field.name in chosen]
        _check_values(path, meta.num_rows, len(fields), expected)
        for k, field in enumerate(schema, start=1):  # (named by position, not by its text)
            if field.name in chosen and pa.types.is_nested(field.type):
                raise ReadError(
                    path,
                    f"column {k} holds lists or records; expected {expected} of one value per "
                    "row and column",
                )
        leaves = [  # a column of the top level is a leaf of the same path and name
            i
            for i in range(meta.num_columns)
            if meta.schema.column(i).path in chosen
            and meta.schema.column(i).name == meta.schema.column(i).path
        ]
        stored = sum(
            meta.row_group(g).column(i).total_uncompressed_size
            for g in range(meta.num_row_groups)
            for i in leaves
        )
        if stored > MAX_TABLE_BYTES:
            raise ReadError(
                path,
                f"its columns read are {size_text(stored)} uncompressed; expected at most "
                f"{size_text(MAX_TABLE_BYTES)} uncompressed in {expected}",
            )
    text = [field.name for field in fields if _is_text(field.type)]
    if text:
        size = _text_bytes(path, text, meta.num_rows, schema)
        if size > MAX_TABLE_BYTES:
            raise ReadError(
                path,
                f"the text of its columns read is more than {size_text(MAX_TABLE_BYTES)} once "
                f"read (a text is stored once and read once a row); expected at most "
                f"{size_text(MAX_TABLE_BYTES)} of text in {expected}",
            )
    columns = None if select is None else [name for name in names if name in chosen]
    return pd.read_parquet(path, columns=columns)


def _is_text(kind) -> bool:
    """Whether values of the arrow type `kind` take a size of their own (strings, bytes)."""
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return not (
        pa.types.is_boolean(kind)
        or pa.types.is_integer(kind)
        or pa.types.is_floating(kind)
        or pa.types.is_decimal(kind)
        or pa.types.is_temporal(kind)
        or pa.types.is_null(kind)
    )


def _text_bytes(path: str | os.PathLike, names: list[str], rows: int, schema) -> int:
    """Bytes of the text of columns `names` once read (up to a little past MAX_TABLE_BYTES: the
    count stops there)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fixed = [n for n in names if pa.types.is_fixed_size_binary(schema.field(n).type)]
    size = sum(rows * schema.field(n).type.byte_width for n in fixed)
    names = [n for n in names if n not in fixed]
    if size > MAX_TABLE_BYTES or not names:
        return size
    try:  # (a dictionary is read as such: each distinct text once, and an index a row)
        with pq.ParquetFile(path, read_dictionary=names) as file:
            return size + _counted(file.iter_batches(columns=names), MAX_TABLE_BYTES - size)
    except (NotImplementedError, OSError):
        # delta-encoded text, which arrow reads as text only (it says so as an OSError; an error
        # of the file itself comes again below)
        with pq.ParquetFile(path) as file:
            batches = file.iter_batches(batch_size=TEXT_BATCH_ROWS, columns=names)
            return size + _counted(batches, MAX_TABLE_BYTES - size)


def _counted(batches, limit: int) -> int:
    """Bytes of the values of `batches` (string, binary or dictionary columns), counted until
    they pass `limit`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    size = 0
    for batch in batches:
        for column in batch.columns:
            if isinstance(column, pa.DictionaryArray):
                lengths = pc.binary_length(column.dictionary).take(column.indices)
            else:
                lengths = pc.binary_length(column)
            size += pc.sum(lengths).as_py() or 0
        if size > limit:
            break
    return size


def read_noted_csv(path: str | os.PathLike):
    """A CSV file whose first lines may be notes beginning with '#' (a shipped catalog's), as a
    pandas DataFrame: those lines are skipped, and a '#' later on is the data's own (pandas'
    comment="#" cut every field at it: a source "summary.json#1 (Location ...)" lost its row)."""
    import pandas as pd

    notes = 0
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            if not line.startswith("#"):
                break
            notes += 1
    return pd.read_csv(path, skiprows=notes)


def atomic_write(
    path: str | os.PathLike,
    data: Payload,
    overwrite: bool = False,
    *,
    sync: bool = True,
    clean: bool = True,
    advice: str = OVERWRITE_ADVICE,
) -> Path:
    """Write one file as `write_files` does; returns its path."""
    return write_files({path: data}, overwrite=overwrite, sync=sync, clean=clean, advice=advice)[0]


__all__ = [
    "MAX_TABLE_BYTES",
    "MAX_TABLE_VALUES",
    "ReadError",
    "Stream",
    "WriteError",
    "Written",
    "atomic_write",
    "check_regular",
    "check_targets",
    "file_kind",
    "file_mode",
    "inside_folders",
    "make_folder",
    "read_failure",
    "read_parquet_table",
    "read_regular",
    "reason",
    "remove_stale_temporaries",
    "size_text",
    "stale_files",
    "write_files",
]
