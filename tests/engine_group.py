"""One xdist worker for every test that uses the Docker engine (a pytest plugin, registered by
tests/conftest.py when pytest-xdist is there).

xdist's own ``--dist loadgroup`` tags a grouped test by appending ``@group`` to ``item._nodeid``,
which pytest 9.2 no longer reads (a node's id is ``_id`` now), so its groups silently fall apart.
Here the workers name the engine's tests in a file as they finish collecting, and the
controller's scheduler (xdist's ``pytest_xdist_make_scheduler`` hook) reads it: those tests are
one work unit, handed out first (the largest unit goes first); every other test is a unit of its
own. The scheduler is xdist's LoadScopeScheduling with its scope rule (``_split_scope``, the one
method loadgroup itself overrides) replaced.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

ENV = "LNREPRO_TEST_ENGINE_IDS"  # the folder where each worker lists the engine's tests
GROUP = "engine"


def record(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a worker, after collection: which of its tests are the engine's."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    folder = os.environ.get(ENV)
    if not worker or not folder:
        return
    ids = [item.nodeid for item in items if item.get_closest_marker("xdist_group")]
    tmp = Path(folder) / f".{worker}.tmp"
    tmp.write_text("\n".join(ids) + "\n", encoding="utf-8")
    tmp.replace(Path(folder) / f"{worker}.txt")


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadgroup":
        return None  # another --dist asked for: xdist's own
    from xdist.scheduler import LoadScopeScheduling

    folder = Path(os.environ[ENV])

    class EngineGroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
        engine: frozenset[str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.engine is None:  # every worker has collected (and written) by now
                names = sorted(folder.glob("*.txt"))
                text = names[0].read_text(encoding="utf-8") if names else ""
                self.engine = frozenset(text.split("\n")) - {""}
            return GROUP if nodeid in self.engine else nodeid

    return EngineGroupScheduling(config, log)
