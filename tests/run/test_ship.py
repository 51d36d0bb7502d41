"""Shipping a checkout to an engine that cannot see it: the manifest, the difference, the archive.

Pure functions over git's own listings and a real repository made here (git, no Docker).
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

from lnrepro.run import ship


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def repo_with_history(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    git(r, "config", "user.email", "t@example.com")
    git(r, "config", "user.name", "t")
    (r / "cmake").mkdir()
    (r / "cmake" / "version.cmake").write_text('set(v "$Format:%(describe)$")\n')
    (r / ".gitattributes").write_text("/cmake/version.cmake export-subst\n")
    (r / "build_metal.sh").write_text("#!/bin/sh\necho build\n")
    (r / "build_metal.sh").chmod(0o755)
    (r / "src.cpp").write_text("int main() {}\n")
    (r / "link").symlink_to("src.cpp")
    git(r, "add", "-A")
    git(r, "commit", "-qm", "one")
    git(r, "tag", "-a", "v0.60.0", "-m", "release")
    return r


def members(data: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        return {m.name: m for m in tf.getmembers()}


def test_manifest_covers_tracked_staged_and_untracked_files(tmp_path: Path) -> None:
    r = repo_with_history(tmp_path)
    clean, subst = ship.local_manifest(r)
    # build_metal.sh is a source, not a build directory; the symlink and the mode are kept
    assert set(clean) == {
        ".gitattributes",
        "build_metal.sh",
        "cmake/version.cmake",
        "link",
        "src.cpp",
    }
    assert clean["build_metal.sh"].startswith("100755:") and clean["link"].startswith("120000:")
    # git archive's rewriting, for this commit
    assert subst["cmake/version.cmake"] == b'set(v "v0.60.0")\n'
    assert clean["cmake/version.cmake"].endswith(":subst:" + git(r, "rev-parse", "HEAD").strip())

    (r / "src.cpp").write_text("int main() { return 1; }\n")  # changed, not staged
    (r / "picked.cpp").write_text("// a picked test\n")  # a cherry-pick --no-commit stages it
    git(r, "add", "picked.cpp")
    (r / "untracked.txt").write_text("x\n")
    (r / "build_Release").mkdir()
    (r / "build_Release" / "out.so").write_text("binary\n")  # a build output: never shipped
    (r / "link").unlink()
    changed, _ = ship.local_manifest(r)
    t = ship.diff(clean, changed)
    assert set(t.send) == {"src.cpp", "picked.cpp", "untracked.txt"}
    assert t.delete == ("link",)
    assert ":wt:" in changed["src.cpp"] and changed["picked.cpp"].startswith("100644:")


def test_only_what_changed_is_sent_and_the_archive_says_what_to_delete(tmp_path: Path) -> None:
    r = repo_with_history(tmp_path)
    first, subst = ship.local_manifest(r)
    everything = ship.diff({}, first)
    data = ship.archive(r, "repo", everything, first, subst, (1234, 99))
    got = members(data)
    # the tree's top directory first (it makes the volume the user's), owned by the user
    assert next(iter(got)) == "repo" and got["repo"].isdir() and got["repo"].uid == 1234
    assert all(m.uid == 1234 and m.gid == 99 for m in got.values())
    assert got["repo/link"].issym() and got["repo/link"].linkname == "src.cpp"
    assert got["repo/build_metal.sh"].mode & 0o111
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        f = tf.extractfile("repo/cmake/version.cmake")
        assert f is not None and b"v0.60.0" in f.read()  # the rewritten bytes, not the file's
        m = tf.extractfile("repo/" + ship.MANIFEST)
        assert m is not None and ship.parse_manifest(m.read()) == first

    (r / "src.cpp").unlink()
    second, subst = ship.local_manifest(r)
    t = ship.diff(first, second)
    assert t.send == () and t.delete == ("src.cpp",)
    assert set(members(ship.archive(r, "repo", t, second, subst, (1234, 99)))) == {
        "repo",
        "repo/" + ship.MANIFEST,
    }
    assert ship.deletions(t.delete) == [["rm", "-rf", "--", "src.cpp"]]
    many = [f"d/{i:05d}-" + "x" * 90 for i in range(2000)]  # ~200 kB of paths
    lines = ship.deletions(many)
    assert len(lines) > 1 and [p for ln in lines for p in ln[3:]] == many
    assert all(sum(len(p) + 1 for p in ln[3:]) <= ship.ARG_BYTES for ln in lines)


def test_shipped_files_are_newer_than_anything_built_before(tmp_path: Path) -> None:
    """make and ninja rebuild what is older than its sources: a bisect goes back in history,
    so a shipped file gets the time of shipping, not the checkout's (or the commit's) time."""
    import os
    import time

    r = repo_with_history(tmp_path)
    old = time.time() - 30 * 86400
    os.utime(r / "src.cpp", (old, old))
    m, subst = ship.local_manifest(r)
    before = time.time()
    got = members(ship.archive(r, "repo", ship.diff({}, m), m, subst, (0, 0)))
    assert got["repo/src.cpp"].mtime >= int(before)


def test_a_manifest_that_is_not_ours_ships_everything() -> None:
    assert ship.parse_manifest(None) == {}
    assert ship.parse_manifest(b"not json") == {}
    assert ship.parse_manifest(b'{"schema": "other/1", "files": {"a": "b"}}') == {}
    assert ship.parse_manifest(ship.manifest_bytes({"a": "100644:x"})) == {"a": "100644:x"}
