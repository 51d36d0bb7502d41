"""What tt-metal's watcher.log looks like in every era: the patterns of its lines, the eras in
words, how much of a text reads as one, and what a pasted log adds. :mod:`lnrepro.hang.watcher.log`
reads a log with them into the records of :mod:`lnrepro.hang.watcher.records`.

What the file holds (facts from tenstorrent/tt-metal; the file and commit are named where used):

* ``At <s>s starting`` and a legend (``watcher_server.cpp`` ``create_log_file``, commit
  007cf7fd108d9c7468c16b3baa239a7065a45357); the legend's first line names the Tensix processors
  in waypoint order. With ``TT_METAL_WATCHER_APPEND`` one file holds several runs, each with its
  own header. ``At <s>s attach device <n>`` / ``detach device``.
* Per poll (``poll_watcher_data``, same commit): ``-----``, ``Dump #<n> at <s>s``, one line per
  core (workers row by row, then ethernet, then DRAM cores), ``k_id[<id>]: <path>`` for every
  kernel id the dump used, the stack-usage summary and paused cores, then
  ``Dump #<n> completed at <s>s``. A dump the watcher aborted (an assert, a NOC error) has no
  ``completed`` line and may end in a cut core line. Old logs have neither ``-----`` nor
  ``completed``.
* The core line (``watcher_device_reader.cpp``: commit 6631b32e58205e00b93122874ed625942d322044
  for the ``phys`` era, where ethernet cores are ``ethnet`` and print ``rmsg:<state> k_id:<n>``;
  the newer ``virtual`` form as tt-metal's watcher tests expect it), in the eras this parser
  knows (:class:`LineFormat`):

  ====================  =====================================================================
  ``Core (x=,y=):``      2023: physical coordinates, no device, waypoints unpadded
  ``Device 0, Core``     2024-03: the same with a device
  ``phys(x=,y=)``        2024-04..06: ``Device 0 worker core(x=,y=) phys(x=,y=):`` logical first
  ``virtual(x=,y=)``     2025: ``h_id``; three kernel ids brisc|ncrisc|trisc
  newest                 ``%3d`` padding and one kernel id per processor (five on Tensix)
  ====================  =====================================================================

  then the waypoints (one per processor, each right-aligned to four characters, absent when the
  firmware was built without watcher), ``rmsg:`` (dispatch D/H, BRISC's NOC, the go state
  I/G/D/R/L/W/S, ``|``, one enable letter per processor class, upper case when it has a kernel),
  ``h_id:``, ``smsg:`` (one run state per subordinate), ``cb[n](rcv a!=ack b)`` with
  ``TT_METAL_WATCHER_DUMP_ALL``, ``k_ids:`` and optional ``text_start:``; a ring buffer follows
  on its own lines. An assert or a NOC sanitizer error is written with the same core prefix.

Pasted logs add editor line numbers, drop a first character (``evice 0 …``) or elide with
``...``: every pattern is searched for inside the line, never anchored at its start.
"""

from __future__ import annotations

import re

from lnrepro.hang.watcher.records import LineFormat, WatcherLog

MAX_LINES = 2_000_000  # past this the rest of a file is not read (a warning says so)
_N = r"\s*(\d{1,9})"  # a number as %2d/%3d print it (bounded: no giant int from garbage)
STARTING = re.compile(r"At\s+(\d{1,12}(?:\.\d+)?)s\s+starting")
ATTACH = re.compile(r"At\s+(\d{1,12}(?:\.\d+)?)s\s+(attach|detach)\s+device\s+(\d{1,9})")
DUMP = re.compile(r"Dump\s*#\s*(\d{1,12})\s+at\s+(\d{1,12}(?:\.\d+)?)s")
DUMP_DONE = re.compile(r"Dump\s*#\s*(\d{1,12})\s+completed\s+at\s+(\d{1,12}(?:\.\d+)?)s")
KID = re.compile(r"(?:k|\b)_id\[" + _N + r"\]:\s*(\S.*?)\s*$")  # "_id[" when pasted without k
NAME_LINE = re.compile(r"^\s*(\d{1,9}):\s+(blank|\S+\.(?:cpp|cc|c|h|hpp)|\S*/\S+)\s*$")
LEGEND_PROCS = re.compile(r"waypoint\s+for\s+(.+?)\s*$")
# The newest/2025/2024-phys prefix: "Device 0 worker core(x= 1,y= 2) [virtual(..)] [phys(..)]:"
PREFIX_NEW = re.compile(
    r"(?:D|\b)evice\s+(\d{1,9})\s+(worker|acteth|idleth|ethnet|dram)\s+core\(x="
    rf"{_N},\s*y={_N}\)(?:\s+virtual\(x={_N},\s*y={_N}\))?(?:\s+phys\(x={_N},\s*y={_N}\))?\s*:"
)
PREFIX_DEVICE_CORE = re.compile(
    r"(?:D|\b)evice\s+(\d{1,9}),\s*Core\s*\(x=" + _N + r",\s*y=" + _N + r"\)\s*:"
)
PREFIX_CORE = re.compile(r"(?:C|\b)ore\s*\(x=" + _N + r",\s*y=" + _N + r"\)\s*:")
RMSG = re.compile(r"rmsg:\s*([^\s|]*)(?:\|([A-Za-z?]*))?")
HID = re.compile(r"h_id:" + _N)
SMSG = re.compile(r"smsg:\s*(\S*)")
KIDS = re.compile(r"k_ids?:((?:\s*\d{1,9}\s*\|)*\s*\d{1,9})")
CB = re.compile(r"cb\[(\d{1,4})\]\(rcv\s+(\d{1,12})\s*!=\s*ack\s+(\d{1,12})\)")
TEXT_START = re.compile(r"text_start:\S*")
HEX = re.compile(r"0x([0-9a-fA-F]{1,8})")
WAYPOINT = re.compile(r"^[A-Za-z0-9_?]{1,4}$")
ERROR_WORDS = re.compile(
    r"tripped\s+(?:an\s+)?assert|tried to access|accesses local L1|watcher error|"
    r"detected an? |data race|unexpected|corrupt",
    re.IGNORECASE,
)
RISC_WORD = re.compile(
    r"\b(brisc|ncrisc|trisc[0-2]|ierisc|erisc[0-9]?|subordinate_erisc|drisc)\b", re.I
)
PAUSED = re.compile(r"Paused cores:\s*(.*)$")
PAUSED_ITEM = re.compile(r"\(x=\s*(\d{1,9}),\s*y=\s*(\d{1,9})\):(\w+)|(\d{1,9})-(\d{1,9}):(\w+)")
STACK = re.compile(r"stack usage", re.IGNORECASE)
RING = re.compile(r"debug_ring_buffer")


def watcher_evidence(text: str) -> int:
    """How much of a text reads as a watcher log (0: none): core state lines (a core prefix of
    any era with ``rmsg:`` or ``k_ids:``) count 3, ``Dump #N`` lines 2, ``k_id[N]:`` lines 1 once
    there is another sign. Used to sniff what a user pasted."""
    score = kids = 0
    for line in text.splitlines()[:MAX_LINES]:
        if "_id[" in line and KID.search(line):
            kids += 1
        elif DUMP.search(line) or DUMP_DONE.search(line):
            score += 2
        elif ("rmsg:" in line or "k_ids" in line) and (
            PREFIX_NEW.search(line) or PREFIX_DEVICE_CORE.search(line) or PREFIX_CORE.search(line)
        ):
            score += 3
    return score + kids if score else 0


FORMAT_WORDS: dict[LineFormat, str] = {
    LineFormat.CORE_2023: "2023 core lines: 'Core (x=,y=):', physical coordinates, no device",
    LineFormat.DEVICE_CORE_2024: "2024-03 core lines: 'Device N, Core (x=,y=):', physical coordinates",
    LineFormat.PHYS_2024: "2024-04..06 core lines: 'worker core(x=,y=) phys(x=,y=)' (watcher_device_reader.cpp "
    "at 6631b32e5820)",
    LineFormat.VIRTUAL_2025: "2025 core lines: 'virtual(x=,y=)', h_id, three kernel ids brisc|ncrisc|trisc",
    LineFormat.NEWEST: "newest core lines: %3d padding, one kernel id per processor (watcher_device_reader.cpp "
    "at 0000823065da)",
}

LINE_NO = re.compile(r"^\s*\d{1,7}(?:\s*[|:]\s*|\s+)(?=\S)")
DROPPED = re.compile(r"^(?:\s*\d{1,7}(?:\s*[|:]\s*|\s+))?(?:evice\s+\d|ore\s*\(x=|_id\[)")


# how a line of the watcher's begins (after an editor's number, or a first character lost)
LINE_START = re.compile(
    r"^\s*(?:\d{1,7}(?:\s*[|:]\s*|\s+))?(?:D?evice\s+\d|C?ore\s*\(x=|k?_id\[|Dump\s*#|At\s+\d|"
    r"-{5}|Legend|\t|Comma|\.\.\.|Paused|.{0,20}stack usage|debug_ring_buffer|k_ids?:)",
    re.IGNORECASE,
)


def unfold(text: str) -> tuple[str, int | None]:
    """A log folded at N columns (``fold -w 80``, an editor's hard wrap): each line N long
    whose next line begins none of the watcher's lines is joined to it again. N is the longest
    line's length, held by two lines or more; None when nothing was folded."""
    lines = text.splitlines()
    widths = [len(ln.expandtabs()) for ln in lines if len(ln) >= 40]  # fold counts columns
    if not widths:
        return text, None
    n = max(widths)
    if widths.count(n) < 2:
        return text, None
    out: list[str] = []
    joined = 0
    for ln in lines:
        prev = out[-1] if out else ""
        if (
            out
            and ln.strip()
            and len(prev.expandtabs()) % n == 0
            and len(prev) >= n // 2
            and not LINE_START.match(ln)
        ):
            out[-1] = prev + ln
            joined += 1
        else:
            out.append(ln)
    return ("\n".join(out) + "\n", n) if joined else (text, None)


def noise(text: str, log: WatcherLog) -> tuple[str, ...]:
    """What a pasted log has that tt-metal never wrote, in words (for the diagnosis's source)."""
    out: list[str] = []
    lines = text.splitlines()[:MAX_LINES]
    cores = {c.line_no for d in log.dumps for c in d.cores}
    numbered = sum(1 for no in cores if LINE_NO.match(lines[no - 1]) is not None)
    if numbered:
        out.append(f"editor line numbers on {numbered} core line(s)")
    dropped = sum(1 for ln in lines if DROPPED.match(ln))
    if dropped:
        out.append(f"a dropped first character on {dropped} line(s)")
    elided = sum(
        1 for u in log.unparsed if "..." in u.text and u.text.strip(" .\t0123456789|:") == ""
    )
    elided += sum(
        1 for d in log.dumps for c in d.cores if "..." in c.extra or "..." in lines[c.line_no - 1]
    )
    if elided:
        out.append(f"{elided} '...' elision(s)")
    if any(d.number == 0 for d in log.dumps):
        out.append("no 'Dump #' header: the core lines read as one dump")
    in_dumps = {k for d in log.dumps for k in (d.kernels or {})}
    apart = set(log.kernel_names or {}) - in_dumps
    if apart:
        out.append(f"{len(apart)} kernel map line(s) apart from the dumps")
    other = [u for u in log.unparsed if u.text.strip(" .\t0123456789|:")]
    if other:
        out.append(f"{len(other)} line(s) that are not the watcher's, kept unread")
    return tuple(out)
