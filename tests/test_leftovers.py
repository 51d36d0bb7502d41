"""The tests' own leftover check for processes (tests/leftovers.py), on real processes."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

from tests.leftovers import running_in


def test_running_in_finds_only_the_processes_working_in_the_tree(tmp_path: Path) -> None:
    marker = f"lnrepro-leftover-{uuid.uuid4().hex[:8]}"
    mine, other = tmp_path / "tree", tmp_path / "other"
    (mine / "sub").mkdir(parents=True)
    other.mkdir()
    procs = [
        subprocess.Popen(["sh", "-c", f"sleep 30; : {marker}"], cwd=cwd)
        for cwd in (mine / "sub", other)
    ]
    try:
        found = running_in(mine, marker)
        assert found == [str(procs[0].pid)]  # below the tree counts; the other tree's does not
        assert running_in(other, marker) == [str(procs[1].pid)]
        assert running_in(mine, marker + "-absent") == []
    finally:
        for p in procs:
            p.kill()
            p.wait()
    assert running_in(mine, marker) == []
