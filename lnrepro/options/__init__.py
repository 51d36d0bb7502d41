"""The options of ``run``, ``bisect`` and ``shrink``, one table (:mod:`.table`, shrink's own in
:mod:`.shrink`, the entry type in :mod:`.opt`), and :func:`argv`: the command line that repeats a
request, which every record keeps as its ``rerun``. Owns nothing click: :mod:`lnrepro.cli.params`
turns the table into click options.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lnrepro.model.requests import BackendSpec, BisectRequest, RunRequest
    from lnrepro.model.shrink import ShrinkRequest
    from lnrepro.options.opt import Shape


def argv(request: RunRequest | BisectRequest | ShrinkRequest | BackendSpec) -> list[str]:
    """The command line that repeats ``request`` (a backend: the options that choose it)."""
    from lnrepro.model.requests import BisectRequest, RunRequest
    from lnrepro.model.shrink import ShrinkRequest
    from lnrepro.options.shrink import shrink_argv
    from lnrepro.options.table import backend_argv, bisect_argv, run_argv

    if isinstance(request, RunRequest):
        return run_argv(request)
    if isinstance(request, BisectRequest):
        return bisect_argv(request)
    if isinstance(request, ShrinkRequest):
        return shrink_argv(request)
    return backend_argv(request)


def field_shapes() -> dict[tuple[str, str], Shape]:
    """Every entry's field as click sees it (scripts/option_shapes.py writes them to
    :mod:`lnrepro.options.shapes`, which ``--help`` reads instead of the requests)."""
    from lnrepro.options import shrink, table
    from lnrepro.options.opt import shape_of

    return {(o.of, o.field): shape_of(o) for o in (*table.ALL, *shrink.OPTS)}
