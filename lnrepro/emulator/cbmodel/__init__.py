"""A reader/compute/writer kernel trio over circular buffers, on a grid of cores, behind
googletest's command line: ``python -m lnrepro.emulator.cbmodel``.

The model (our own, not tt-metal code): per core a reader (NCRISC) reserves and pushes
``reader_pages_per_block`` pages into ``cb_in`` per block; compute (the TRISCs) waits for
``compute_pages_per_block`` pages of ``cb_in``, reserves ``compute_out_pages_per_block`` in
``cb_out``, pops and pushes; a writer (BRISC) waits for and pops ``writer_pages_per_block`` pages
of ``cb_out``. Every core is stepped in turn, deterministically, until all are done or none can
move. When producer and consumer disagree on a page count, or a call asks for more pages than
its buffer holds, the cores deadlock as the real kernels would, and the program behaves like a
hung tt-metal test: it prints ``[ RUN      ]`` and never returns, so the caller's timeout must
kill it. Meanwhile, with ``TT_METAL_WATCHER`` set, it writes watcher.log as tt-metal's watcher
does, one dump per interval, and with ``TT_METAL_DPRINT_CORES`` it prints DPRINT lines for the
CB calls of the chosen cores.

Facts followed, from tenstorrent/tt-metal:

* ``TT_METAL_WATCHER=<n>``: a poll every ``n`` seconds, or ``n`` milliseconds when the value
  contains ``ms`` (``sscanf("%d")``; tt_metal/llrt/rtoptions.cpp, commit
  00a21394d924f374ef1dfe49a64fcf50fcc24810 ``ParseWatcherEnv``, and the newer ``HandleEnvVar``).
* The log is ``<logs dir>/generated/watcher/watcher.log`` (tt_metal/impl/debug/watcher_server.cpp,
  commit 007cf7fd108d9c7468c16b3baa239a7065a45357: ``get_logs_dir() + "generated/watcher/" +
  "watcher.log"``), the logs dir being ``$TT_METAL_LOGS_PATH`` (normalized, with a trailing
  slash) or else the current working directory (tt_metal/llrt/rtoptions.hpp, commit
  1f8d16c7b0a0b574cd3d21fdef2b9237226e98ac: ``logs_dir_ = current_path() / ""``). Opened with
  ``"a"`` when ``TT_METAL_WATCHER_APPEND`` is set, else ``"w"``; ``kernel_names.txt`` beside it.
* The log's header, dump sections and the newest core line form: see lnrepro.hang.watcher.log.
* DPRINT lines: ``<device>:<core>:<risc>: text`` (see lnrepro.hang.watcher.dprint);
  ``TT_METAL_DPRINT_CORES`` takes ``x,y``, ``(x1,y1),(x2,y2)``, ``(x1,y1)-(x2,y2)`` or
  ``all``/``worker`` (rtoptions.cpp ``ParseFeatureCoreRange``), ``TT_METAL_DPRINT_FILE`` a file.

Two simplifications, said here: compute's wait shows as ``CWFW`` on TRISC0 and its reserve as
``CRBW`` on TRISC2 (on Wormhole a compute ``cb_wait_front`` sets no waypoint); and a poll
interval under 100 ms is raised to 100 ms so a hung run cannot fill the disk.

One module per concern: :mod:`.config` (the numbers), :mod:`.cores` (the model), :mod:`.watcher`,
:mod:`.device` (the hung device as tt-triage reads it), :mod:`.timeout` (tt-metal's dispatch
timeout), :mod:`.dprint`, and :mod:`.gtest` (googletest's command line). The package uses only the
standard library and imports itself relatively: the look-alike tt-metal ships it whole as
``ttnn/_cbsim`` (tests/lookalike/generator.py), and its ttnn drives the names below.
"""

from .config import CbConfig, ConfigError, load_config
from .cores import Outcome, simulate
from .device import write_device_state
from .gtest import main
from .timeout import dispatch_timeout
from .watcher import Program, Watcher, kernel_ids, watcher_interval

__all__ = [
    "CbConfig",
    "ConfigError",
    "Outcome",
    "Program",
    "Watcher",
    "dispatch_timeout",
    "kernel_ids",
    "load_config",
    "main",
    "simulate",
    "watcher_interval",
    "write_device_state",
]
