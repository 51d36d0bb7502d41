"""The docs render with a standard tool (mkdocs --strict: every page in the nav, no broken link),
and the README's first screen keeps its two commands for a fresh machine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mkdocs_builds_the_docs_strictly(tmp_path: Path) -> None:
    p = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    for page in (
        "commands",
        "api",
        "exit-codes",
        "guarantees",
        "lookalike",
        "performance",
        "schemas",
    ):
        assert (tmp_path / "site" / page / "index.html").is_file(), page


def test_the_first_screen_holds_the_two_fresh_machine_commands() -> None:
    first = "\n".join((ROOT / "README.md").read_text().splitlines()[:40])
    assert "./scripts/demo.sh" in first and "./scripts/test.sh" in first
    ci = (ROOT / ".ci" / "run").read_text()
    assert "./scripts/test.sh" in ci  # CI runs the README's test command as written


def test_every_guarantee_names_tests_that_exist() -> None:
    """docs/guarantees.md: each promise names the tests that check it, and each named test is a
    function in the named file."""
    import re

    text = (ROOT / "docs" / "guarantees.md").read_text()
    promises = [p for p in text.split("\n- **")[1:]]
    assert len(promises) >= 6
    for promise in promises:
        named = re.findall(r"`(tests/[\w/]+\.py)::(test_\w+)`", promise)
        assert named, f"a promise names no test: {promise[:60]}"
        for path, name in named:
            source = (ROOT / path).read_text()
            assert re.search(rf"^def {name}\(", source, re.M), f"{path}::{name} does not exist"


def _current_schemas() -> set[str]:
    from lnrepro.api import EXPLAIN_SCHEMA, RUNS_SCHEMA
    from lnrepro.hang import model as hang
    from lnrepro.model import bisect, compare, record
    from lnrepro.studies import tolerance

    return {
        record.SCHEMA,
        bisect.SCHEMA,
        compare.SCHEMA,
        hang.SCHEMA,
        tolerance.SCHEMA,
        RUNS_SCHEMA,
        EXPLAIN_SCHEMA,
    }


def test_the_command_reference_names_the_schemas_lnrepro_writes() -> None:
    """docs/commands.md said lnrepro.run/2 and lnrepro.bisect/2 long after /4 and /5: a schema it
    names is the one written now, or an older one named as such ("still load")."""
    import re

    text = (ROOT / "docs" / "commands.md").read_text()
    current = _current_schemas()
    families = {s.split("/")[0]: s for s in current}
    for m in re.finditer(r"lnrepro\.([a-z-]+)/(\d+)", text):
        name = m.group(0)
        family = name.split("/")[0]
        if family not in families or name in current:
            continue
        around = text[m.start() : m.start() + 400]
        assert "still load" in around, (
            f"docs/commands.md names {name}; lnrepro writes {families[family]}"
        )
    for family in ("lnrepro.run", "lnrepro.bisect"):
        assert families[family] in text


def test_the_junit_section_describes_what_report_writes(tmp_path: Path) -> None:
    """One testcase per test (attempts folded in), every element the section names is one the
    writer emits, and testcases carry no properties."""
    import re
    import xml.etree.ElementTree as ET

    from lnrepro import api
    from lnrepro.model.requests import EmulatorSpec, RunRequest, TestSpec
    from lnrepro.present.junit import run_junit

    rec = api.run(
        RunRequest(
            backend=EmulatorSpec(),
            tests=TestSpec(gtest_filter="*Deterministic_2048Features:*OneTile*", repeat=2),
            record_dir=tmp_path,
        )
    )
    root = ET.fromstring(run_junit(rec))
    cases = root.findall(".//testcase")
    assert len(cases) == len(rec.tests) >= 2  # not one per attempt (2 attempts each)
    assert all(c.find("properties") is None for c in cases)
    assert all(c.find("system-out") is not None for c in cases)
    text = (ROOT / "docs" / "commands.md").read_text()
    section = text[text.index("- **`junit`**") : text.index("- **`json`**")]
    assert "per test per attempt" not in section
    source = (ROOT / "lnrepro" / "present" / "junit.py").read_text()
    emitted = set(re.findall(r'_sub\(\s*\w+,\s*"([A-Za-z-]+)"', source)) | {"testsuites"}
    emitted |= set(re.findall(r'"(flaky\w+|rerun\w+)"', source))
    named = {t for t in re.findall(r"`([a-z][A-Za-z-]+)`", section) if t in _JUNIT_WORDS}
    assert named and named <= emitted, named - emitted


_JUNIT_WORDS = {
    "testsuites",
    "testsuite",
    "testcase",
    "failure",
    "error",
    "skipped",
    "system-out",
    "properties",
    "property",
    "rerunFailure",
    "rerunError",
    "flakyFailure",
    "flakyError",
}


def _svg_texts(path: Path) -> tuple[float, list[tuple[float, float, str, str]]]:
    """The SVG's width and its texts: (x, font size, anchor, text)."""
    import re
    import xml.etree.ElementTree as ET

    root = ET.parse(path).getroot()
    width = float(root.get("viewBox", "0 0 0 0").split()[2])
    out = []
    for el in root.iter("{http://www.w3.org/2000/svg}text"):
        style = el.get("style", "")
        found = re.search(r"font-size: ([\d.]+)px", style)
        if found is None:  # a math tick label (10^-2), placed by its group: not free text
            continue
        size = float(found.group(1))
        anchor = m.group(1) if (m := re.search(r"text-anchor: (\w+)", style)) else "start"
        out.append((float(el.get("x", "0")), size, anchor, "".join(el.itertext())))
    return width, out


def _in_view(width: float, texts: list[tuple[float, float, str, str]]) -> None:
    for x, size, anchor, text in texts:
        w = 0.62 * size * len(text)  # DejaVu Sans is narrower than this on average
        left = x - {"start": 0, "middle": w / 2, "end": w}[anchor]
        assert left >= 0 and left + w <= width + 1, f"{text!r} runs off the figure"


def test_the_nightly_plot_in_the_docs_shows_every_model_with_its_axes() -> None:
    """docs/tolerance-nightly.svg is lnrepro.present.plot's (scripts/tolerance_table.py): a y axis,
    every model named in view, and the draws its title gives are the table's."""
    import re

    from lnrepro.studies.tolerance import MODELS

    width, texts = _svg_texts(ROOT / "docs" / "tolerance-nightly.svg")
    words = [t for *_, t in texts]
    assert "share of draws per bin" in words  # the y axis, with its ticks
    assert {"0.0", "0.2", "0.4"} <= set(words)
    for m in MODELS:
        assert m in words, m
    _in_view(width, texts)
    title = next(t for t in words if t.startswith("NIGHTLY shape"))
    table = (ROOT / "docs" / "commands.md").read_text()
    per_shape = re.search(r"(\d+) draws per random-data shape", table)
    assert per_shape is not None and f"(the table above: {per_shape.group(1)} per shape)" in title


def test_two_models_with_the_same_errors_are_both_seen(tmp_path: Path) -> None:
    """double-subtract and the refuted overwrite give the same errors on the NIGHTLY data: one
    drawn over the other hid it. Each model has its own panel over the correct kernel's."""
    import numpy as np

    from lnrepro.present.plot import tolerance_plot

    rng = np.random.default_rng(0)
    same = list(rng.normal(0.03, 0.002, 100))
    series = {
        "correct": list(rng.normal(0.013, 0.0005, 100)),
        "double-subtract": same,
        "overwrite (refuted)": same,
        "shipped": list(rng.normal(0.05, 0.004, 100)),
    }
    path = tmp_path / "p.svg"
    tolerance_plot(
        series, {"NIGHTLY atol 0.5": 0.5, "tight atol 0.01": 0.01}, "t " * 40, "atol", path
    )
    text = path.read_text()
    assert text.count('<g id="axes_') == 3  # one panel per defect model
    width, texts = _svg_texts(path)
    assert {"double-subtract", "overwrite (refuted)", "shipped", "NIGHTLY atol 0.5"} <= {
        t for *_, t in texts
    }
    _in_view(width, texts)
    assert "dc:date" not in text  # the same data, the same file


def test_the_architecture_map_names_every_package_and_only_real_ones() -> None:
    """docs/architecture.md, a newcomer's map: every ``lnrepro/...`` path it names exists, and
    every package under lnrepro/ has a row of its folder map."""
    import re

    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(lnrepro/[\w/.]*)", text))
    missing = sorted(p for p in named if not (ROOT / p.rstrip("/")).exists())
    assert not missing, f"docs/architecture.md names what does not exist: {missing}"
    folder_map = text.split("## Folder map", 1)[1].split("\n## ", 1)[0]
    rows = set(re.findall(r"^\| `(lnrepro/[\w/]+/)` \|", folder_map, re.M))
    packages = {
        f"{p.parent.relative_to(ROOT).as_posix()}/"
        for p in (ROOT / "lnrepro").rglob("__init__.py")
        if p.parent != ROOT / "lnrepro"
    }
    assert not packages - rows, f"packages without a row: {sorted(packages - rows)}"
    assert not rows - packages, f"rows that are no package: {sorted(rows - packages)}"
