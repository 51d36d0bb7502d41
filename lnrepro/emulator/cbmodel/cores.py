"""The model itself: each core's reader, compute and writer stepped in turn over two circular
buffers until all are done or none can move (a deadlock)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .config import CbConfig


@dataclass
class CoreSim:
    """One core's three kernels and two circular buffers."""

    x: int
    y: int
    blocks: int
    in_avail: int = 0  # pages pushed into cb_in and not yet popped
    out_avail: int = 0
    reader_block: int = 0
    compute_block: int = 0
    compute_phase: str = "wait"  # wait: cb_wait_front(cb_in); reserve: cb_reserve_back(cb_out)
    writer_block: int = 0
    written: int = 0  # pages the writer popped (wrote out)
    said: set[str] = field(default_factory=set)  # DPRINT lines already printed (one per wait)

    @property
    def done(self) -> bool:
        return self.reader_done and self.compute_done and self.writer_done

    @property
    def reader_done(self) -> bool:
        return self.reader_block >= self.blocks

    @property
    def compute_done(self) -> bool:
        return self.compute_block >= self.blocks

    @property
    def writer_done(self) -> bool:
        return self.writer_block >= self.blocks


Say = Callable[[CoreSim, str, str], None]


def step(c: CoreSim, cfg: CbConfig, say: Say) -> bool:
    """One turn of each kernel on a core; True when any of them moved."""
    moved = False
    if not c.reader_done:
        n = cfg.reader_pages_per_block
        if cfg.cb_in_capacity - c.in_avail >= n:
            c.in_avail += n
            say(c, "NC", f"block {c.reader_block}: cb_push_back(c_{cfg.cb_in_id}, {n})")
            c.reader_block += 1
            moved = True
        else:
            say(c, "NC", f"block {c.reader_block}: cb_reserve_back(c_{cfg.cb_in_id}, {n}) waits")
    if not c.compute_done:
        if c.compute_phase == "wait":
            n = cfg.compute_pages_per_block
            if c.in_avail >= n:
                c.compute_phase = "reserve"
                moved = True
            else:
                say(
                    c, "TR0", f"block {c.compute_block}: cb_wait_front(c_{cfg.cb_in_id}, {n}) waits"
                )
        if c.compute_phase == "reserve":
            n = cfg.compute_out_pages_per_block
            if cfg.cb_out_capacity - c.out_avail >= n:
                c.in_avail -= cfg.compute_pages_per_block
                say(
                    c,
                    "TR0",
                    f"block {c.compute_block}: cb_pop_front(c_{cfg.cb_in_id}, {cfg.compute_pages_per_block})",
                )
                c.out_avail += n
                say(c, "TR2", f"block {c.compute_block}: cb_push_back(c_{cfg.cb_out_id}, {n})")
                c.compute_block += 1
                c.compute_phase = "wait"
                moved = True
            else:
                say(
                    c,
                    "TR2",
                    f"block {c.compute_block}: cb_reserve_back(c_{cfg.cb_out_id}, {n}) waits",
                )
    if not c.writer_done:
        n = cfg.writer_pages_per_block
        if c.out_avail >= n:
            c.out_avail -= n
            c.written += n
            say(c, "BR", f"block {c.writer_block}: cb_pop_front(c_{cfg.cb_out_id}, {n})")
            c.writer_block += 1
            moved = True
        else:
            say(c, "BR", f"block {c.writer_block}: cb_wait_front(c_{cfg.cb_out_id}, {n}) waits")
    return moved


@dataclass
class Outcome:
    cores: list[CoreSim]
    deadlocked: bool
    steps: int

    @property
    def hung_cores(self) -> list[CoreSim]:
        return [c for c in self.cores if not c.done]


def simulate(cfg: CbConfig, cores: Sequence[tuple[int, int]], say: Say | None = None) -> Outcome:
    """Step every core in turn until all are done or a whole round moves nothing."""
    sims = [CoreSim(x, y, cfg.blocks_per_core) for x, y in cores]
    quiet: Say = say or (lambda c, r, t: None)
    rounds = 0
    while True:
        rounds += 1
        moved = False
        for c in sims:
            if not c.done:
                moved = step(c, cfg, quiet) or moved
        if all(c.done for c in sims):
            return Outcome(sims, False, rounds)
        if not moved:
            return Outcome(sims, True, rounds)
