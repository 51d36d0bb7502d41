"""The ``lnrepro`` command line: a thin layer over :mod:`lnrepro.api`.

The group and its command table are :mod:`.commands`, the help layout :mod:`.help`, the exit
codes, the crash log and the signals :mod:`.exits` (whose :func:`main` is the entry point),
``--json`` and ``-o FILE`` :mod:`.output`. One module per command or family, each parse → request
→ core → render: :mod:`.parse`, :mod:`.envcheck`, :mod:`.run`, :mod:`.bisect`, :mod:`.shrink`,
:mod:`.records` (runs, show, compare, report), :mod:`.studies` (explain, tolerance); their
shared options are :mod:`.options`.

Only click and lnrepro's light modules are imported at start-up; each command imports what it
needs when it runs, so ``lnrepro COMMAND --help`` never loads numpy, docker, git or msgspec.
"""

from lnrepro.cli.commands import all_commands, cli
from lnrepro.cli.exits import main

__all__ = ["all_commands", "cli", "main"]
