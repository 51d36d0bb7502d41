"""``lnrepro runs --json`` (``lnrepro.runs/1``): the saved records, one entry each, defined once
(scripts/schemas.py derives docs/schemas/runs.json from :class:`RunsDoc`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Literal

RUNS_SCHEMA: Literal["lnrepro.runs/1"] = "lnrepro.runs/1"


class RecordKind(str, Enum):
    RUN = "run"
    BISECT = "bisect"


class ListedState(str, Enum):
    """A run's or a bisect's state, or why it could not be listed."""

    RUNNING = "running"
    COMPLETE = "complete"
    INTERRUPTED = "interrupted"
    ABORTED = "aborted"
    UNREADABLE = "unreadable"  # ``problem`` says why


@dataclass(frozen=True, kw_only=True)
class Listed:
    """One saved record, as ``lnrepro runs --json`` lists it."""

    id: str
    kind: RecordKind
    path: Path  # the record file
    mtime: float  # the record file's, in seconds since the epoch
    state: ListedState
    headline: str
    where: str  # backend / runner, or the repository bisected
    commit: str | None
    problem: str | None  # why it is unreadable


@dataclass(frozen=True, kw_only=True)
class RunsDoc:
    """``lnrepro runs --json``: every saved run and bisect, oldest first."""

    schema: Literal["lnrepro.runs/1"] = RUNS_SCHEMA
    records: tuple[Listed, ...]
