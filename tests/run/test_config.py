"""lnrepro.toml read through its typed shape (run/config.py's ConfigDoc): each wrong key is one
line naming the key and what it should be, as before the types; a right file gives the Config."""

from __future__ import annotations

from pathlib import Path

import pytest

from lnrepro.errors import InputError
from lnrepro.run.config import _parse

WRONG = [
    ({"profiles": 3}, "profiles must be a table of profiles"),
    ({"profiles": {"rel": 3}}, "profile 'rel' is not a table"),
    ({"profiles": {"rel": {"build": [["make"]]}}}, "profile 'rel': binary must be a path"),
    ({"profiles": {"rel": {"build": [[]], "binary": "b"}}}, "profile 'rel': build must be a list"),
    (
        {"profiles": {"rel": {"build": [["m"]], "binary": "b", "kernels": []}}},
        "profile 'rel': kernels",
    ),
    ({"env": {"A": 1}}, "env must be a table of strings"),
    ({"prebuilt": 3}, "prebuilt must be a list of strings"),
    ({"image": 3}, "profile, image and base_image must be strings"),
    ({"base_image": ["x"]}, "profile, image and base_image must be strings"),
]


@pytest.mark.parametrize(("table", "says"), WRONG, ids=[w[1][:24] for w in WRONG])
def test_a_wrong_key_is_one_line_naming_it(table: dict[str, object], says: str) -> None:
    with pytest.raises(InputError) as exc:
        _parse(table, Path("lnrepro.toml"))
    assert str(exc.value).startswith(f"lnrepro.toml: {says}") and "\n" not in str(exc.value)


def test_a_right_file_gives_its_profiles_defaults_and_prebuilt() -> None:
    cfg = _parse(
        {
            "profile": "rel",
            "env": {"A": "1"},
            "prebuilt": "dir:/a/{short}",
            "profiles": {"rel": {"build": [["./b.sh", "--release"]], "binary": "out/t"}},
        },
        Path("lnrepro.toml"),
    )
    assert cfg.get_profile(None).build == (("./b.sh", "--release"),)
    assert cfg.prebuilt == ("dir:/a/{short}",) and cfg.env == {"A": "1"}
    assert "in-tree" in cfg.profiles
