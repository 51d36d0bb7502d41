"""Checks of a Python project's run before anything starts: the project, its Python, the node
ids (each one line with its fix; nothing is written or changed)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from lnrepro.errors import EnvironmentProblem, UsageError
from lnrepro.model.requests import PythonSpec, TestSpec
from lnrepro.options.table import flag

COLLECT_TIMEOUT_S = 300.0


class Flag:
    """The flags these messages name, as the table of options spells them."""

    repo = flag(PythonSpec, "project")
    python = flag(PythonSpec, "python")
    setup = flag(PythonSpec, "setup")
    image = flag(PythonSpec, "image")
    pytest = flag(TestSpec, "pytest")


def check_project(spec: PythonSpec, node_ids: Sequence[str], *, collect: bool = True) -> None:
    """The project is a directory, its Python runs, and pytest finds every node id there
    (``pytest --collect-only``: exit 4 or 5 is "no such test"; a collection error — pytest
    prints ``ERROR collecting`` — is the test's own outcome, recorded by the run)."""
    from lnrepro.run.backends.python import project_python

    project = spec.project.expanduser()
    if not project.is_dir():
        raise UsageError(
            f"{Flag.repo} {spec.project} is not a directory",
            "pass the root of the Python project (where its tests' paths start)",
        )
    if spec.image is not None:
        _check_image(spec, spec.image, project, node_ids)
        return
    python = project_python(project.absolute(), spec.python)
    found = shutil.which(python) if os.sep not in python else python
    if not found or not os.access(found, os.X_OK):
        raise EnvironmentProblem(
            f"{Flag.python} {python}: no such interpreter",
            f"pass {Flag.python} PATH to a Python that has pytest and the project's packages, or "
            "make the project's .venv",
        )
    _check_files(project, node_ids)
    if collect and node_ids:
        _collect(project.absolute(), python, node_ids, dict(spec.env))


def _check_files(project: Path, node_ids: Sequence[str]) -> None:
    for nid in node_ids:
        path = nid.partition("::")[0]
        if not (project / path).is_file():
            raise UsageError(
                f"{Flag.pytest} {nid}: no file {path} in {project}",
                f"give node ids relative to {Flag.repo}, as pytest --collect-only -q prints them "
                "there",
            )


def _check_image(spec: PythonSpec, image: str, project: Path, node_ids: Sequence[str]) -> None:
    """With ``--image``: no ``--setup`` (its environment is made here, not in the image), each
    node id's file in the project (pytest collects in the container, at the run), and the image
    on this machine's engine."""
    if spec.setup:
        raise UsageError(
            f"{Flag.setup} does not run in {Flag.image}'s container",
            f"install what the tests need into the image, or drop {Flag.image} and pass "
            f"{Flag.python} PATH",
        )
    _check_files(project, node_ids)
    from lnrepro.doors import container
    from lnrepro.doors.container.create import prepared

    # the image is on this machine's engine (else one line, before a record directory is made)
    box = container.run_spec(
        image,
        device_nodes=(),
        hugepage_dirs=(),
        checkout=project.absolute(),
        mount_set="tt-metal",
    )
    with container.engine_errors(None):
        prepared(box)


def _collect(project: Path, python: str, node_ids: Sequence[str], env: dict[str, str]) -> None:
    from lnrepro.doors import proc
    from lnrepro.pytests.argv import COLLECT, exit_meaning, pytest_env

    full = pytest_env({**os.environ, **env})
    argv = [python, *COLLECT, *node_ids]
    code, out = proc.capture(argv, timeout=COLLECT_TIMEOUT_S, cwd=project, env=full)
    if code in (4, 5) and "ERROR collecting" not in out:  # not a module that fails to import
        last = next((ln.strip() for ln in reversed(out.splitlines()) if ln.strip()), "")
        raise UsageError(
            f"{Flag.pytest} {' '.join(node_ids)}: pytest finds no such test in {project} "
            f"({exit_meaning(code)}: {last[:160]})",
            "list the tests with pytest --collect-only -q in the project and pass one of them",
        )
    if code == 1 and "No module named pytest" in out:
        raise EnvironmentProblem(
            f"{python} has no pytest",
            f"install pytest in the project's environment, or pass {Flag.python} PATH to one "
            "that has",
        )
