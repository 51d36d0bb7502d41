"""lnrepro.run.runners.docker without a container: what the docker runner would mount and set."""

from __future__ import annotations

from pathlib import Path

import pytest

from lnrepro.errors import EnvironmentProblem
from lnrepro.run.runners.base import OnHang, Place, TimeLimit
from lnrepro.run.runners.docker import DockerRunner, default_ccache_dir
from lnrepro.run.runners.local import LocalRunner


def test_ccache_is_ccaches_own_directory_when_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A developer who set CCACHE_DIR builds with that cache on the host (the local runner
    inherits it), so container builds use it too: mounted at the same path, named to ccache."""
    monkeypatch.setenv("CCACHE_DIR", str(tmp_path / "big-disk" / "ccache"))
    r = DockerRunner("img")
    assert r.ccache_dir == tmp_path / "big-disk" / "ccache"
    spec = r.spec(Place(tmp_path, {}, (tmp_path,)))
    assert ("CCACHE_DIR", str(tmp_path / "big-disk" / "ccache")) in spec.environment
    assert f"-v {tmp_path / 'big-disk' / 'ccache'}:{tmp_path / 'big-disk' / 'ccache'}" in (
        spec.shell_line(["true"])
    )


def test_ccache_defaults_to_lnrepros_own_under_the_xdg_cache_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("CCACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_ccache_dir() == tmp_path / "home" / ".cache" / "lnrepro" / "ccache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert DockerRunner("img").ccache_dir == tmp_path / "xdg" / "lnrepro" / "ccache"
    monkeypatch.setenv("CCACHE_DIR", "")  # empty is unset, as ccache reads it
    assert default_ccache_dir() == tmp_path / "xdg" / "lnrepro" / "ccache"


def test_a_ccache_directory_that_cannot_be_made_is_a_one_line_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """$CCACHE_DIR is the user's: one that cannot be made is an environment problem with its
    fix, found before any container starts (not an internal error, not a failed log write)."""
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("CCACHE_DIR", str(tmp_path / "a-file" / "ccache"))
    with pytest.raises(
        EnvironmentProblem, match=r"cannot make the ccache directory .*a-file/ccache"
    ):
        DockerRunner("img").run(
            ["true"], lambda _: None, Place(tmp_path, {}, (tmp_path,)), TimeLimit(10)
        )


def test_the_local_runner_runs_the_hang_hook_in_the_commands_place_before_the_kill(
    tmp_path: Path,
) -> None:
    """A command still running at its limit: the hook (tt-triage, as a rule) runs first, in the
    command's directory and environment, its output to its own sink, then the command is
    killed and the result says it timed out."""
    said: list[str] = []
    hook_out: list[bytes] = []
    hook = OnHang(
        ("sh", "-c", 'echo "hook in $(pwd) sees $MARK"'),
        10.0,
        hook_out.append,
        lambda: said.append("begin"),
        lambda code, timed_out: said.append(f"done {code} {timed_out}"),
    )
    place = Place(tmp_path, {"MARK": "the-place"}, (tmp_path,))
    out: list[bytes] = []
    res = LocalRunner().run(["sleep", "30"], out.append, place, TimeLimit(0.5, hook))
    assert res.timed_out
    assert said == ["begin", "done 0 False"]
    assert b"".join(hook_out).decode() == f"hook in {tmp_path} sees the-place\n"
    line = LocalRunner().shell_line(["sleep", "30"], place)
    assert line == f"cd {tmp_path} && env MARK=the-place sleep 30"
