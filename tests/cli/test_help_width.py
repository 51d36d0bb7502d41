"""At 80 columns no help line is wider than the terminal (issue 48): a token too long for its
column (an image name, a default filter, a pytest node id) moves left, whole, until it fits."""

from __future__ import annotations

from tests.harness import lnrepro


def test_no_help_line_is_wider_than_80_columns() -> None:
    from lnrepro.cli import all_commands

    for name in ["", *all_commands()]:
        args = [name, "--help"] if name else ["--help"]
        out = lnrepro(*args, width=78).out  # what COLUMNS=80 gives click (80 - 2)
        wide = [line for line in out.splitlines() if len(line) > 80]
        assert not wide, (name, wide[:3])
    out = lnrepro("run", "--help", width=78).out
    image = "ghcr.io/tenstorrent/tt-metal/tt-metalium/ubuntu-22.04-dev-amd64:latest]"
    assert any(line.strip() == image for line in out.splitlines()), out


def test_fit_tokens_moves_only_a_lone_token_and_keeps_it_whole() -> None:
    from lnrepro.cli.help import fit_tokens

    lone = " " * 30 + "x" * 60
    assert fit_tokens(lone, 78) == " " * 18 + "x" * 60
    words = " " * 30 + "a " * 30
    assert fit_tokens(words, 78) == words  # words wrap elsewhere; this moves only a lone token
    assert fit_tokens("  " + "y" * 90, 78) == "y" * 90  # longer than the line: at the margin
