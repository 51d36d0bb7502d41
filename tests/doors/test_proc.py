"""The process door: groups, timeouts, escalation, leftovers — real processes, small and fast."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from lnrepro.doors import proc
from lnrepro.errors import EnvironmentProblem


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def run(argv: list[str], **kw: object) -> tuple[proc.ProcResult, str]:
    out: list[bytes] = []
    res = proc.stream(argv, out.append, **kw)  # type: ignore[arg-type]
    return res, b"".join(out).decode()


def test_timeout_kills_the_whole_group() -> None:
    res, out = run(["sh", "-c", "sleep 30 & echo $!; sleep 30"], timeout=1.0)
    assert res.timed_out and res.exit_code == 124 and res.seconds < 4
    assert not alive(int(out.split()[0]))  # the grandchild too, not only the shell


def test_a_child_that_ignores_sigterm_is_killed_after_the_grace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(proc, "KILL_GRACE_S", 0.5)
    res, out = run(["sh", "-c", 'trap "" TERM; echo $$; sleep 30'], timeout=0.5)
    assert res.timed_out and res.seconds < 4
    assert not alive(int(out.split()[0]))


def test_the_child_leads_its_own_session() -> None:
    code = "import os; print(os.getsid(0) == os.getpid() == os.getpgid(0))"
    res, out = run([sys.executable, "-c", code])
    assert res.exit_code == 0 and out.strip() == "True"


def test_exit_code_is_the_childs_own_and_leftovers_are_killed() -> None:
    res, out = run(["sh", "-c", "sleep 30 & echo $!; exit 3"], timeout=30)
    assert res.exit_code == 3 and not res.timed_out and res.seconds < 5
    assert res.leftovers == 1 and not alive(int(out.split()[0]))


def test_signals_are_shell_codes() -> None:
    assert run(["sh", "-c", "kill -SEGV $$"])[0].exit_code == 139
    assert run(["sh", "-c", "kill -ABRT $$"])[0].exit_code == 134


def test_programs_that_cannot_start(tmp_path: Path) -> None:
    junk = tmp_path / "junk"
    junk.write_bytes(b"\x7fELF" + os.urandom(64))
    junk.chmod(0o755)
    with pytest.raises(EnvironmentProblem, match="not an executable"):
        run([str(junk)])
    with pytest.raises(EnvironmentProblem, match="no such program"):
        run([str(tmp_path / "absent")])


def test_a_signal_held_over_a_failure_still_wins() -> None:
    """A signal that came while a create was held, which then failed (the engine refused): the
    signal is raised, the failure its context, and nothing stays held for later."""
    from lnrepro.errors import Terminated

    with pytest.raises(Terminated) as caught, proc.signals_held():
        proc.raise_or_hold(Terminated(15))  # what the handler does: held, not raised
        raise OSError("the engine refused")
    assert isinstance(caught.value.__context__, OSError)
    with proc.signals_held():
        pass  # nothing left over


def test_a_second_signal_during_a_hold_is_raised_at_once() -> None:
    from lnrepro.errors import Terminated

    with pytest.raises(Terminated), proc.signals_held():
        proc.raise_or_hold(Terminated(15))  # held
        proc.raise_or_hold(Terminated(15))  # the user insists
        raise AssertionError("not reached")
