"""Watcher logs folded at 80 columns (``fold -w 80``, an 80-column terminal's hard wrap), in each
era's format: the same diagnosis as the unfolded log, and the source says the lines were joined.
Before, the era was read wrong, kernel names were cut ('writer_pa'), the other cores lost."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from lnrepro.hang.door import read_paste
from tests.hang.watcher import pastes as P
from tests.hang.watcher import samples as S

TEXTS = {
    **{f"{era}/full": P.full_log(era) for era in P.ERAS},
    **{f"{era}/excerpt": P.excerpt(era) for era in P.ERAS},
    **{f"samples/{name}": text for name, text in S.ALL_ERAS.items()},
}


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_a_log_folded_at_80_reads_as_the_whole_one(name: str) -> None:
    whole, cut = read_paste(TEXTS[name]), read_paste(P.folded(TEXTS[name]))
    assert whole is not None and cut is not None, name
    assert cut.era == whole.era, (cut.era, whole.era)
    a, b = whole.diagnosis, cut.diagnosis
    assert (b.pattern, b.key, b.progress) == (a.pattern, a.key, a.progress), (b.lines(), a.lines())
    assert b.primary is not None and a.primary is not None
    assert b.primary.cores == a.primary.cores
    assert b.summary == a.summary
    if any(len(ln) > 80 for ln in TEXTS[name].splitlines()):
        assert any("folded at column 80" in n for n in cut.source.noise), cut.source.noise


@pytest.mark.skipif(shutil.which("fold") is None, reason="no coreutils fold")
def test_the_fold_here_is_coreutils_fold() -> None:
    text = S.ALL_ERAS["2024-phys"] + "\tk\ttab\there " * 12 + "\n"
    real = subprocess.run(["fold", "-w", "80"], input=text, capture_output=True, text=True)
    assert P.folded(text) == real.stdout
