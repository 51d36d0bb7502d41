# The look-alike's root conftest: the `device` fixture ttnn's tests take, and the flaky modes of
# $TT_LOOKALIKE_FLAKE that bisect tests use (hang=P[,seed=S]: the device hangs at open, in
# another op's kernels, with watcher on; that hang is not the bug's). With seed=S the draw is a
# function of S, the commit checked out and how many runs this checkout has seen (counted in
# build/, which a bisect's worktree keeps), so a flaky bisect replays the same way every time.
import hashlib
import os
import random
import sys
from pathlib import Path

# stands in for `pip install -e .` of create_venv.sh, which makes ttnn/ttnn importable as `ttnn`
sys.path.insert(0, str(Path(__file__).resolve().parent / "ttnn"))

import pytest  # noqa: E402

import ttnn  # noqa: E402


def _flake():
    text = os.environ.get("TT_LOOKALIKE_FLAKE", "")
    kv = dict(item.split("=", 1) for item in text.split(",") if "=" in item)
    return kv


def _head():
    git = Path(__file__).resolve().parent / ".git"
    try:
        if git.is_file():  # a worktree: "gitdir: PATH"
            git = Path(git.read_text().split(":", 1)[1].strip())
        return (git / "HEAD").read_text().strip()
    except OSError:
        return ""


def _runs():
    count = Path(__file__).resolve().parent / "build" / ".lookalike-flake-runs"
    try:
        n = int(count.read_text())
    except (OSError, ValueError):
        n = 0
    try:
        count.write_text(f"{n + 1}\n")
    except OSError:
        pass
    return n


def _draw(kv):
    if "seed" not in kv:
        return random.random()
    key = f"{kv['seed']}:{_head()}:{_runs()}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") / 2**64


@pytest.fixture
def device():
    kv = _flake()
    if _draw(kv) < float(kv.get("hang", 0)):
        ttnn.hang_elsewhere()
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)
