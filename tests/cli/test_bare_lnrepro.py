"""``lnrepro`` with no command prints its help as help (not as one error line), and exits 0."""

from __future__ import annotations

from tests.harness import lnrepro


def test_bare_lnrepro_prints_the_help_and_exits_0() -> None:
    code, out, err = lnrepro()
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "Usage: lnrepro [OPTIONS] COMMAND [ARGS]..."
    assert "Commands:" in lines and any(line.lstrip().startswith("shrink ") for line in lines)
    assert "lnrepro: error" not in out
