"""The store lists saved records with their kind and state as enums, older bisects included."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from lnrepro.doors import store
from lnrepro.errors import MalformedRecord
from lnrepro.model import codec
from lnrepro.model.bisect import BisectRecord
from lnrepro.model.listing import ListedState, RecordKind

DOCS = Path(__file__).parents[1] / "model" / "bisect_docs"


def test_entries_carry_their_kind_and_state_as_enums(tmp_path: Path) -> None:
    for name, doc in (("bisect-1", "v3-done.json"), ("bisect-2", "v4-interrupted.json")):
        (tmp_path / name).mkdir()
        shutil.copy(DOCS / doc, tmp_path / name / "bisect.json")
    (tmp_path / "bisect-3").mkdir()
    (tmp_path / "bisect-3" / "bisect.json").write_text('{"schema": "lnrepro.bisect/6", "steps": 3}')
    by_id = {e.id: e for e in store.scan(tmp_path)}
    done, stopped, broken = by_id["bisect-1"], by_id["bisect-2"], by_id["bisect-3"]
    assert done.kind is RecordKind.BISECT and done.state is ListedState.COMPLETE
    assert isinstance(done.record, BisectRecord) and done.headline.startswith("first bad commit")
    assert stopped.state is ListedState.INTERRUPTED
    assert broken.state is ListedState.UNREADABLE and broken.problem
    listed = codec.encode(broken.document())
    assert listed["state"] == "unreadable" and listed["kind"] == "bisect"
    # `last` is the newest record even when it cannot be read: its reader says what is wrong
    # (an older record shown in its place would be one the user did not mean)
    newest = max(store.scan(tmp_path), key=lambda e: (e.mtime, e.id))
    assert newest is not None and store.resolve(tmp_path, "last") == newest.path
    os.utime(broken.path, (9e9, 9e9))
    assert store.resolve(tmp_path, "last") == broken.path
    with pytest.raises(MalformedRecord, match=r"bisect-3/bisect\.json"):
        store.load(tmp_path, "last")
