"""docs/schemas/ holds what scripts/schemas.py derives from the record types: a change to a type
that is not regenerated (or a hand edit of a derived file) fails here."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("schemas_script", ROOT / "scripts" / "schemas.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_committed_schemas_are_the_generated_ones() -> None:
    s = script()
    for name in s.DERIVED:
        assert (ROOT / "docs" / "schemas" / name).read_text() == s.text(name), (
            f"docs/schemas/{name} differs from the types: run `python scripts/schemas.py`"
        )
    assert s.main(["--check"]) == 0


def test_the_check_fails_on_a_stale_schema_and_the_script_repairs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    s = script()
    for name in s.DERIVED:
        shutil.copy(ROOT / "docs" / "schemas" / name, tmp_path / name)
    doc = json.loads((tmp_path / "shrink.json").read_text())
    doc["properties"]["repeats"]["minimum"] = 0  # a hand edit the types do not say
    (tmp_path / "shrink.json").write_text(json.dumps(doc, indent=2) + "\n")
    monkeypatch.setattr(s, "SCHEMAS", tmp_path)
    assert s.main(["--check"]) == 1
    assert "shrink.json" in capsys.readouterr().err
    assert s.main([]) == 0
    assert s.main(["--check"]) == 0
    assert (tmp_path / "shrink.json").read_text() == s.text("shrink.json")
