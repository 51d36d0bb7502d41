"""The model behind googletest's command line: its flags, console output, reports and exit
status (``python -m lnrepro.emulator.cbmodel``)."""

from __future__ import annotations

import fnmatch
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from .config import ENV_CONFIG, SUITE, TEST_FILE, CbConfig, ConfigError, load_config
from .cores import Outcome, simulate
from .device import write_device_state
from .dprint import Dprint, dprint_cores, dprint_out
from .report import KINDS, Reported, report_text
from .timeout import dispatch_timeout
from .watcher import Program, Watcher, kernel_ids, watcher_interval

GREEN, RED, RESET = "\x1b[0;32m", "\x1b[0;31m", "\x1b[m"


USAGE = f"""\
lnrepro's circular-buffer model of a reader/compute/writer op, as a googletest binary.

googletest flags:
  --gtest_list_tests            list the tests instead of running them
  --gtest_filter=POS[-NEG]      ':'-separated wildcard patterns (* and ?)
  --gtest_output=json:PATH|xml:PATH   write a report
  --gtest_color=yes|no|auto     colour the markers
  --gtest_brief=1               print only failures

model:
  --cb_config=FILE              the model's numbers, JSON or TOML (or env {ENV_CONFIG})

environment, as tt-metal reads it:
  TT_METAL_WATCHER=<s>|<n>ms    on a deadlock, write watcher.log every interval
  TT_METAL_LOGS_PATH=DIR        where generated/watcher/watcher.log goes (default: cwd)
  TT_METAL_WATCHER_APPEND=1     append to watcher.log instead of rewriting it
  TT_METAL_DPRINT_CORES=...     print DPRINT lines of these cores' CB calls
  TT_METAL_DPRINT_FILE=PATH     ... into this file instead of stdout
  TT_METAL_OPERATION_TIMEOUT_SECONDS=<s>   on a deadlock, give up after s seconds: run
                                the timeout command, then abort with tt-metal's TIMEOUT error
  TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE=<cmd>   the command (tt-triage, as a rule)
"""


@dataclass(frozen=True)
class Case:
    name: str
    line: int
    cores: Callable[[CbConfig], list[tuple[int, int]]]

    def full_name(self) -> str:
        return f"{SUITE}.{self.name}"


def cases(cfg: CbConfig) -> list[Case]:
    return [
        Case(cfg.test_name, 42, lambda c: c.cores),
        Case(f"{cfg.test_name}_SingleCore", 77, lambda c: [(0, 0)]),
    ]


@dataclass
class Options:
    list_tests: bool = False
    gtest_filter: str = "*"
    output: str | None = None
    color: str = "auto"
    brief: bool = False
    config: str | None = None


def parse_args(argv: Sequence[str], env: dict[str, str]) -> Options:
    opts = Options(
        gtest_filter=env.get("GTEST_FILTER", "*"),
        output=env.get("GTEST_OUTPUT"),
        color=env.get("GTEST_COLOR", "auto").lower(),
        config=env.get(ENV_CONFIG),
    )
    for arg in argv:
        name, has, value = arg.lstrip("-").partition("=")
        if arg in ("-h", "--help"):
            raise ConfigError("help")
        if name == "gtest_list_tests":
            opts.list_tests = not has or value not in ("0", "false", "no")
        elif name == "gtest_filter":
            opts.gtest_filter = value
        elif name == "gtest_output":
            opts.output = value
        elif name == "gtest_color":
            opts.color = value.lower()
        elif name == "gtest_brief":
            opts.brief = not has or value not in ("0", "false", "no")
        elif name == "cb_config":
            opts.config = value
    return opts


def selected(all_cases: list[Case], gtest_filter: str) -> list[Case]:
    pos, _, neg = gtest_filter.partition("-")

    def hit(name: str, patterns: str) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in patterns.split(":") if p)

    return [
        c
        for c in all_cases
        if hit(c.full_name(), pos or "*") and not (neg and hit(c.full_name(), neg))
    ]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@dataclass
class Result:
    case: Case
    failures: list[tuple[int, str]]
    ms: int
    started: float


def check(cfg: CbConfig, outcome: Outcome) -> list[tuple[int, str]]:
    """The test's assertions on a run that finished."""
    expected = cfg.blocks_per_core * cfg.compute_out_pages_per_block
    fails = []
    for c in outcome.cores:
        if c.in_avail or c.out_avail:
            fails.append(
                (
                    58,
                    "Expected equality of these values:\n  pages_left_in_cbs\n"
                    f"    Which is: {c.in_avail + c.out_avail}\n  0\n"
                    f"core ({c.x},{c.y}) finished with pages left in its circular buffers",
                )
            )
            break
        if c.written != expected:
            fails.append(
                (
                    61,
                    f"Expected equality of these values:\n  pages_written\n    Which is: {c.written}\n"
                    f"  expected_pages\n    Which is: {expected}",
                )
            )
            break
    return fails


def run(opts: Options, cfg: CbConfig, env: dict[str, str], out: TextIO) -> int:
    chosen = selected(cases(cfg), opts.gtest_filter)
    if opts.list_tests:
        if chosen:
            out.write(f"{SUITE}.\n" + "".join(f"  {c.name}\n" for c in chosen))
        return 0
    color = opts.color in ("yes", "true", "t", "1") or (
        opts.color == "auto" and out.isatty() and env.get("TERM", "dumb") != "dumb"
    )

    def mark(tag: str, text: str, colour: str = GREEN, always: bool = False) -> None:
        if opts.brief and not always:
            return
        out.write(f"{colour}{tag} {RESET}{text}\n" if color else f"{tag} {text}\n")

    interval = watcher_interval(env.get("TT_METAL_WATCHER"))
    watcher = Watcher(env, interval, out) if interval is not None else None
    ids = kernel_ids(cfg)
    if watcher is not None:
        watcher.names(ids)
    dout = dprint_out(env, out)
    say = Dprint(dprint_cores(env.get("TT_METAL_DPRINT_CORES"), cfg), dout)
    if opts.gtest_filter != "*" and not opts.brief:
        out.write(f"Note: Google Test filter = {opts.gtest_filter}\n")
    mark(
        "[==========]",
        f"Running {_plural(len(chosen), 'test')} from {_plural(1 if chosen else 0, 'test suite')}.",
    )
    mark("[----------]", "Global test environment set-up.")
    t0, started = time.perf_counter(), time.time()
    results: list[Result] = []
    last: Program | None = None
    if chosen:
        mark("[----------]", f"{_plural(len(chosen), 'test')} from {SUITE}")
    for h_id, case in enumerate(chosen, 1):
        mark("[ RUN      ]", case.full_name())
        out.flush()
        c0, s0 = time.perf_counter(), time.time()
        cores = case.cores(cfg)
        outcome = simulate(cfg, cores, say)
        dout.flush()
        last = Program(cfg, h_id, {(c.x, c.y): c for c in outcome.cores}, ids)
        if outcome.deadlocked:
            out.flush()
            write_device_state(last, env)
            error = dispatch_timeout(watcher, last, env, out)
            out.write(
                f"terminate called after throwing an instance of 'std::runtime_error'\n"
                f"  what():  {error}\n"
            )
            out.flush()
            os.abort()  # an uncaught TT_THROW in a googletest binary
        fails = check(cfg, outcome)
        ms = int((time.perf_counter() - c0) * 1000)
        for line, message in fails:
            out.write(f"{TEST_FILE}:{line}: Failure\n{message}\n")
        results.append(Result(case, fails, ms, s0))
        if fails:
            mark("[  FAILED  ]", f"{case.full_name()} ({ms} ms)", RED, always=True)
        else:
            mark("[       OK ]", f"{case.full_name()} ({ms} ms)")
    total = int((time.perf_counter() - t0) * 1000)
    if chosen:
        mark("[----------]", f"{_plural(len(chosen), 'test')} from {SUITE} ({total} ms total)")
        if not opts.brief:
            out.write("\n")
    if watcher is not None:
        if last is not None:
            watcher.dump(last)
        watcher.detach()
    if dout is not out:
        dout.close()
    mark("[----------]", "Global test environment tear-down")
    mark(
        "[==========]",
        f"{_plural(len(chosen), 'test')} from {_plural(1 if chosen else 0, 'test suite')} ran. ({total} ms total)",
        always=True,
    )
    passed = [r for r in results if not r.failures]
    failed = [r for r in results if r.failures]
    mark("[  PASSED  ]", f"{_plural(len(passed), 'test')}.", always=True)
    if failed:
        mark("[  FAILED  ]", f"{_plural(len(failed), 'test')}, listed below:", RED, always=True)
        for r in failed:
            mark("[  FAILED  ]", r.case.full_name(), RED, always=True)
        out.write(f"\n{len(failed):2d} FAILED {'TEST' if len(failed) == 1 else 'TESTS'}\n")
    if opts.output:
        write_report(opts.output, results, started, total)
    out.flush()
    return 1 if failed else 0


def write_report(spec: str, results: list[Result], started: float, total_ms: int) -> None:
    """googletest's JSON or XML report (``--gtest_output=json:PATH`` / ``xml:PATH``)."""
    kind, _, where = spec.partition(":")
    if kind not in KINDS:
        raise ConfigError(f"--gtest_output: unknown format {kind!r} (use json:PATH or xml:PATH)")
    path = Path(where or f"test_detail.{kind}")
    if where.endswith("/") or path.is_dir():
        path = path / f"cbmodel.{kind}"
    path.parent.mkdir(parents=True, exist_ok=True)
    reported = [
        Reported(
            r.case.name,
            TEST_FILE,
            r.case.line,
            r.started,
            r.ms,
            [(TEST_FILE, ln, m) for ln, m in r.failures],
        )
        for r in results
    ]
    text = report_text(kind, SUITE if results else None, reported, started, total_ms)
    path.write_text(text, encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ)
    try:
        opts = parse_args(args, env)
        cfg = load_config(Path(opts.config)) if opts.config else CbConfig()
        return run(opts, cfg, env, sys.stdout)
    except ConfigError as exc:
        if str(exc) == "help":
            sys.stdout.write(USAGE)
            return 0
        sys.stderr.write(f"lnrepro cbmodel: {exc}\n")
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
