"""Ctrl-C in a shrink: the best case found so far is kept and printed with its rerun
line, and a shrink whose state is saved (a --command, a checkout) says so with its --resume line;
not a bare ``lnrepro: interrupted``."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from rich.console import Console

from lnrepro import api
from lnrepro.errors import Interrupted
from lnrepro.model.requests import EmulatorSpec
from lnrepro.model.shrink import Judged, ShrinkRequest
from lnrepro.present.shrink import RichShrinkEvents
from tests.harness import lnrepro, lnrepro_process

TEST = "BugRepro_Deterministic_2048Features"


class CtrlC(RichShrinkEvents):
    """The real progress display, and Ctrl-C pressed once it shows a failing case: the
    interrupt arrives where Python delivers a signal, in the middle of the search."""

    def judged(self, j: Judged, candidates: int, evaluations: int, best: Judged | None) -> None:
        super().judged(j, candidates, evaluations, best)
        if best is not None and candidates >= 2:
            raise Interrupted()


def test_ctrl_c_on_the_emulator_prints_the_best_case_so_far_and_its_rerun_line() -> None:
    out = io.StringIO()
    events = CtrlC(Console(file=out, width=80, force_terminal=False))
    with pytest.raises(KeyboardInterrupt), events:
        api.shrink(ShrinkRequest(TEST, EmulatorSpec()), events)
    text = out.getvalue()
    assert "stopped: the best case so far (it may not be the smallest)" in text, text
    assert "case 1x" in text and "margin " in text
    assert "rerun env 'LNREPRO_CASE=" in text and "lnrepro run --backend emulator" in text
    assert events.saved is None and events.best is not None


def test_ctrl_c_in_a_command_shrink_says_the_state_is_saved_and_how_to_resume(
    tmp_path: Path,
) -> None:
    """The command presses Ctrl-C itself (SIGINT to lnrepro) on its 13th run: by then a case has
    failed its 5 runs, and the state is on disk."""
    count = tmp_path / "count"
    script = tmp_path / "probe.py"
    script.write_text(
        "import os, pathlib, signal, sys\n"
        f"c = pathlib.Path({str(count)!r})\n"
        "n = int(c.read_text()) + 1 if c.exists() else 1\n"
        "c.write_text(str(n))\n"
        "if n == 13:\n"
        "    os.kill(os.getppid(), signal.SIGINT)\n"
        "sys.exit(1)\n"
    )
    runs = tmp_path / "runs"
    # in this process: the SIGINT is this test's, and the harness puts pytest's handler back
    code, _, err = lnrepro(
        "shrink", "--test", TEST, "--command", f"{sys.executable} {script}", "--record-dir", runs
    )
    assert code == 130, err
    [saved] = list(runs.iterdir())
    last = err.strip().splitlines()[-1]
    assert last == (
        f"lnrepro: interrupted — its state is saved in {saved}: "
        f"`lnrepro shrink --resume {saved}` continues it"
    ), err
    assert "stopped: the best case so far" in err and "rerun env 'LNREPRO_CASE=" in err
    # and the line works: the resumed shrink runs only what was not judged
    done = lnrepro_process("shrink", "--resume", saved, "--json", timeout=600)
    assert done.returncode == 1, done.stderr
