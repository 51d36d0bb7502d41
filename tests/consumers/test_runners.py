"""googletest runners on the emulator, as on a real gtest binary.

* LLVM lit's GoogleTest format (``lit`` from PyPI): discovers with ``--gtest_list_tests``, runs
  shards with only environment variables (``GTEST_TOTAL_SHARDS``, ``GTEST_SHARD_INDEX``,
  ``GTEST_OUTPUT=json:…``) and reads each shard's JSON report; it used to fail on the emulator
  with "shard JSON output does not exist".
* gtest-parallel is on neither PyPI nor Debian, so CI cannot install it: its protocol, as read
  from google/gtest-parallel's ``gtest_parallel.py`` (list with stderr merged, drop
  ``DISABLED_``, one process per test with ``--gtest_filter=NAME``, pass/fail by exit code), is
  driven here against the emulator and, as the reference, against a real gtest binary.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from lnrepro.emulator.catalogue import CASES
from lnrepro.emulator.defects import ERA_DEFECTS, Era
from lnrepro.emulator.kernel import KernelConfig
from tests.conftest import need

WRAPPER = """#!/bin/sh
exec "{python}" -m lnrepro.emulator "$@"
"""


def emulator_program(where: Path, name: str) -> Path:
    prog = where / name
    prog.write_text(WRAPPER.format(python=sys.executable))
    prog.chmod(0o755)
    return prog


def expected_verdicts() -> dict[str, bool]:
    """Each test's pass/fail on the emulator's default kernel, from the model itself."""
    from lnrepro.emulator.catalogue import Data, DataSource, run_iteration

    cfg = KernelConfig(defects=ERA_DEFECTS[Era.DEC_2025])
    data = DataSource(Data.COPY)
    return {
        c.full_name: run_iteration(c, cfg, data).ok
        for c in CASES
        if not c.name.startswith("DISABLED_")
    }


def test_lit_runs_the_emulator_in_shards_and_reads_every_result(tmp_path: Path) -> None:
    lit = shutil.which("lit") or str(Path(sys.executable).parent / "lit")
    need(Path(lit).exists(), "lit is not installed (pip install lit)")
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "lit.cfg.py").write_text(
        "import lit.formats\n"
        "config.name = 'lnrepro-emulator'\n"
        "config.test_format = lit.formats.GoogleTest('.', 'Tests')\n"
        "config.test_source_root = config.test_exec_root = os.path.dirname(__file__)\n"
        "config.environment['PATH'] = os.environ['PATH']\n"
    )
    emulator_program(suite, "EmulatorTests")
    xunit = tmp_path / "lit.xml"
    p = subprocess.run(
        [lit, "-v", "--xunit-xml-output", str(xunit), str(suite)],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "LIT_OPTS": ""},
    )
    assert "shard JSON output does not exist" not in p.stdout + p.stderr, p.stdout[-3000:]
    cases = ET.parse(xunit).getroot().iter("testcase")  # classname ends with the gtest suite
    got = {
        f"{c.get('classname', '').rsplit('/', 1)[-1]}.{c.get('name')}": c.find("failure") is None
        for c in cases
    }
    want = expected_verdicts()
    assert {n: got[n] for n in want} == want  # every test, with the model's verdict
    assert p.returncode == (0 if all(want.values()) else 1)


def gtest_parallel_list(argv: list[str]) -> list[str]:
    """gtest-parallel's listing: stderr merged, suite lines end with '.', '#' comments dropped,
    names with DISABLED_ skipped."""
    out = subprocess.run(
        [*argv, "--gtest_list_tests"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    tests, suite = [], ""
    for line in out.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            suite = line.split("#")[0].strip()
            continue
        name = suite + line.split("#")[0].strip()
        if "DISABLED_" not in name:
            tests.append(name)
    return tests


def gtest_parallel_run(argv: list[str], test: str) -> int:
    return subprocess.run(
        [*argv, "--gtest_color=yes", f"--gtest_filter={test}"], capture_output=True, timeout=300
    ).returncode


def test_gtest_parallel_protocol_on_the_emulator_and_a_real_binary(
    tmp_path: Path, gtest_binary: Path
) -> None:
    prog = emulator_program(tmp_path, "ttml_tests")
    listed = gtest_parallel_list([str(prog)])
    want = expected_verdicts()
    assert sorted(listed) == sorted(want)
    fast = [t for t in listed if t.endswith(("OneTile", "2048Features"))]
    assert {t: gtest_parallel_run([str(prog)], t) == 0 for t in fast} == {t: want[t] for t in fast}
    real = gtest_parallel_list([str(gtest_binary)])  # the reference: the same rules hold there
    assert "Basic.Passes" in real and not any("DISABLED_" in t for t in real)
    assert gtest_parallel_run([str(gtest_binary)], "Basic.Passes") == 0
    assert gtest_parallel_run([str(gtest_binary)], "Basic.FailsTwice") == 1


@pytest.mark.parametrize("total", [2, 3])
def test_lnrepro_parses_every_shard_of_the_emulator(tmp_path: Path, total: int) -> None:
    """Sharded runs through lnrepro itself: each shard's record holds its share, together all."""
    from lnrepro import api
    from lnrepro.model.requests import BinarySpec, RunRequest, TestSpec

    prog = emulator_program(tmp_path, "ttml_tests")
    names: list[str] = []
    old = dict(os.environ)
    try:
        for i in range(total):
            os.environ.update(GTEST_TOTAL_SHARDS=str(total), GTEST_SHARD_INDEX=str(i))
            rec = api.run(
                RunRequest(
                    backend=BinarySpec(binary=prog),
                    tests=TestSpec(gtest_filter="*OneTile*:*TwoIncomplete*:*2048*"),
                    record_dir=tmp_path / "r",
                )
            )
            names += [t.name for t in rec.tests]
    finally:
        os.environ.clear()
        os.environ.update(old)
    assert sorted(names) == sorted(
        n
        for n in expected_verdicts()
        if n.endswith(("OneTile", "OneTilePerRow", "TwoIncompleteTiles", "2048Features"))
    )
