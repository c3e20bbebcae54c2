"""Run tpusim from Python and read what it reports.

Each function runs one `tpusim` subcommand in a child process, asks it for
JSON (the same file its `--json` flag writes) and returns a `Result` holding
the exit code, the parsed JSON and the printed text. Exit codes 0 and 1 are
answers (1: a check failed, a regression was found); exit code 2 is bad input
or usage and raises `TpusimError` with tpusim's message, which names the file,
line and column. Only the standard library is used.

    import tpusim
    timed = tpusim.execute("model.hlo", chip="tpu-v5e", mode="timing")
    print(timed.data["time_us"])
    verdict = tpusim.diff("before.hlo", "after.hlo", chip="tpu-v5e")
    if not verdict.ok:
        print(verdict.data["headline"])

The binary is `$TPUSIM` when set, else `tpusim` on the PATH; every function
also takes `binary=`.
"""

import dataclasses
import json
import os
import shutil
import subprocess
import tempfile
from typing import Any, Iterable, Optional, Sequence, Union

__all__ = ["Result", "TpusimError", "collective", "diff", "execute", "find_binary", "run",
           "validate"]

PathLike = Union[str, os.PathLike]


class TpusimError(Exception):
    """tpusim could not be run, or refused its input (exit code 2)."""

    def __init__(self, message: str, returncode: Optional[int] = None, stderr: str = ""):
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


@dataclasses.dataclass
class Result:
    """What one tpusim run answered."""

    returncode: int  # 0: passed or nothing found; 1: a check failed or a regression
    data: Any  # the parsed JSON report
    stdout: str  # the report printed for a person
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def find_binary(binary: Optional[PathLike] = None) -> str:
    """The tpusim executable: `binary`, else $TPUSIM, else `tpusim` on the PATH."""
    chosen = binary or os.environ.get("TPUSIM") or shutil.which("tpusim")
    if not chosen:
        raise TpusimError("tpusim not found: put it on the PATH or set $TPUSIM")
    if not (os.path.isfile(chosen) and os.access(chosen, os.X_OK)):
        raise TpusimError(f"tpusim not found: {chosen} is not an executable file")
    return os.fspath(chosen)


def _invoke(binary: Optional[PathLike], argv: Sequence[str]) -> Result:
    """Runs `tpusim ARGV --json FILE` and parses FILE; exit code 2 raises."""
    with tempfile.TemporaryDirectory(prefix="tpusim_py.") as scratch:
        report = os.path.join(scratch, "report.json")
        command = [find_binary(binary), *argv, "--json", report]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode not in (0, 1):
            message = done.stderr.strip() or f"exit code {done.returncode}"
            raise TpusimError(f"{' '.join(command[:2])}: {message}", done.returncode, done.stderr)
        try:
            with open(report, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            raise TpusimError(f"{' '.join(command[:2])} wrote no JSON report: {e}",
                              done.returncode, done.stderr) from e
    return Result(done.returncode, data, done.stdout, done.stderr)


def _options(**flags: Any) -> list:
    """--name VALUE for each flag that is set; True gives a bare --name."""
    argv = []
    for name, value in flags.items():
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            argv.append(flag)
        else:
            argv += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    return argv


def execute(module: PathLike, *, chip: Optional[str] = None, mode: Optional[str] = None,
            args: Iterable[str] = (), binary: Optional[PathLike] = None) -> Result:
    """`tpusim exec`: the module's metrics (cycles, time_us, flops, hbm_bytes,
    ops[] per executed instruction, outputs[]). `args` passes any other flag."""
    return _invoke(binary, ["exec", *_options(chip=chip, mode=mode), *args, os.fspath(module)])


def diff(before: PathLike, after: PathLike, *, chip: Optional[str] = None,
         args: Iterable[str] = (), binary: Optional[PathLike] = None) -> Result:
    """`tpusim diff`: the verdict, its headline and cause, and the structure,
    numerics and performance comparisons; returncode 1 is a regression."""
    return _invoke(binary, ["diff", *_options(chip=chip), *args, os.fspath(before),
                            os.fspath(after)])


def run(paths: Union[PathLike, Iterable[PathLike]], *, golden_dir: Optional[PathLike] = None,
        name_glob: Optional[str] = None, update_golden: bool = False, args: Iterable[str] = (),
        binary: Optional[PathLike] = None) -> Result:
    """`tpusim run`: the suite report (passed, failed, stale, errors, and per
    scenario its status, messages and metrics); returncode 1 is a failure.
    `name_glob` runs only the scenarios whose name matches (`--filter`)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return _invoke(binary, ["run", *_options(golden_dir=golden_dir, filter=name_glob,
                                             update_golden=update_golden), *args,
                            *[os.fspath(p) for p in paths]])


def validate(suite: Optional[PathLike] = None, *, family: Optional[str] = None,
             chip: Optional[str] = None, args: Iterable[str] = (),
             binary: Optional[PathLike] = None) -> Result:
    """`tpusim validate`: every row and family of a validation suite against
    its published times; returncode 1 is a family over its bound."""
    positional = [os.fspath(suite)] if suite is not None else []
    return _invoke(binary, ["validate", *_options(family=family, chip=chip), *args, *positional])


def collective(args: Iterable[str], *, binary: Optional[PathLike] = None) -> Result:
    """`tpusim collective ARGS`: the timed rows of one collective or a sweep."""
    return _invoke(binary, ["collective", *args])
