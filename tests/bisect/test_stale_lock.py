"""A stale bisect lock is taken over whatever it holds, bytes that are not text included: the
bisect runs (no internal error) and the lock is gone after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from lnrepro.doors.store import lock_owner
from tests.bisect.test_resume_and_repeat_flags import tiny_repo
from tests.harness import lnrepro


@pytest.mark.parametrize(
    "garbage", [b"\xff\xfe\x00\x9c garbage", b"", b"12/34", b"\x00" * 64], ids=repr
)
def test_a_lock_that_is_not_an_owner_is_stale(garbage: bytes, tmp_path: Path) -> None:
    lock = tmp_path / "bisect.lock"
    lock.write_bytes(garbage)
    assert lock_owner(lock) is None


def test_a_bisect_takes_over_a_lock_of_garbage(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shas = tiny_repo(repo)
    lock = repo / ".git" / "lnrepro" / "bisect.lock"
    lock.parent.mkdir(parents=True)
    lock.write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00")  # not text
    argv = ["bisect", "--repo", str(repo), "--good", shas[0], "--bad", shas[-1]]
    code, _, err = lnrepro(*argv, "--command", "grep -q 0 bug", "--record-dir", tmp_path / "r")
    assert code == 0 and "internal error" not in err, err
    assert not lock.exists()
