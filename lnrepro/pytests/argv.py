"""The command line and environment of one pytest attempt. Pure.

Every attempt must be a fresh process whose result can be compared with the others:

* ``-p no:cacheprovider``: no ``.pytest_cache`` is read or written, so ``--lf``/``--ff``/
  ``--sw`` left in a config cannot reorder or drop tests between attempts;
* ``-p no:xdist``, ``-p no:randomly``, ``-p no:rerunfailures``: one process, tests in file order
  with unshuffled seeds, and no silent retry that turns a flaky failure into a pass. ``-p no:X``
  only blocks a name, so it is harmless where the plugin is absent (checked against pytest 9.2:
  no warning, no error); where a config's ``addopts`` uses the plugin's options (``-n 4``), the
  run stops with a usage error (exit 4) instead of running differently;
* ``--capture=fd``: tt-metal's ``pytest.ini`` (@026ba3f) has ``addopts = … -vvs …``: ``-s``
  turns capturing off, which leaves ``system-out`` empty and the printed PCC lines out of the
  report; a later ``--capture`` wins over ``addopts``. ``--tb=auto`` likewise overrides a
  configured ``--tb=short``/``line``/``no`` that would drop the ``E`` lines and frame arguments
  (``pcc = 0.999``) the PCC reader uses;
* ``-o junit_family=xunit2 -o junit_logging=all -o junit_log_passing_tests=true``: the report
  holds captured log, stdout and stderr of passing tests too (their PCC is evidence as well);
  ``--junitxml`` given last replaces the ``--junitxml`` tt-metal's ``addopts`` sets;
* environment: ``PYTHONDONTWRITEBYTECODE=1`` (no ``__pycache__`` left in the tree under test),
  ``PYTHONHASHSEED=0`` (set and dict-of-str order the same in every attempt),
  ``PYTHONUNBUFFERED=1``, and no ``PYTEST_ADDOPTS``/``PYTEST_PLUGINS`` from the caller's shell.
"""

from __future__ import annotations

import signal
from collections.abc import Mapping, Sequence
from pathlib import PurePath

from lnrepro.errors import UsageError

PYTEST_OPTIONS: tuple[str, ...] = (
    "-p",
    "no:cacheprovider",
    "-p",
    "no:xdist",
    "-p",
    "no:randomly",
    "-p",
    "no:rerunfailures",
    "-o",
    "junit_family=xunit2",
    "-o",
    "junit_logging=all",
    "-o",
    "junit_log_passing_tests=true",
    "--capture=fd",
    "--tb=auto",
    "--color=no",
    "-q",
)

# pytest's listing of the node ids it would run, no .pytest_cache read or written
COLLECT: tuple[str, ...] = ("-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider")

ENV_SET: Mapping[str, str] = {
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
    "PYTHONUNBUFFERED": "1",
}
ENV_REMOVE: tuple[str, ...] = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_CURRENT_TEST")

_CONTROL = {chr(c) for c in range(32)} | {"\x7f"}


def node_id_problem(node_id: str) -> str | None:
    """Why ``node_id`` cannot be handed to pytest, or None when it can.

    No shell is involved, so quotes, ``;`` and ``$`` are just characters; what is refused is
    what pytest would read differently from a node id: nothing at all, an option (``-k``),
    surrounding whitespace, control characters, a path that is not a ``.py`` file (a directory
    or ``-k`` expression selects an unknown set of tests), empty ``::`` parts, a ``[`` without
    its closing ``]``.
    """
    if not node_id or not node_id.strip():
        return "empty node id"
    if node_id != node_id.strip():
        return f"node id {node_id!r} has leading or trailing whitespace"
    if node_id.startswith("-"):
        return f"node id {node_id!r} starts with '-' and would be read as an option"
    if any(ch in _CONTROL for ch in node_id):
        return f"node id {node_id!r} contains a control character"
    path, sep, rest = node_id.partition("::")
    if not path.endswith(".py"):
        return (
            f"node id {node_id!r} does not start with a .py file "
            "(expected e.g. tests/ttnn/test_ln.py::test_ln[shape0])"
        )
    if sep:
        names, bracket, _params = rest.partition("[")
        if not names or any(not part for part in names.split("::")):
            return f"node id {node_id!r} has an empty '::' part"
        if bracket and not rest.endswith("]"):
            return f"node id {node_id!r} opens '[' but does not end with ']'"
    return None


def pytest_argv(
    node_ids: Sequence[str],
    junit_xml: str | PurePath,
    *,
    python: str = "python",
    extra: Sequence[str] = (),
) -> list[str]:
    """``python -m pytest NODEID... --junitxml=PATH`` and the options above (``extra`` go
    before ``--junitxml``, so they cannot replace the report path). Raises
    :class:`UsageError` for an empty list or a node id :func:`node_id_problem` refuses."""
    if not node_ids:
        raise UsageError("no pytest node id given", "name at least one, e.g. tests/x.py::test_y")
    for nid in node_ids:
        problem = node_id_problem(nid)
        if problem:
            raise UsageError(
                problem, "pass pytest node ids as pytest --collect-only -q prints them"
            )
    return [python, "-m", "pytest", *node_ids, *PYTEST_OPTIONS, *extra, f"--junitxml={junit_xml}"]


def pytest_env(base: Mapping[str, str]) -> dict[str, str]:
    """``base`` (the environment to start from) with :data:`ENV_SET` set and
    :data:`ENV_REMOVE` removed."""
    return {**{k: v for k, v in base.items() if k not in ENV_REMOVE}, **ENV_SET}


# pytest's ExitCode (src/_pytest/config/__init__.py, pytest 9.2): 0-5 since pytest 5.0; 6 is
# MAX_WARNINGS_ERROR, new in pytest 9.
_EXIT = {
    0: "all tests passed",
    1: "some tests failed",
    2: "interrupted: Ctrl-C, or errors while collecting tests (nothing ran)",
    3: "internal error in pytest or a plugin",
    4: "usage error: bad option, unknown plugin option, or no such file or node id",
    5: "no tests collected (the node ids matched nothing)",
    6: "all tests passed but the maximum number of warnings was exceeded",
}


def exit_meaning(code: int | None) -> str:
    """A short meaning of a pytest process's exit code (signals and timeout(1) included)."""
    if code is None:
        return "no exit code: the process did not finish"
    if code in _EXIT:
        return _EXIT[code]
    if code == 124:
        return "killed by timeout(1) (exit 124)"
    sig = -code if code < 0 else code - 128 if code > 128 else None
    if sig is not None:
        try:
            return f"killed by {signal.Signals(sig).name} (exit {code})"
        except ValueError:
            pass
    return f"unknown exit code {code} (not one of pytest's)"
