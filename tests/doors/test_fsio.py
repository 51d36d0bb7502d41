"""The write door's log writer, on real files: only the log's own failures are write errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from lnrepro.doors.fsio import log_writer
from lnrepro.errors import DiskFull, EnvironmentProblem


def test_what_the_code_around_the_log_raises_goes_through_as_it_is(tmp_path: Path) -> None:
    # the Docker SDK's and requests' errors are OSErrors: one of them is not a failed write
    log = tmp_path / "build.log"
    with pytest.raises(ConnectionResetError), log_writer(log) as put:
        put(b"$ cmake --build build\n")
        raise ConnectionResetError("the engine dropped the connection")
    assert log.read_bytes() == b"$ cmake --build build\n"  # what was written is kept


def test_the_logs_own_failures_are_one_line_errors(tmp_path: Path) -> None:
    missing = pytest.raises(EnvironmentProblem, match=r"cannot write .*nowhere/build.log")
    with missing, log_writer(tmp_path / "nowhere" / "build.log"):
        pass
    full = pytest.raises(DiskFull, match=r"no space left on the device writing /dev/full")
    with full, log_writer(Path("/dev/full")) as put:  # ENOSPC, at the write or at the flush
        put(b"x" * (1 << 20))
