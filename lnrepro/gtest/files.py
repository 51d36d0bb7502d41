"""Parsing gtest output that sits in files (the ``lnrepro parse`` command's core)."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import BinaryIO

from lnrepro.errors import InputError, MalformedLog
from lnrepro.gtest.console import ConsoleParser
from lnrepro.gtest.reportfile import merge, read_report
from lnrepro.hang.door import DeviceTimeoutScanner, mark_device_timeout
from lnrepro.model.gtest import GtestRun
from lnrepro.model.metrics import MetricRules


def parse_log_stream(
    fh: BinaryIO,
    name: str,
    *,
    report: Path | None = None,
    exit_code: int | None = None,
    rules: MetricRules | None = None,
) -> GtestRun:
    """Parse console output from an open binary stream (a file, or stdin for ``parse -``)."""
    parser = ConsoleParser(rules)
    timeout = DeviceTimeoutScanner()  # tt-metal's own hang detection: the rule run applies
    size, head = 0, b""
    try:
        while chunk := fh.read(1 << 22):
            head = head or chunk[:8192]
            size += len(chunk)
            parser.feed(chunk)
            timeout.feed(chunk)
    except OSError as exc:
        raise InputError(f"cannot read {name}: {exc.strerror}", "check the file") from None
    run = parser.close(exit_code)
    if timeout.seen:
        mark_device_timeout(run)
    if report is not None:
        rep = read_report(report)
        if not run.saw_gtest_output:
            run.warnings = [w for w in run.warnings if w != "no googletest output found"]
        return merge(run, rep)
    if size == 0:
        raise MalformedLog(
            f"{name} is empty", "capture the test binary's output with `2>&1 | tee LOG`"
        )
    if not run.saw_gtest_output:
        what = "a binary file" if b"\x00" in head else "text with no googletest markers"
        raise MalformedLog(
            f"no googletest output in {name}: it is {what}",
            "pass the console output of a gtest binary (the lines with [ RUN      ] etc.)",
        )
    return run


def parse_log_file(
    log: Path,
    *,
    report: Path | None = None,
    exit_code: int | None = None,
    rules: MetricRules | None = None,
) -> GtestRun:
    """Parse a console log (streaming, constant memory) and merge its report if given."""
    try:
        st = log.stat()
        if stat.S_ISDIR(st.st_mode):
            raise InputError(
                f"{log} is a directory, not a log file", "pass the file gtest's output went to"
            )
        if not stat.S_ISREG(st.st_mode):  # /dev/zero, a FIFO: they may never end
            raise InputError(
                f"{log} is not a regular file",
                "save the output to a file, or pipe it to `lnrepro parse -`",
            )
        with log.open("rb") as fh:
            return parse_log_stream(fh, str(log), report=report, exit_code=exit_code, rules=rules)
    except FileNotFoundError:
        raise InputError(f"no such file: {log}", "check the path") from None
    except PermissionError:
        raise InputError(f"cannot read {log}: permission denied", "check its permissions") from None
    except OSError as exc:
        raise InputError(f"cannot read {log}: {exc.strerror}", "check the path") from None
