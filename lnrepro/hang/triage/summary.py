"""A user's condensed summary of tt-triage (or of a watcher log), read into the same rows as the
tool's own output. Pure. What such summaries look like is not fixed by any tool; these are the
shapes read, each a header naming device, core(s) and RISC(s), then the lines under it:

    Device 1, core 1-5 (brisc):
      #0 0x00008A3C in cb_wait_front () at ./tt_metal/hw/inc/dataflow_api.h 418:5
      #1 kernel_main () at ./ttnn/.../writer_unary.cpp 31:9
    Device 1, core 1-5 (trisc0, trisc1, trisc2): idle, main () in trisc.cc
    dev 0 cores 1-1, 2-1 (ncrisc): kernel reader_x, waypoint NSW
    Device 2:
      core 3-3 (brisc): cb_wait_front (dataflow_api.h:418) <- kernel_main (writer.cpp:57)

Cores written ``x-y`` are tt-triage's noc0 coordinates (its ``Loc`` prints ``<noc0x>-<noc0y>``,
tt-exalens ``coordinate.py`` at eb5fc96502ca); ``(x,y)`` are logical. Nothing is guessed: a
kernel, frame or waypoint is taken only when the text writes it.
"""

from __future__ import annotations

import re

from lnrepro.hang.model import WAYPOINT_MEANING, Frame, HangSource
from lnrepro.hang.triage.output import (
    KNOWN_SCRIPTS,
    AssertRow,
    Place,
    RiscRow,
    SaidCheck,
    SaidKind,
    TriageEra,
    TriageOutput,
    clean_lines,
    frame,
)

_RISC = r"(?:brisc|ncrisc|trisc[0-2]|erisc[0-9]?|b|nc|t[0-2])"
_HEAD = re.compile(
    r"(?i)^\W*(?:dev(?:ice)?\s*#?\s*(\d{1,4})\s*[,:/]?\s*)?cores?\s+"
    r"((?:\(?\s*e?\d{1,3}\s*[-,]\s*\d{1,3}\s*\)?\s*(?:,|and|&)?\s*)+)"
    r"\s*(?:\(([^)]*)\)|\[([^\]]*)\]|(" + _RISC + r"(?:\s*[,/+]\s*" + _RISC + r")*))?\s*:\s*(.*)$"
)
_CORE = re.compile(r"(\()?\s*(e?)(\d{1,3})\s*([-,])\s*(\d{1,3})\s*\)?")
_RISC_WORD = re.compile(r"(?i)\b(brisc|ncrisc|trisc[0-2]|erisc[0-9]?)\b")
_KERNEL = re.compile(r"(?i)\bkernel(?:\s+name)?\s*[:=]?\s+([A-Za-z_][\w.\-/]*)")
_WAYPOINT_SAID = re.compile(r"(?i)\bwaypoint\s*[:=]?\s*([A-Z0-9_]{1,4})\b")
_IDLE = re.compile(r"(?i)\b(idle|in firmware|not running|no kernel|in reset)\b")
_BARE_FRAME = re.compile(
    r"^\s*(?:#\d{1,4}\s+)?(?:(0x[0-9A-Fa-f]{1,16})\s+in\s+)?([A-Za-z_][\w:<>~]*)\s*\(\)"
    r"(?:\s*(?:at|in)\s+(\S+?)(?:[\s:](\d{1,7})(?::(\d{1,5}))?)?)?\s*$"
)


_DEVICE_ALONE = re.compile(r"(?i)^\W*dev(?:ice)?\s*#?\s*(\d{1,4})\s*:?\s*$")
_CALL_AT = re.compile(r"([A-Za-z_][\w:<>~]*)\s*\(\s*(\S+?\.(?:h|hpp|cc|cpp|c|inl)):(\d{1,7})\s*\)")


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


def _balanced(text: str, start: int) -> tuple[str, int] | None:
    """What is inside the parenthesis opened just before ``start`` (quotes respected), and where
    it closes; None when the line ends first (an assert cut short)."""
    depth, quote = 1, ""
    for i in range(start, len(text)):
        c = text[i]
        if quote:
            if c == quote and text[i - 1] != "\\":
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return text[start:i], i + 1
    return None


def _top_comma(args: str) -> int:
    depth, quote = 0, ""
    for i, c in enumerate(args):
        if quote:
            if c == quote and args[i - 1] != "\\":
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            return i
    return -1


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
    who = [r.upper() for r in dict.fromkeys(_RISC_WORD.findall(before))]
    if who:
        dev = re.search(r"(?i)\bdev(?:ice)?\s*#?\s*(\d{1,4})\b", before)
        words.append(f"on {', '.join(who)}" + (f" of device {dev.group(1)}" if dev else ""))
    return SaidCheck(SaidKind.ASSERT, ", ".join(words), True)


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
            detail = f": {rest[:200]}" if failed and len(rest) > 3 else ""
            said.append(
                SaidCheck(
                    SaidKind.CHECK,
                    f"{cm.group(1)} {'failed' if failed else 'passed'}" + detail,
                    failed,
                )
            )
    return said


def summary_evidence(text: str) -> int:
    """How much of a text reads as a condensed summary: headers naming a core and a RISC, or a
    core followed by frames (0: none)."""
    score = 0
    for ln in clean_lines(text)[0]:
        m = _HEAD.match(ln)
        if m and (m.group(3) or m.group(4) or m.group(5) or _RISC_WORD.search(m.group(6) or "")):
            score += 3
    return score + len(said_checks(clean_lines(text)[0]))


def _cores(spec: str, device: int | None) -> list[Place]:
    out: list[Place] = []
    for m in _CORE.finditer(spec):
        a, b = int(m.group(3)), int(m.group(5))
        kind = "eth" if m.group(2) else "worker"
        if m.group(4) == "," or m.group(1):  # (x,y): logical
            out.append(Place(device, a, b, None, kind))
        else:  # x-y: noc0, as tt-triage's Loc prints it
            out.append(Place(device, None, None, (a, b), kind))
    return out


def _riscs(*texts: str | None) -> list[str]:
    names: list[str] = []
    for t in texts:
        for m in _RISC_WORD.finditer(t or ""):
            r = m.group(1).upper()
            if r not in names:
                names.append(r)
    return names


def parse_summary(text: str) -> TriageOutput:
    """Read a condensed summary. Never raises."""
    out = TriageOutput(TriageEra.SUMMARY, HangSource.SUMMARY)
    lines, pasted = clean_lines(text)
    out.noise += pasted
    blocks: list[tuple[int, re.Match[str], list[str], int | None]] = []
    device_line: int | None = None  # "Device 1:" on a line of its own, for the cores under it
    for no, ln in enumerate(lines, 1):
        m = _HEAD.match(ln)
        if m is not None:
            blocks.append((no, m, [], device_line))
        elif d := _DEVICE_ALONE.match(ln):
            device_line = int(d.group(1))
        elif blocks and ln.strip():
            blocks[-1][2].append(ln)
    out.said += said_checks(lines)
    for no, m, body, under in blocks:
        device = int(m.group(1)) if m.group(1) else under
        places = _cores(m.group(2), device)
        rest = m.group(6) or ""
        riscs = _riscs(m.group(3), m.group(4), m.group(5)) or _riscs(rest)
        if not places or not riscs:
            out.warnings.append(
                f"line {no}: a core with no RISC named: {lines[no - 1].strip()[:80]}"
            )
            continue
        said = " ".join([rest, *body])
        frames = _frames([rest, *body])
        km = _KERNEL.search(said)
        name = km.group(1) if km else None
        if name and name.lower() in ("id", "is", "in", "none", "n/a"):
            name = None
        wm = _WAYPOINT_SAID.search(said)
        wp = (
            wm.group(1)
            if wm
            else next(
                (
                    w
                    for w in re.findall(r"\b[A-Z]{2,4}\b", said)
                    if w in WAYPOINT_MEANING and len(w) > 2
                ),
                None,
            )
        )
        idle = _IDLE.search(said) is not None and not any(
            f.function.startswith(("cb_", "noc_", "llk_")) for f in frames
        )
        code = re.search(r"\b\w*ASSERT\(.*\)", said)
        for place in places:
            if code is not None:  # "stopped at LLK_ASSERT(...)": the summary of an assert row
                out.asserts += [AssertRow(place, r, name, code.group(0), frames) for r in riscs]
                continue
            for risc in riscs:
                out.rows.append(
                    RiscRow(
                        place,
                        risc,
                        "summary",
                        no,
                        None,
                        name,
                        None,
                        None,
                        wp,
                        None,
                        frames,
                        None,
                        (),
                        idle,
                    )
                )
    return out


def _frames(lines: list[str]) -> tuple[Frame, ...]:
    frames: list[Frame] = []
    for ln in lines:
        if "<-" in ln or ("(" in ln and _CALL_AT.search(ln) and "#" not in ln and "()" not in ln):
            # "cb_wait_front (dataflow_api.h:418) <- kernel_main (writer.cpp:57)"
            for c in _CALL_AT.finditer(ln):
                frames.append(
                    Frame(
                        index=len(frames),
                        function=c.group(1),
                        file=c.group(2),
                        line=int(c.group(3)),
                    )
                )
            continue
        f = frame(ln) if "#" in ln else None
        if f is None and (m := _BARE_FRAME.match(ln)):
            pc = int(m.group(1), 16) if m.group(1) else None
            f = Frame(
                index=len(frames),
                function=m.group(2),
                file=m.group(3),
                line=int(m.group(4)) if m.group(4) else None,
                column=int(m.group(5)) if m.group(5) else None,
                pc=pc,
            )
        if f is not None:
            frames.append(f)
    return tuple(frames)


__all__ = ["parse_summary", "said_checks", "summary_evidence"]
