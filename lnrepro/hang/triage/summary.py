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

from lnrepro.hang.model import Frame, HangSource
from lnrepro.hang.triage.output import (
    AssertRow,
    Place,
    RiscRow,
    TriageEra,
    TriageOutput,
    clean_lines,
    frame,
)
from lnrepro.hang.triage.said import KNOWN_SCRIPTS, RISC_WORD, assert_code, said_checks
from lnrepro.hang.waypoints import WAYPOINT_MEANING

_RISC = r"(?:brisc|ncrisc|trisc[0-2]|erisc[0-9]?|b|nc|t[0-2])"
_HEAD = re.compile(
    r"(?i)^\W*(?:dev(?:ice)?\s*#?\s*(\d{1,4})\s*[,:/]?\s*)?cores?\s+"
    r"((?:\(?\s*e?\d{1,3}\s*[-,]\s*\d{1,3}\s*\)?\s*(?:,|and|&)?\s*)+)"
    r"\s*(?:\(([^)]*)\)|\[([^\]]*)\]|(" + _RISC + r"(?:\s*[,/+]\s*" + _RISC + r")*))?\s*:\s*(.*)$"
)
_CORE = re.compile(r"(\()?\s*(e?)(\d{1,3})\s*([-,])\s*(\d{1,3})\s*\)?")
_KERNEL = re.compile(r"(?i)\bkernel(?:\s+name)?\s*[:=]?\s+([A-Za-z_][\w.\-/]*)")
_WAYPOINT_SAID = re.compile(r"(?i)\bwaypoint\s*[:=]?\s*([A-Z0-9_]{1,4})\b")
_IDLE = re.compile(r"(?i)\b(idle|in firmware|not running|no kernel|in reset)\b")
_BARE_FRAME = re.compile(
    r"^\s*(?:#\d{1,4}\s+)?(?:(0x[0-9A-Fa-f]{1,16})\s+in\s+)?([A-Za-z_][\w:<>~]*)\s*\(\)"
    r"(?:\s*(?:at|in)\s+(\S+?)(?:[\s:](\d{1,7})(?::(\d{1,5}))?)?)?\s*$"
)


_OWN_SECTION = re.compile(r"^\s{0,2}(\w{3,60})\.py:\s*$")  # triage.py's serialize_result
_DEVICE_ALONE = re.compile(r"(?i)^\W*dev(?:ice)?\s*#?\s*(\d{1,4})\s*:?\s*$")
_CALL_AT = re.compile(r"([A-Za-z_][\w:<>~]*)\s*\(\s*(\S+?\.(?:h|hpp|cc|cpp|c|inl)):(\d{1,7})\s*\)")


def summary_evidence(text: str) -> int:
    """How much of a text reads as a condensed summary: headers naming a core and a RISC, or a
    core followed by frames, and quotes of triage's checks or an assert outside triage's own
    ``<script>.py:`` sections (in them, they are tt-triage's output) (0: none)."""
    score = 0
    lines = clean_lines(text)[0]
    for ln in lines:
        m = _HEAD.match(ln)
        if m and (m.group(3) or m.group(4) or m.group(5) or RISC_WORD.search(m.group(6) or "")):
            score += 3
    if any((m := _OWN_SECTION.match(ln)) and m.group(1) in KNOWN_SCRIPTS for ln in lines):
        return score
    return score + len(said_checks(lines))


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
    return list(
        dict.fromkeys(m.group(1).upper() for t in texts for m in RISC_WORD.finditer(t or ""))
    )


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
        named = [w for w in re.findall(r"\b[A-Z]{3,4}\b", said) if w in WAYPOINT_MEANING]
        wp = wm.group(1) if wm else next(iter(named), None)
        idle = _IDLE.search(said) is not None and not any(
            f.function.startswith(("cb_", "noc_", "llk_")) for f in frames
        )
        code = next((c for ln in [rest, *body] if (c := assert_code(ln))), None)
        for place in places:
            if code is not None:  # "stopped at LLK_ASSERT(...)": the summary of an assert row
                out.asserts += [AssertRow(place, r, name, code, frames) for r in riscs]
                continue
            for risc in riscs:
                out.rows.append(
                    RiscRow(
                        place,
                        risc,
                        "summary",
                        no,
                        kernel_name=name,
                        waypoint=wp,
                        frames=frames,
                        said_idle=idle,
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
