"""xdist groups that hold: each ``xdist_group`` of tests (those of the Docker engine) runs in
one worker, one test at a time (a pytest plugin, registered by tests/conftest.py when
pytest-xdist is there).

xdist's own ``--dist loadgroup`` tags a grouped test by appending ``@group`` to ``item._nodeid``,
which pytest 9.2 no longer reads (a node's id is ``_id`` now), so its groups silently fall apart.
Here the workers name each group's tests in a file as they finish collecting, and the
controller's scheduler (xdist's ``pytest_xdist_make_scheduler`` hook) reads it: a group is one
work unit; every other test is a unit of its own. The scheduler is xdist's LoadScopeScheduling
with its scope rule (``_split_scope``, the one method loadgroup itself overrides) replaced, and
units are handed out in collection order, which :func:`order` sets: the engine's groups first
(``FIRST``, the longest chain first), then the other groups, largest first, then the rest. A
worker takes its next unit when its current one is nearly done.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

ENV = "LNREPRO_TEST_ENGINE_IDS"  # the folder where each worker lists the grouped tests


# the engine's groups (tests/conftest.py), each a chain of minutes: started first, longest first
FIRST = ("engine-bisect", "engine-run", "engine-remote")


def _group(item: pytest.Item) -> str | None:
    mark = item.get_closest_marker("xdist_group")
    return str(mark.args[0]) if mark else None


def order(items: list[pytest.Item]) -> None:
    """Sort ``items`` (stably, in place) in the order their units are to be handed out."""
    sizes: dict[str | None, int] = {}
    for item in items:
        g = _group(item)
        sizes[g] = sizes.get(g, 0) + 1

    def rank(item: pytest.Item) -> tuple[int, int]:
        g = _group(item)
        if g in FIRST:
            return 0, FIRST.index(g)
        return (1, -sizes[g]) if g is not None else (2, 0)

    items.sort(key=rank)


def record(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a worker, after collection: its grouped tests, one ``group<TAB>node id`` a line."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    folder = os.environ.get(ENV)
    if not worker or not folder:
        return
    lines = [f"{g}\t{item.nodeid}" for item in items if (g := _group(item))]
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

    config.option.loadscopereorder = False  # the collection's order is the hand-out order
    return GroupScheduling(config, log)
