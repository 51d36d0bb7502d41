"""A pytest plugin that counts the processes a test run starts (``subprocess.Popen`` and
``os.posix_spawn`` in pytest's own processes; not what those processes start in turn), for
comparing the suite's cost before and after a change:
``LNREPRO_PROCESS_COUNT=DIR pytest -p tests.process_count ...`` writes one count per worker into
DIR; add them up."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

_started = [0]


def pytest_configure(config: pytest.Config) -> None:
    if not os.environ.get("LNREPRO_PROCESS_COUNT"):
        return
    init = subprocess.Popen.__init__
    spawn = os.posix_spawn

    def counted_init(self: subprocess.Popen[Any], *args: Any, **kw: Any) -> None:
        _started[0] += 1
        init(self, *args, **kw)

    def counted_spawn(*args: Any, **kw: Any) -> int:
        _started[0] += 1
        return spawn(*args, **kw)

    subprocess.Popen.__init__ = counted_init  # type: ignore[method-assign]
    os.posix_spawn = counted_spawn


def pytest_unconfigure(config: pytest.Config) -> None:
    where = os.environ.get("LNREPRO_PROCESS_COUNT")
    if where:
        Path(where, f"{os.getpid()}.count").write_text(f"{_started[0]}\n", encoding="utf-8")
