"""The options of a Python project's runs and bisects (``--pytest`` without ``--tt-metal``): the
table's entries for :class:`~lnrepro.model.requests.PythonSpec` (kept apart from
:mod:`lnrepro.options.table` to keep each module short)."""

from __future__ import annotations

from lnrepro.options.opt import Opt

PYTHON = "Python project"
TT_METAL = "tt-metal"  # --python and --env are the tt-metal entries' options (one click option)

# any Python project (--pytest without --tt-metal): --python and --env are the tt-metal entries
# options (one click option each), --repo is run's own
PYTHON_OPTS = (
    Opt(
        of="PythonSpec",
        field="project",
        flags=("--repo",),
        dest="repo",
        metavar="DIR",
        always=True,
        group=PYTHON,
        help="With --pytest and no --tt-metal: the Python project whose tests run (a git "
        "checkout; node ids are relative to it). [default: .]",
    ),
    Opt(
        of="PythonSpec",
        field="python",
        flags=("--python",),
        metavar="PATH",
        group=TT_METAL,
        help="",  # the tt-metal entry's option
    ),
    Opt(
        of="PythonSpec",
        field="setup",
        flags=("--setup",),
        metavar="CMD",
        form="command",
        group=PYTHON,
        help="A Python project's setup before its tests (e.g. 'pip install -e .'), split as a "
        "shell would and run without one, in an environment of its own layered over --python's; "
        "when it fails the commit is untestable (a skip), never bad.",
    ),
    Opt(
        of="PythonSpec",
        field="env",
        flags=("--env",),
        metavar="KEY=VALUE",
        form="pairs",
        group=TT_METAL,
        help="",
    ),
    Opt(
        of="PythonSpec",
        field="image",
        flags=("--image",),
        metavar="IMAGE",
        group=TT_METAL,
        help="",  # the tt-metal entry's option
    ),
)
