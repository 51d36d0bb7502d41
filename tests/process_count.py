"""A pytest plugin that counts the processes a test run starts (``subprocess.Popen`` in pytest's own processes; not what those processes start in turn), for
comparing the suite's cost before and after a change:
``LNREPRO_PROCESS_COUNT=DIR pytest -p tests.process_count ...`` writes one count per worker into
DIR; add them up."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

_started = [0, 0]  # every process; those that are lnrepro itself (a new interpreter)


def _is_lnrepro(args: Any) -> bool:
    """A new interpreter running lnrepro: ``python -m lnrepro``, the ``lnrepro`` script, or
    ``python -c`` code that imports it (behind runuser, sh or tmux too)."""
    argv = [str(a) for a in (args if isinstance(args, (list, tuple)) else [args])]
    joined = " ".join(argv) + " "
    return (
        "-m lnrepro " in joined
        or Path(argv[0]).name == "lnrepro"
        or ("-c" in argv and "lnrepro" in joined)
    )


def pytest_configure(config: pytest.Config) -> None:
    if not os.environ.get("LNREPRO_PROCESS_COUNT"):
        return
    init = subprocess.Popen.__init__

    def counted_init(self: subprocess.Popen[Any], *args: Any, **kw: Any) -> None:
        _started[0] += 1
        _started[1] += _is_lnrepro(args[0] if args else kw.get("args"))
        init(self, *args, **kw)

    subprocess.Popen.__init__ = counted_init  # type: ignore[method-assign]


def pytest_unconfigure(config: pytest.Config) -> None:
    where = os.environ.get("LNREPRO_PROCESS_COUNT")
    if where:
        Path(where, f"{os.getpid()}.count").write_text(
            f"{_started[0]} {_started[1]}\n", encoding="utf-8"
        )
