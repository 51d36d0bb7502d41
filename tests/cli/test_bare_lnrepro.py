"""``lnrepro`` with no command prints its help as help (not as one error line), and exits 0
(issue 48)."""

from __future__ import annotations

import pytest

from lnrepro.cli.exits import _main


def test_bare_lnrepro_prints_the_help_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code = _main([])
    out = capsys.readouterr()
    assert code == 0 and out.err == ""
    lines = out.out.splitlines()
    assert lines[0] == "Usage: lnrepro [OPTIONS] COMMAND [ARGS]..."
    assert "Commands:" in lines and any(line.lstrip().startswith("shrink ") for line in lines)
    assert "lnrepro: error" not in out.out
