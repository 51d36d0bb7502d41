"""Everything that draws for people on a terminal: rich tables and progress. The only package
importing rich. Data reaches rich only through :func:`lnrepro.present.escape.terminal`.

One module per concern:

* :mod:`.style` — the console, and the styles of statuses, verdicts and marks;
* :mod:`.layout` — lines and tables that never cut a token (the rule every view follows);
* :mod:`.runs` — ``parse``, ``run --list``, a run, ``runs`` and ``compare``;
* :mod:`.bisect` — a bisect's steps and result;
* :mod:`.envcheck` — ``env-check``;
* :mod:`.studies` — a hang's diagnosis, ``explain``, ``tolerance``;
* :mod:`.progress` — live progress on stderr (a long step, a run's attempts, a bisect's steps).

The commands import what they draw with from here.
"""

from lnrepro.present.console.bisect import render_bisect
from lnrepro.present.console.envcheck import render_env
from lnrepro.present.console.layout import say, say_command
from lnrepro.present.console.progress import RichBisectEvents, RichRunEvents, Working
from lnrepro.present.console.runs import (
    render_compare,
    render_gtest_run,
    render_records,
    render_run,
    render_test_list,
)
from lnrepro.present.console.studies import (
    render_explain,
    render_hang,
    render_tolerance_bands,
    render_tolerance_tests,
)
from lnrepro.present.console.style import make_console, styled

__all__ = [
    "RichBisectEvents",
    "RichRunEvents",
    "Working",
    "make_console",
    "render_bisect",
    "render_compare",
    "render_env",
    "render_explain",
    "render_gtest_run",
    "render_hang",
    "render_records",
    "render_run",
    "render_test_list",
    "render_tolerance_bands",
    "render_tolerance_tests",
    "say",
    "say_command",
    "styled",
]
