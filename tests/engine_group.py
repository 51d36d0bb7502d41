"""xdist groups that hold: each ``xdist_group`` of tests (those of the Docker engine) runs in
one worker, one test at a time (a pytest plugin, registered by tests/conftest.py when
pytest-xdist is there).

xdist's own ``--dist loadgroup`` tags a grouped test by appending ``@group`` to ``item._nodeid``,
which pytest 9.2 no longer reads (a node's id is ``_id`` now), so its groups silently fall apart.
Here the workers name each group's tests in a file as they finish collecting, and the
controller's scheduler (xdist's ``pytest_xdist_make_scheduler`` hook) reads it: a group is one
work unit, and the largest units are handed out first, one to each worker; every other test is a
unit of its own. The scheduler is xdist's LoadScopeScheduling with its scope rule
(``_split_scope``, the one method loadgroup itself overrides) replaced.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

ENV = "LNREPRO_TEST_ENGINE_IDS"  # the folder where each worker lists the grouped tests


def record(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a worker, after collection: its grouped tests, one ``group<TAB>node id`` a line."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    folder = os.environ.get(ENV)
    if not worker or not folder:
        return
    lines = [f"{mark.args[0]}\t{item.nodeid}" for item in items
             if (mark := item.get_closest_marker("xdist_group"))]  # fmt: skip
    tmp = Path(folder) / f".{worker}.tmp"
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(Path(folder) / f"{worker}.txt")


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadgroup":
        return None  # another --dist asked for: xdist's own
    from xdist.scheduler import LoadScopeScheduling

    folder = Path(os.environ[ENV])

    class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
        groups: dict[str, str] | None = None  # node id -> its group

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:  # every worker has collected (and written) by now
                names = sorted(folder.glob("*.txt"))
                text = names[0].read_text(encoding="utf-8") if names else ""
                rows = (line.split("\t", 1) for line in text.split("\n") if "\t" in line)
                self.groups = {nodeid: group for group, nodeid in rows}
            return self.groups.get(nodeid, nodeid)

    return GroupScheduling(config, log)
