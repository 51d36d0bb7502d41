"""The git door's submodule answers, read from files where git's own command is a shell script,
checked against git itself on real repositories."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from lnrepro.doors import gitops

FILE_OK = {
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "protocol.file.allow",
    "GIT_CONFIG_VALUE_0": "always",
}


def sh(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        **FILE_OK,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout


def commit_file(repo: Path, name: str, text: str) -> str:
    (repo / name).write_text(text)
    sh(repo, "add", name)
    sh(repo, "commit", "-q", "-m", f"{name}: {text}")
    return sh(repo, "rev-parse", "HEAD").strip()


def make_tree(tmp_path: Path, nested: bool) -> Path:
    """A superproject with the submodule tt_llk and, if ``nested``, umd, which has a submodule of
    its own."""
    for name in ("leaf", "llk", "umd", "top"):
        (tmp_path / name).mkdir()
        sh(tmp_path / name, "init", "-q", "-b", "main")
        commit_file(tmp_path / name, "a.txt", "1")
    sh(tmp_path / "umd", "submodule", "add", "-q", str(tmp_path / "leaf"), "third_party/leaf")
    sh(tmp_path / "umd", "commit", "-q", "-m", "leaf")
    top = tmp_path / "top"
    sh(top, "submodule", "add", "-q", str(tmp_path / "llk"), "tt_llk")
    if nested:
        sh(top, "submodule", "add", "-q", str(tmp_path / "umd"), "umd")
    sh(top, "commit", "-q", "-m", "submodules")
    sh(top, "submodule", "update", "-q", "--init", "--recursive")
    return top


@pytest.fixture(autouse=True)
def _file_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in FILE_OK.items():
        monkeypatch.setenv(k, v)


def lines(text: str) -> set[tuple[str, str, str]]:
    """(flag, commit, path) of each line; git adds a describe in parentheses."""
    return {(ln[0], ln[1:].split()[0], ln[1:].split()[1]) for ln in text.splitlines() if ln}


def test_submodule_status_says_what_git_says(tmp_path: Path) -> None:
    tree = make_tree(tmp_path, nested=True)

    def same() -> None:
        ours = gitops.submodule_status(tree)
        assert lines(ours) == lines(sh(tree, "submodule", "status", "--recursive")), ours

    same()  # all as recorded, the nested one too
    commit_file(tmp_path / "llk", "a.txt", "2")
    sh(tree / "tt_llk", "fetch", "-q", "origin")
    sh(tree / "tt_llk", "checkout", "-q", "--detach", "origin/main")
    same()  # one at another commit: '+'
    sh(tree / "tt_llk", "checkout", "-q", "main")  # a branch, not a detached HEAD
    sh(tree / "tt_llk", "reset", "-q", "--hard", "origin/main")
    same()
    sh(tree, "submodule", "deinit", "-q", "-f", "umd")
    same()  # not checked out: '-'
    assert {f for f, *_ in lines(gitops.submodule_status(tree))} == {"+", "-"}


def git_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A log of the git commands run from now on: ``git`` on PATH writes its arguments there,
    then runs the real one."""
    real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True).stdout
    bin_dir, log = tmp_path / "bin", tmp_path / "git-calls.log"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {real.strip()} "$@"\n')
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    log.write_text("")
    return log


def updates(log: Path) -> int:
    """How many ``git submodule update`` the door ran since the log was last emptied."""
    n = sum(" submodule update " in f" {line} " for line in log.read_text().splitlines())
    log.write_text("")
    return n


def test_checkout_clean_updates_submodules_only_when_they_need_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The update (some 26 processes) runs when a submodule is not at its recorded commit or a
    build changed what it tracks; not when every one is as recorded."""
    tree = make_tree(tmp_path, nested=False)
    first = sh(tree, "rev-parse", "HEAD").strip()
    bumped = commit_file(tmp_path / "llk", "a.txt", "2")
    sh(tree / "tt_llk", "fetch", "-q", "origin")
    sh(tree / "tt_llk", "checkout", "-q", "--detach", bumped)
    sh(tree, "commit", "-q", "-am", "bump llk")
    second = sh(tree, "rev-parse", "HEAD").strip()
    wt = tmp_path / "wt"
    sh(tree, "worktree", "add", "-q", "--detach", str(wt), first)
    log = git_calls(tmp_path, monkeypatch)

    gitops.checkout_clean(wt, first)  # a new worktree: its submodules are not checked out
    assert updates(log) == 1 and gitops.submodules_as_recorded(wt)
    gitops.checkout_clean(wt, second)  # the recorded llk moved
    assert updates(log) == 1 and sh(wt / "tt_llk", "rev-parse", "HEAD").strip() == bumped
    gitops.checkout_clean(wt, second)  # nothing to do
    assert updates(log) == 0
    (wt / "tt_llk" / "a.txt").write_text("a build wrote here")
    gitops.checkout_clean(wt, second)  # --force, as tt-metal's bisect script: put back
    assert updates(log) == 1 and (wt / "tt_llk" / "a.txt").read_text() == "2"


def test_submodules_with_their_own_are_left_to_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = make_tree(tmp_path, nested=True)
    log = git_calls(tmp_path, monkeypatch)
    assert not gitops.submodules_as_recorded(tree)  # umd has a submodule: git's update decides
    gitops.checkout_clean(tree, sh(tree, "rev-parse", "HEAD").strip())
    assert updates(log) == 1


def test_a_dirty_submodule_is_put_back_whatever_gitmodules_ignores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``submodule.<name>.ignore = dirty`` hides a build's changes from ``git status``; the
    update still runs and puts them back, as it always did."""
    tree = make_tree(tmp_path, nested=False)
    sh(tree, "config", "-f", ".gitmodules", "submodule.tt_llk.ignore", "dirty")
    sh(tree, "commit", "-q", "-am", "ignore dirty")
    (tree / "tt_llk" / "a.txt").write_text("a build wrote here")
    assert sh(tree, "status", "--porcelain") == ""  # git's own status says nothing
    log = git_calls(tmp_path, monkeypatch)
    gitops.checkout_clean(tree, sh(tree, "rev-parse", "HEAD").strip())
    assert updates(log) == 1 and (tree / "tt_llk" / "a.txt").read_text() == "1"
