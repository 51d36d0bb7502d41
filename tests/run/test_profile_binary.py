"""A profile of lnrepro.toml whose binary lies outside the checkout is refused in one line that
says what to do (no internal error), before anything runs; one inside it is taken."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import assert_one_line_error, lnrepro
from tests.run.test_dispatch_timeout import checkout


@pytest.mark.parametrize(
    "binary", ["/opt/elsewhere/ttml_tests", "../build/ttml_tests", "build/../../x/ttml_tests"]
)
def test_a_profile_binary_outside_the_checkout_is_refused_in_one_line(
    binary: str, tmp_path: Path
) -> None:
    tree = checkout(tmp_path)
    (tmp_path / "lnrepro.toml").write_text(
        f'[profiles.mine]\nbuild = [["true"]]\nbinary = "{binary}"\n'
    )
    argv = ["run", "--tt-metal", str(tree), "--runner", "local", "--profile", "mine"]
    assert_one_line_error(
        lnrepro(*argv, "--dry-run", cwd=tmp_path),
        4,
        f"profile 'mine': binary {binary} is not inside the checkout",
        "--backend local --binary",  # what to do with a binary built elsewhere
    )


def test_a_profile_binary_inside_the_checkout_is_taken(tmp_path: Path) -> None:
    tree = checkout(tmp_path)
    (tmp_path / "lnrepro.toml").write_text(
        '[profiles.mine]\nbuild = [["true"]]\nbinary = "out/./tests/ttml_tests"\n'
    )
    argv = ["run", "--tt-metal", str(tree), "--runner", "local", "--profile", "mine"]
    code, _, err = lnrepro(*argv, "--dry-run", cwd=tmp_path)
    assert code == 0, err
