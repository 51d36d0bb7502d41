"""A profile of lnrepro.toml whose binary lies outside the checkout (issue 48: "internal error:
ValueError ... is not in the subpath"): one line that says what to do, before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from lnrepro.cli.exits import _main
from tests.run.test_dispatch_timeout import checkout


@pytest.mark.parametrize(
    "binary", ["/opt/elsewhere/ttml_tests", "../build/ttml_tests", "build/../../x/ttml_tests"]
)
def test_a_profile_binary_outside_the_checkout_is_refused_in_one_line(
    binary: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = checkout(tmp_path)
    (tmp_path / "lnrepro.toml").write_text(
        f'[profiles.mine]\nbuild = [["true"]]\nbinary = "{binary}"\n'
    )
    monkeypatch.chdir(tmp_path)
    argv = ["run", "--tt-metal", str(tree), "--runner", "local", "--profile", "mine"]
    code = _main([*argv, "--dry-run"])
    out = capsys.readouterr()
    assert code == 4 and out.out == "", out.err
    err = out.err
    assert err.count("\n") == 1 and "internal error" not in err
    assert f"profile 'mine': binary {binary} is not inside the checkout" in err
    assert "--backend local --binary" in err  # what to do with a binary built elsewhere


def test_a_profile_binary_inside_the_checkout_is_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = checkout(tmp_path)
    (tmp_path / "lnrepro.toml").write_text(
        '[profiles.mine]\nbuild = [["true"]]\nbinary = "out/./tests/ttml_tests"\n'
    )
    monkeypatch.chdir(tmp_path)
    argv = ["run", "--tt-metal", str(tree), "--runner", "local", "--profile", "mine"]
    assert _main([*argv, "--dry-run"]) == 0, capsys.readouterr().err
