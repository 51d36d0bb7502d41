"""What a user's condensed summary quotes of tt-triage's checks, or of an assert, read into
what it shows (issue 48): the failing check and its numbers, an assert's condition, file and
function. Pure; nothing is added that the text does not write."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

from lnrepro.hang.model import HangPattern

# the scripts of tools/triage/ a section line or a user's summary may name (at 02c321d69d06 and before)
_SCRIPTS = (
    "dump_callstacks dump_circular_buffers dump_running_operations dump_lightweight_asserts "
    "check_noc_status check_arc check_binary_integrity dump_aggregated_callstacks run_checks "
    "dispatcher_data inspector_data elfs_cache callstack_provider check_core_magic "
    "check_eth_status dump_fast_dispatch dump_watcher_ringbuffer dump_risc_debug_signals "
    "check_broken_components dump_ops dump_semaphores metal_device_id_mapping device_info "
    "check_cb_inactive check_noc_locations dump_watcher_asserts system_info firmware_versions "
)
KNOWN_SCRIPTS = frozenset(_SCRIPTS.split())
RISC_WORD = re.compile(r"(?i)\b(brisc|ncrisc|trisc[0-2]|erisc[0-9]?)\b")


class SaidKind(str, Enum):
    CHECK = "check"  # a check's pass or fail
    NOC = "noc"  # check_noc_status: a register's count against the firmware variable's
    ASSERT = "assert"  # an assert's condition, file and function


@dataclass(frozen=True, slots=True)
class SaidCheck:
    """What a user's summary quotes of one of triage's checks, or of an assert: kept as the
    user wrote it, never made more of."""

    kind: SaidKind
    text: str  # the words for the diagnosis
    failed: bool


# What users quote of triage's checks (tenstorrent/tt-metal tools/triage): each script's result is
# ``<script>.py:`` then ``  pass`` or ``  fail`` and its failure lines (triage.py's
# serialize_result); log_check_risc writes ``Device <id>: <block> [<loc>]: <risc>: <message>``.
# check_binary_integrity.py (f3198dc503a9) fails with "Data mismatch in section .text at address
# 0x… in ELF file …"; check_noc_status.py (05781ebca98d) with "Device <id> at <loc> on <risc> for
# NOC <n>" then "<register> <variable> <register value> <variable value>" per counter that
# disagrees (42bfdec046d2: "Device <id>: <block> [<loc>]: <risc> NOC<n>: Mismatched state:").
_CHECK_SAID = re.compile(r"(?i)\b((?:check|dump)_[a-z][a-z_]{1,40})(?:\.py)?\b\W{0,6}(.*)$")
_RESULT = re.compile(r"(?i)\b(pass(?:ed|es)?|ok|fail(?:ed|s|ure)?|mismatch(?:ed)?|error)\b")
_NOC_COUNTS = re.compile(r"\b(NIU_MST_\w+)\s+(noc_\w+)\s+(\d{1,20})\s+(\d{1,20})\b")
_NOC_WORDS = (  # a user's own words: "register R = 12 ... variable v = 13", either order
    re.compile(
        r"(?i)\bregister\s+(?P<reg>[A-Z]\w{2,60})\s*[=:]?\s*(?P<rv>\d{1,20})\b.{0,40}?"
        r"\bvariable\s+(?P<var>[a-z_]\w{2,60})\s*[=:]?\s*(?P<vv>\d{1,20})\b"
    ),
    re.compile(
        r"(?i)\bvariable\s+(?P<var>[a-z_]\w{2,60})\s*[=:]?\s*(?P<vv>\d{1,20})\b.{0,40}?"
        r"\bregister\s+(?P<reg>[A-Z]\w{2,60})\s*[=:]?\s*(?P<rv>\d{1,20})\b"
    ),
)
_NOC_PLACE = (
    re.compile(r"(?i)\bDevice\s+(\d{1,4})\s+at\s+(.+?)\s+on\s+(\w+)\s+for\s+NOC\s*(\d)"),
    re.compile(r"(?i)\bDevice\s+(\d{1,4}):\s+\w+\s+\[([^\]]+)\]:\s+(\w+)\s+NOC\s*(\d)"),
)
# An assert as tt-llk writes it (tenstorrent/tt-llk 7ed6ee9e01c5 common/llk_assert.h:
# ``LLK_ASSERT(condition, message)``, in tt-metal ``ASSERT(condition)``, an ebreak when it fails),
# with the file and function a user names next to it.
_ASSERT_AT = re.compile(r"\b((?:LLK_)?ASSERT)\s*\(")
_SOURCE_FILE = re.compile(
    r"([\w.-]{0,100}(?:/[\w.-]{1,100}){0,12}\.(?:h|hpp|cc|cpp|inl))(?::(\d{1,7}))?\b"
)
_FUNCTION_SAID = re.compile(
    r"(?i)\b(?:function|func|in)\s*[:=]?\s*`?([A-Za-z_][\w:]{2,120})`?(?:\s*\(\))?(?![\w./])"
)


def _unquoted(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """The characters of ``text`` from ``start`` on, with their index, outside string and
    character literals (a quote escaped with a backslash does not end one)."""
    quote = ""
    for i in range(start, len(text)):
        c = text[i]
        if quote:
            if c == quote and text[i - 1] != "\\":
                quote = ""
        elif c in "\"'":
            quote = c
        else:
            yield i, c


def _balanced(text: str, start: int) -> tuple[str, int] | None:
    """What is inside the parenthesis opened just before ``start`` (quotes respected), and where
    it closes; None when the line ends first (an assert cut short)."""
    depth = 1
    for i, c in _unquoted(text, start):
        depth += (c == "(") - (c == ")")
        if depth == 0:
            return text[start:i], i + 1
    return None


def _top_comma(args: str) -> int:
    depth = 0
    for i, c in _unquoted(args):
        depth += (c in "([{") - (c in ")]}")
        if c == "," and depth == 0:
            return i
    return -1


def assert_code(text: str) -> str | None:
    """The first ``…ASSERT(…)`` call in a text, up to its own closing parenthesis (a frame's
    ``()`` after it is not part of it); cut short: to the end of the text."""
    m = re.search(r"\b\w*ASSERT\s*\(", text)
    if m is None:
        return None
    inside = _balanced(text, m.end())
    return text[m.start() : inside[1]] if inside else text[m.start() :].rstrip()


def _said_assert(lines: list[str], at: int, m: re.Match[str]) -> SaidCheck:
    text = lines[at]
    inside = _balanced(text, m.end())
    if inside is None:
        return SaidCheck(
            SaidKind.ASSERT,
            f"{m.group(1)}({text[m.end() :].strip()}… (cut: the condition is not whole)",
            True,
        )
    args, end = inside
    comma = _top_comma(args)
    cond, message = (args[:comma], args[comma + 1 :]) if comma >= 0 else (args, "")
    words = [f"{m.group(1)}({cond.strip()}) failed"]
    if message.strip():
        words[0] += f" ({message.strip()})"
    near = " ".join([text[end:], *lines[at + 1 : at + 4]])
    if fm := _SOURCE_FILE.search(near):
        words.append(f"in {fm.group(1)}" + (f" line {fm.group(2)}" if fm.group(2) else ""))
    for fn in _FUNCTION_SAID.finditer(near):
        if not fn.group(1).lower().startswith(("device", "core", "the", "trisc", "brisc")):
            words.append(f"function {fn.group(1)}")
            break
    before = " ".join(lines[max(0, at - 1) : at + 1])
    who = [r.upper() for r in dict.fromkeys(RISC_WORD.findall(before))]
    if who:
        dev = re.search(r"(?i)\bdev(?:ice)?\s*#?\s*(\d{1,4})\b", before)
        words.append(f"on {', '.join(who)}" + (f" of device {dev.group(1)}" if dev else ""))
    return SaidCheck(SaidKind.ASSERT, ", ".join(words), True)


def _short_paths(text: str) -> str:
    """A long path in a headline as its last two parts (``…/trisc0/trisc0.elf.xip.elf``): the
    file stays named, and the line does not fold in a terminal."""
    return re.sub(
        r"/?(?:[\w.+-]+/){2,}([\w.+-]+/[\w.+-]+)",
        lambda m: f"…/{m.group(1)}" if len(m.group(0)) > 40 else m.group(0),
        text,
    )


def said_checks(lines: list[str]) -> list[SaidCheck]:
    """What a user's lines quote of triage's checks and of an assert, one entry each in the
    user's order; nothing is added that the text does not write."""
    said: list[SaidCheck] = []
    check: str | None = None  # the check named last, for the failure lines under it
    place = ""
    for no, ln in enumerate(lines):
        text = ln.strip().strip("|").strip()
        if am := _ASSERT_AT.search(text):
            said.append(_said_assert(lines, no, am))
            continue
        cm = _CHECK_SAID.search(text)
        if cm is not None and cm.group(1) not in KNOWN_SCRIPTS:  # a test's name, not triage's
            cm = None
        if cm is not None and cm.group(1) != check:
            check, place = cm.group(1), ""
        for pm in _NOC_PLACE:
            if p := pm.search(text):
                place = f" on device {p.group(1)} {p.group(2)} {p.group(3)} NOC {p.group(4)}"
        counts = _NOC_COUNTS.search(text)
        words = counts or next((w for c in _NOC_WORDS if (w := c.search(text))), None)
        if words is not None:
            reg, var = words.group(1 if counts else "reg"), words.group(2 if counts else "var")
            rv, vv = words.group(3 if counts else "rv"), words.group(4 if counts else "vv")
            who = check if check and check.startswith("check_noc") else "check_noc_status"
            if said and said[-1].kind is SaidKind.CHECK and said[-1].text == f"{who} failed":
                said.pop()  # "check_noc_status: fail", its mismatch on the lines under it
            said.append(
                SaidCheck(
                    SaidKind.NOC,
                    f"{who} failed{place}: register {reg}={rv} but variable {var}={vv} (the "
                    "firmware's count of NOC transactions and the NOC's own disagree: the "
                    "device was not idle, a kernel changed the counter, or the NoC hung)",
                    True,
                )
            )
            continue
        if cm is not None and (r := _RESULT.search(cm.group(2))) is not None:
            failed = r.group(1).lower() not in ("pass", "passed", "passes", "ok")
            rest = cm.group(2)[r.end() :].strip(" :-|.")
            detail = f": {_short_paths(rest)[:200]}" if failed and len(rest) > 3 else ""
            said.append(
                SaidCheck(
                    SaidKind.CHECK,
                    f"{cm.group(1)} {'failed' if failed else 'passed'}" + detail,
                    failed,
                )
            )
    return said


def said_summary(said: list[SaidCheck]) -> tuple[HangPattern, str]:
    """A summary with no callstack, only its quotes of triage's checks or of an assert: what
    they show (the failures first), and that it cannot tell the core from them."""
    ordered = sorted(said, key=lambda c: not c.failed)[:6]
    quoted = "; ".join(c.text for c in ordered)
    if any(c.kind is SaidKind.ASSERT for c in said):
        return HangPattern.KERNEL_ASSERT, (
            f"the text quotes an assert that stopped a RISC: {quoted}; it names no core with "
            "a callstack, so it cannot tell which core and kernel (paste "
            "dump_lightweight_asserts' or dump_callstacks' table)"
        )
    failed = [c for c in said if c.failed]
    head = "the text quotes tt-triage's checks and no callstack"
    if not failed:
        head += ", and every check it quotes passed"
    return HangPattern.UNKNOWN, (
        f"{head}: {quoted}; it cannot tell which kernel hangs from that (paste "
        "dump_callstacks' table)"
    )
