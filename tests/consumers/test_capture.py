"""The session's check of every captured JSON document (tests/consumers/capture.py): documents
that come while it runs and after, each read once, every bad one named."""

from __future__ import annotations

import time
from pathlib import Path

from tests.consumers.capture import CaptureCheck
from tests.harness import lnrepro

LOG = """[==========] Running 1 test from 1 test suite.
[ RUN      ] S.T
[       OK ] S.T (1 ms)
[==========] 1 test from 1 test suite ran. (1 ms total)
[  PASSED  ] 1 test.
"""


def test_documents_are_checked_as_they_come_and_the_rest_at_the_end(tmp_path: Path) -> None:
    log = tmp_path / "gtest.log"
    log.write_text(LOG)
    good = lnrepro("parse", log, "--json")
    assert good.code == 0, good.err
    folder = tmp_path / "capture"
    folder.mkdir()
    (folder / "1.json").write_text(good.out)
    (folder / "2.json").write_text('{"schema": "lnrepro.nothing/1"}')
    check = CaptureCheck(folder, every_s=0.05).start()
    deadline = time.monotonic() + 10
    while len(check.seen) < 2 and time.monotonic() < deadline:  # the thread got to them
        time.sleep(0.05)
    assert len(check.seen) == 2
    (folder / "3.json").write_text('{"schema": "lnrepro.run/5", "x": NaN}')  # after: at finish
    (folder / "4.json.part").write_text("{")  # half written: not a document yet
    files, bad = check.finish()
    assert [f.name for f in files] == ["1.json", "2.json", "3.json"]
    assert [(f.name, e.split(":")[0]) for f, e in bad] == [
        ("2.json", "no known schema key (got 'lnrepro.nothing/1')"),
        ("3.json", "not strict JSON"),
    ]
