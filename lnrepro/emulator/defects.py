"""The emulator's vocabulary without its numerics: defects, eras, architectures and the
``--defect`` grammar. numpy-free, so a command that only checks a ``--defect`` value (``lnrepro
run --backend emulator`` before it starts anything) does not pay numpy's import;
:mod:`lnrepro.emulator.kernel` re-exports all of it. What each name means is documented there."""

from __future__ import annotations

from enum import Enum


class Defect(str, Enum):
    DOUBLE_SUBTRACT = "double-subtract"
    DROP_XHAT_BLOCKS = "drop-xhat-blocks"
    DROP_PARTIAL_TILE = "drop-partial-tile"  # hypothesis: mechanism unconfirmed
    OVERWRITE_DY_GAMMA_SUM = "overwrite-dy-gamma-sum"  # refuted by the code

    @property
    def status(self) -> str:
        return {
            Defect.DOUBLE_SUBTRACT: "in the code (fixed by #53215)",
            Defect.DROP_XHAT_BLOCKS: "in the code (fixed by #53215)",
            Defect.DROP_PARTIAL_TILE: "hypothesis (mechanism unconfirmed)",
            Defect.OVERWRITE_DY_GAMMA_SUM: "refuted (ELWMUL accumulates into DEST)",
        }[self]


class Era(str, Enum):
    NOV_2025 = "2025-11"
    DEC_2025 = "2025-12"
    FIXED = "fixed"

    @property
    def newer_factory(self) -> bool:
        return self is not Era.NOV_2025


class Arch(str, Enum):
    WORMHOLE_B0 = "wormhole_b0"
    BLACKHOLE = "blackhole"


PRESETS: dict[str, frozenset[Defect]] = {
    "shipped": frozenset({Defect.DOUBLE_SUBTRACT, Defect.DROP_XHAT_BLOCKS}),
    "none": frozenset(),
}
ERA_DEFECTS = {
    Era.NOV_2025: PRESETS["shipped"],
    Era.DEC_2025: PRESETS["shipped"],
    Era.FIXED: PRESETS["none"],
}


# what ``--defect`` accepts, for every command that takes one (run, bisect, tolerance): one list
DEFECT_NAMES = (
    "shipped, none, or a comma list of double-subtract, drop-xhat-blocks, drop-partial-tile "
    "(hypothesis), overwrite-dy-gamma-sum (refuted)"
)


def parse_defects(text: str) -> frozenset[Defect]:
    """``shipped``, ``none``, or a comma-separated list of defect names."""
    text = text.strip()
    if text in PRESETS:
        return PRESETS[text]
    out = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise ValueError(f"{text!r} has an empty name in its list; use none for no defect")
        try:
            out.add(Defect(part))
        except ValueError:
            names = ", ".join([*PRESETS, *(d.value for d in Defect)])
            raise ValueError(f"unknown defect {part!r}; choose from {names}") from None
    return frozenset(out)


def defects_label(defects: frozenset[Defect]) -> str:
    preset = next((name for name, p in PRESETS.items() if p == defects), None)
    return preset or ",".join(sorted(d.value for d in defects))
