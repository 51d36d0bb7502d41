"""The door of lnrepro.hang: other packages import only this module (the records reach the
diagnosis type through :mod:`lnrepro.hang.model`).

The rooms are listed in :mod:`lnrepro.hang`; none of them imports the door.

Whatever a user pastes about a hang is read into one :class:`~lnrepro.hang.model.Diagnosis`:

* :func:`read_paste` — text in, a :class:`HangReading` out (``None`` when the text is not about
  a hang). The format is sniffed from the content, never from a file name:

  - a watcher log of any era, whole or an excerpt (:mod:`lnrepro.hang.watcher.log`);
  - tt-triage output of any era: the one-script era, the script framework with tabulate or rich
    tables, cut at the right edge, several scripts in one paste (:mod:`lnrepro.hang.triage.output`);
  - a user's condensed summary (``Device 1, core 1-5 (brisc):`` then frames,
    :mod:`lnrepro.hang.triage.summary`).

* :func:`read_file` — the same for a file (the first :data:`MAX_BYTES` of it).
* :func:`read_triage` — text known to be tt-triage's output (a run's own triage capture): its
  diagnosis, or ``None`` when it shows nothing to diagnose.
* :func:`sniff` — which format the text is, without diagnosing it.

The diagnosis says which format and era was read (``diagnosis.source``), and its ``key`` is the
hang's signature for bisect (pattern, kernel, RISC, waypoint or top frame). Pure: no process, no
file but the one :func:`read_file` reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from lnrepro.hang.dispatch import (
    COMMAND_ENV,
    DEVICE_TIMEOUT,
    FRAMEWORK,
    TIMEOUT_ENV,
    TRIAGE_SCRIPT,
    TRIAGE_TIMEOUT_S,
    DeviceTimeoutScanner,
    as_device_timeout,
    device_timeout_seen,
    dispatch_env,
    mark_device_timeout,
    triage_argv,
    triage_flags,
    triage_in_log,
)
from lnrepro.hang.model import SCHEMA, Diagnosis, HangSource, Source, upgrade
from lnrepro.hang.triage.diagnose import diagnose_triage
from lnrepro.hang.triage.output import parse_triage, triage_evidence
from lnrepro.hang.triage.summary import parse_summary, summary_evidence
from lnrepro.hang.watcher.diagnose import diagnose
from lnrepro.hang.watcher.dprint import parse_dprint
from lnrepro.hang.watcher.formats import noise, unfold, watcher_evidence
from lnrepro.hang.watcher.log import parse, parse_file
from lnrepro.model.jsonio import JSON

MAX_BYTES = 64 << 20  # past this a file's rest is not read (a watcher log of a long run)

_GTEST = re.compile(r"^\[ +(RUN|OK|FAILED|PASSED) +\]|^\[=+\] ", re.M)


@dataclass(frozen=True, slots=True)
class HangReading:
    """A text read as a hang: its diagnosis (which carries the format and era read), and
    whether the text is also a googletest console log (a hung test's log with triage in it)."""

    diagnosis: Diagnosis
    in_gtest_log: bool = False

    @property
    def source(self) -> Source:
        assert self.diagnosis.source is not None  # every reader here sets it
        return self.diagnosis.source

    @property
    def format(self) -> HangSource:
        return self.source.format

    @property
    def era(self) -> str:
        return self.source.era

    def what(self) -> str:
        """The format and era in a few words, e.g. 'tt-triage, framework/rich'."""
        return f"{self.format.value}, {self.era}"

    def to_json(self) -> JSON:
        return self.diagnosis.to_json()


def _sniffed(text: str) -> tuple[HangSource | None, list[str]]:
    scores = {
        HangSource.WATCHER_LOG: watcher_evidence(unfold(text)[0]),
        HangSource.TT_TRIAGE: triage_evidence(text),
        HangSource.SUMMARY: summary_evidence(text),
    }
    best = max(scores, key=lambda k: scores[k])
    if scores[best] <= 0:
        return None, []
    return best, [k.value for k, v in scores.items() if v > 0 and k is not best]


def sniff(text: str) -> HangSource | None:
    """Which kind of hang text this is, by its content (the kind with the most evidence);
    None when it is none of them."""
    return _sniffed(text)[0]


_QUOTE = re.compile(r"^ {0,3}(?:> ?)+", re.M)  # quoted once, or a reply to a reply


def unquote(text: str) -> tuple[str, bool]:
    """A paste quoted Markdown- or mail-style (most lines begin with '> ', or '> > ' in a reply
    to a reply): the text without its quoting, and whether there was any."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    quoted = sum(1 for ln in lines if _QUOTE.match(ln))
    if not lines or quoted * 2 <= len(lines):
        return text, False
    return _QUOTE.sub("", text), True


def read_paste(text: str) -> HangReading | None:
    """Read a pasted text about a hang; None when it is not one (then it may be a gtest log)."""
    text, quoted = unquote(text)
    reading = _read(text)
    if reading is None or not quoted:
        return reading
    src = reading.source
    diag = replace(reading.diagnosis, source=replace(src, noise=("quoted with '> '", *src.noise)))
    return replace(reading, diagnosis=diag)


def _read(text: str) -> HangReading | None:
    kind, also = _sniffed(text)
    if kind is None:
        return None
    reading = _read_as(kind, text)
    if not also:
        return reading
    note = (
        f"the text also holds {' and '.join(also)} lines; it was read as {kind.value} (more of it)"
    )
    diag = reading.diagnosis
    return replace(reading, diagnosis=replace(diag, warnings=(*diag.warnings, note)))


def _read_as(kind: HangSource, text: str) -> HangReading:
    in_gtest = _GTEST.search(text) is not None
    if kind is HangSource.WATCHER_LOG:
        text, folded = unfold(text)
        log = parse(text)
        diag = diagnose(log)
        if diag.source is not None:
            said = noise(text, log)
            if folded:
                said = (f"lines folded at column {folded} (joined again)", *said)
            diag = replace(diag, source=replace(diag.source, noise=said))
        return HangReading(diag, in_gtest)
    if kind is HangSource.TT_TRIAGE:
        return HangReading(diagnose_triage(parse_triage(text)), in_gtest)
    return HangReading(diagnose_triage(parse_summary(text)), in_gtest)


def read_triage(text: str) -> Diagnosis | None:
    """tt-triage's output captured by a run (stdout of ``tt-triage.py``, or a test's console with
    tt-metal's timeout command in it): its diagnosis; None when no triage output is in it."""
    if triage_evidence(text) <= 0:
        return None
    return diagnose_triage(parse_triage(text))


def read_watcher(path: Path, console: str = "") -> Diagnosis:
    """A hung attempt's watcher log read into a diagnosis, with the DPRINT lines about circular
    buffers in its console output attached to the cores they came from."""
    return diagnose(parse_file(path), parse_dprint(console))


def read_file(path: Path) -> HangReading | None:
    """:func:`read_paste` on a file; None when it is not about a hang or cannot be read (the
    caller's own reader then says why)."""
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_BYTES)
    except OSError:
        return None
    if b"\x00" in data[:8192]:
        return None
    return read_paste(data.decode("utf-8", errors="replace"))


__all__ = [
    "COMMAND_ENV",
    "DEVICE_TIMEOUT",
    "FRAMEWORK",
    "MAX_BYTES",
    "SCHEMA",
    "TIMEOUT_ENV",
    "TRIAGE_SCRIPT",
    "TRIAGE_TIMEOUT_S",
    "DeviceTimeoutScanner",
    "Diagnosis",
    "HangReading",
    "HangSource",
    "Source",
    "as_device_timeout",
    "device_timeout_seen",
    "dispatch_env",
    "mark_device_timeout",
    "read_file",
    "read_paste",
    "read_triage",
    "read_watcher",
    "sniff",
    "triage_argv",
    "triage_flags",
    "triage_in_log",
    "unquote",
    "upgrade",
]
