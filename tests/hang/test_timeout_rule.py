"""One rule for tt-metal's own dispatch timeout (lnrepro.hang.door.mark_device_timeout): on a
console where it fired and the binary aborted, `parse --exit-code 134`, `explain` and `run` all
call the test a hang. Before, parse said CRASHED while explain and run said HANG."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from lnrepro import api
from lnrepro.model.gtest import TestStatus
from lnrepro.model.requests import ExplainRequest, ParseRequest
from tests.hang.triage import corpus as C

# The shape tt-metal prints (metal_context.cpp on_dispatch_timeout_detected at 790b74b58a87, and
# system_memory_manager.cpp's TT_THROW), as the look-alike's binary prints it (test_dispatch.py):
# the log line, the command, its output, the error, then libstdc++'s abort on the uncaught throw.
HEAD = (
    "Note: Google Test filter = *SingleCore*\n"
    "[==========] Running 1 test from 1 test suite.\n"
    "[----------] 1 test from LayerNormBw\n"
    "[ RUN      ] LayerNormBw.SingleCore\n"
    "2026-11-29 10:00:00.000 | error    |           Metal | Timeout detected (metal_context.cpp:1)\n"
    "2026-11-29 10:00:00.000 | info     |           Metal | Executing command: "
    "./tools/tt-triage.py --disable-progress --skip-version-check (metal_context.cpp:2)\n"
)
TAIL = (
    "terminate called after throwing an instance of 'std::runtime_error'\n"
    "  what():  TIMEOUT: device timeout, potential hang detected, the device is unrecoverable\n"
)


def _console(tmp_path: Path) -> Path:
    log = tmp_path / "console.log"
    log.write_text(HEAD + C.rich_framework(C.STARVED) + TAIL, encoding="utf-8")
    return log


@pytest.mark.parametrize("exit_code", [134, None])
def test_parse_calls_tt_metals_timeout_a_hang(tmp_path: Path, exit_code: int | None) -> None:
    run = api.parse(ParseRequest(log=_console(tmp_path), exit_code=exit_code))
    (t,) = run.tests
    assert t.status is TestStatus.TIMEOUT, t
    assert t.crash is not None and "dispatch timeout" in (t.crash.reason or "")
    assert any("dispatch timeout" in w for w in run.warnings), run.warnings


def test_parse_from_standard_input_says_the_same(tmp_path: Path) -> None:
    data = _console(tmp_path).read_bytes()
    run = api.parse(ParseRequest(log=None, exit_code=134), io.BytesIO(data))
    assert [t.status for t in run.tests] == [TestStatus.TIMEOUT]


def test_explain_reads_the_same_console_as_a_hang(tmp_path: Path) -> None:
    found = api.explain(ExplainRequest(ref=str(_console(tmp_path))))
    assert isinstance(found, api.Explanation)
    assert found.hangs and found.hangs[0][1].hung
    assert ("LayerNormBw.SingleCore", "TIMEOUT") in found.left_out, found.left_out


def test_explain_dash_reads_standard_input(tmp_path: Path) -> None:
    """`explain -` reads a paste piped in, as `parse -` does."""
    text = C.quoted(C.rich_framework(C.CYCLE, 100), 2).encode()
    found = api.explain(ExplainRequest(ref="-"), None, io.BytesIO(text))
    assert isinstance(found, api.HangText)
    assert str(found.path) == "standard input"
    g = found.reading.diagnosis.primary
    assert g is not None and g.risc == "NCRISC"
