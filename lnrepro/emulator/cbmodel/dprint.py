"""DPRINT lines of the chosen cores' CB calls (``TT_METAL_DPRINT_CORES``, ``_FILE``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TextIO

from .config import CbConfig
from .cores import CoreSim


def dprint_cores(value: str | None, cfg: CbConfig) -> set[tuple[int, int]]:
    """The cores TT_METAL_DPRINT_CORES names (rtoptions' forms); empty when unset or bad."""
    if not value:
        return set()
    v = value.strip()
    if v in ("all", "worker"):
        return set(cfg.cores)
    pairs = [(int(a), int(b)) for a, b in re.findall(r"(\d+)\s*,\s*(\d+)", v)]
    if v[0].isdigit():
        return set(pairs[:1])
    if "-" in v and len(pairs) >= 2:
        (x0, y0), (x1, y1) = pairs[0], pairs[1]
        return {(x, y) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)}
    return set(pairs)


class Dprint:
    def __init__(self, cores: set[tuple[int, int]], out: TextIO) -> None:
        self.cores, self.out = cores, out

    def __call__(self, c: CoreSim, risc: str, text: str) -> None:
        if (c.x, c.y) not in self.cores:
            return
        if text.endswith(" waits"):  # a kernel prints before it blocks, once
            if text in c.said:
                return
            c.said.add(text)
        self.out.write(f"0:{c.x}-{c.y}:{risc}: {text}\n")


def dprint_out(env: dict[str, str], out: TextIO) -> TextIO:
    """Where DPRINT lines go: ``TT_METAL_DPRINT_FILE`` (appended to) or the console."""
    path = env.get("TT_METAL_DPRINT_FILE")
    if path and env.get("TT_METAL_DPRINT_CORES"):
        return Path(path).open("a", encoding="utf-8")  # run() closes it
    return out
