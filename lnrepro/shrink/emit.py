"""The found case as a test a maintainer picks (filled in below)."""

from __future__ import annotations

from pathlib import Path

from lnrepro.model.shrink import Case, ShrinkRequest


def write_source(path: Path, case: Case, req: ShrinkRequest) -> Path:
    raise NotImplementedError
