"""A small Python project with a git history that brings in a numerics bug, written by the tests
(as tests/lookalike writes tt-metal's): ``tinynorm``, a layer norm in numpy, and its tests.

History (oldest first), each commit's subject says what it is:

0. ``good: two-pass statistics`` — mean, then variance of the centred values, in float64;
1. ``bad: one-pass variance in float32`` — E[x²] - E[x]², the culprit: 1e-3 errors on offset data;
2. ``skip: setup fails`` — the step's setup (``python setup_step.py``) exits 1;
3. ``skip: tests do not collect`` — the package does not import (a missing module);
4. ``bad: more`` — the import and the setup repaired, the one-pass variance still there;
5. ``bad: docs`` — nothing that changes numbers.

A commit bisect from 0 to 5 tests 2 (git's midpoint) and 3 (its neighbour) and skips them; they
come after the culprit, so they hide nothing.

Tests: ``tests/test_norm.py::test_layernorm_matches_reference`` (numpy assert_allclose, fails
from commit 4), ``tests/test_norm.py::test_flaky`` (fails about half the time, from the OS's
randomness) and ``tests/test_norm.py::test_always_fails`` (numpy's message on fixed data).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

TEST_NODE = "tests/test_norm.py::test_layernorm_matches_reference"
FLAKY_NODE = "tests/test_norm.py::test_flaky"
FAILING_NODE = "tests/test_norm.py::test_always_fails"

GOOD_NORM = """import numpy as np


def layernorm(x):
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return ((x - mean) / np.sqrt(var + 1e-5)).astype(np.float32)
"""
BAD_NORM = """import numpy as np


def layernorm(x):
    x = np.asarray(x, dtype=np.float32)
    mean = x.mean(axis=-1, keepdims=True)
    var = (x * x).mean(axis=-1, keepdims=True) - mean * mean
    return (x - mean) / np.sqrt(var + np.float32(1e-5))
"""
TESTS = """import random

import numpy as np
from numpy.testing import assert_allclose

from tinynorm import layernorm


def reference(x):
    x = np.asarray(x, dtype=np.float64)
    m = x.mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)


def test_layernorm_matches_reference():
    x = np.random.default_rng(0).normal(300.0, 1.0, size=(64, 256))
    assert_allclose(layernorm(x), reference(x), rtol=1e-4, atol=1e-4)


def test_flaky():
    assert random.SystemRandom().random() < 0.5


def test_always_fails():
    assert_allclose(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.0, 3.0, 4.5]), rtol=1e-3)
"""
SETUP_OK = "print('setup ok')\n"
SETUP_FAILS = "import sys\nsys.exit('setup: a build dependency is missing')\n"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def _commit(repo: Path, files: dict[str, str], subject: str) -> str:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", subject)
    return _git(repo, "rev-parse", "HEAD")


def make_project(repo: Path) -> list[str]:
    """Write the project's history into ``repo`` (a new directory); its commits, oldest first."""
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    shas = [
        _commit(
            repo,
            {
                "tinynorm/__init__.py": GOOD_NORM,
                "tests/test_norm.py": TESTS,
                "setup_step.py": SETUP_OK,
                "pyproject.toml": '[project]\nname = "tinynorm"\nversion = "0.1"\n',
                "conftest.py": "",  # the project's root on sys.path (pytest's rootdir conftest)
            },
            "good: two-pass statistics",
        )
    ]
    shas.append(
        _commit(repo, {"tinynorm/__init__.py": BAD_NORM}, "bad: one-pass variance in float32")
    )
    shas.append(_commit(repo, {"setup_step.py": SETUP_FAILS}, "skip: setup fails"))
    shas.append(
        _commit(
            repo,
            {"setup_step.py": SETUP_OK, "tinynorm/__init__.py": "import tinynorm_missing\n"},
            "skip: tests do not collect",
        )
    )
    shas.append(
        _commit(repo, {"tinynorm/__init__.py": BAD_NORM, "README.md": "faster\n"}, "bad: more")
    )
    shas.append(_commit(repo, {"README.md": "tinynorm\n"}, "bad: docs"))
    return shas
