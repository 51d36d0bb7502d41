"""Parsing gtest output that sits in files (the ``lnrepro parse`` command's core)."""

from __future__ import annotations

from pathlib import Path

from lnrepro.errors import InputError, MalformedLog
from lnrepro.gtest.console import ConsoleParser
from lnrepro.gtest.model import GtestRun
from lnrepro.gtest.report import merge, read_report
from lnrepro.metrics import MetricRules


def parse_log_file(
    log: Path,
    *,
    report: Path | None = None,
    exit_code: int | None = None,
    rules: MetricRules | None = None,
) -> GtestRun:
    """Parse a console log (streaming, constant memory) and merge its report if given."""
    parser = ConsoleParser(rules)
    size = 0
    binary = False
    try:
        with log.open("rb") as fh:
            head = fh.read(8192)
            binary = b"\x00" in head
            size += len(head)
            parser.feed(head)
            while chunk := fh.read(1 << 22):
                size += len(chunk)
                parser.feed(chunk)
    except FileNotFoundError:
        raise InputError(f"no such file: {log}", "check the path") from None
    except IsADirectoryError:
        raise InputError(
            f"{log} is a directory, not a log file", "pass the file gtest's output went to"
        ) from None
    except OSError as exc:
        raise InputError(f"cannot read {log}: {exc.strerror}", "check permissions") from None
    run = parser.close(exit_code)
    if report is not None:
        rep = read_report(report)
        if not run.saw_gtest_output:
            run.warnings = [w for w in run.warnings if w != "no googletest output found"]
        return merge(run, rep)
    if size == 0:
        raise MalformedLog(
            f"{log} is empty", "capture the test binary's output with `2>&1 | tee LOG`"
        )
    if not run.saw_gtest_output:
        what = "a binary file" if binary else "text with no googletest markers"
        raise MalformedLog(
            f"no googletest output in {log}: it is {what}",
            "pass the console output of a gtest binary (the lines with [ RUN      ] etc.)",
        )
    return run
