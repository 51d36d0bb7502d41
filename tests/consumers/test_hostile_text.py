"""Hostile text from a test binary through every output format, each read by its real consumer:
the terminal (no raw control bytes), Markdown (cmark-gfm, GitHub's parser: renders as the text),
JUnit (the xunit plugin's rules, junitparser), JSON (a strict parser and its schema).

The corpus: ``|``, backticks, ``*``, ``_``, ``<script>``, ``[x](y)``, ``</details>``, ANSI
colour, NUL, BEL, backspace, invalid UTF-8, and a 10,000-character name.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lnrepro.present.escape import visible
from tests.consumers.schemas import errors as schema_errors
from tests.harness import lnrepro
from tests.present.gfm import Rendered

LONG = "S.L" + "x" * 10_000
NAMES = [
    "S.Pipe|Star*Und_er_",
    "S.Tick`s``",
    "S.Scr<script>alert(1)</script>",
    "S.Link[x](y)!",
    LONG,
]
MESSAGES = [
    "Value of: a|b *c* _d_ `e` <img src=x onerror=alert(1)> [x](y) </details> ```",
    "\x1b[31mred\x1b[0m NUL\x00 BEL\x07 BS\x08 DEL\x7f",
    "bytes \xff\xfe not UTF-8",  # written as raw bytes by the program
]


def program(tmp: Path) -> Path:
    lines = ["#!/bin/sh"]
    for name in NAMES:
        lines.append(f"printf '%s\\n' '[ RUN      ] {name}'")
        for m in MESSAGES:
            lines.append("printf 'x.cpp:9: Failure\\n'")
            raw = m.encode("latin-1") if "\xff" in m else m.encode()
            lines.append("printf '" + "".join(f"\\{b:03o}" for b in raw) + "\\n'")
        lines.append(f"printf '%s\\n' '[  FAILED  ] {name} (1 ms)'")
    lines.append("exit 1")
    prog = tmp / "hostile"
    prog.write_text("\n".join(lines) + "\n")
    prog.chmod(0o755)
    return prog


@pytest.fixture(scope="module")
def run_id(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    cwd = tmp_path_factory.mktemp("hostile")
    p = lnrepro(
        "run",
        "--backend",
        "local",
        "--binary",
        str(program(cwd)),
        "--filter",
        "S.*",
        "--json",
        cwd=cwd,
    )
    assert p.returncode == 1, p.stderr
    return cwd, json.loads(p.stdout)["id"]


def decoded(m: str) -> str:
    """What a message is once parsed: colour codes are formatting, not text (googletest's own
    colours are stripped the same way); invalid UTF-8 bytes become U+FFFD."""
    return re.sub(r"\x1b\[[0-9;]*m", "", m).replace("\xff", "\ufffd").replace("\xfe", "\ufffd")


def test_json_is_strict_valid_and_holds_the_text(run_id: tuple[Path, str]) -> None:
    cwd, rid = run_id
    text = lnrepro("show", rid, "--json", cwd=cwd).out
    assert schema_errors(text) == []
    doc = json.loads(text)
    assert [t["name"] for t in doc["tests"]] == NAMES
    msgs = [f["message"] for f in doc["attempts"][0]["tests"][0]["failures"]]
    assert msgs == [decoded(m) for m in MESSAGES]


def test_the_terminal_gets_no_raw_control_bytes(run_id: tuple[Path, str]) -> None:
    cwd, rid = run_id
    out = lnrepro("show", rid, cwd=cwd).out.encode()
    assert not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", out)  # ESC, NUL, BEL, BS, DEL: none raw
    text = out.decode()
    assert ["S", "Scr<script>alert(1)</script>"][1] in text and "Link[x](y)!" in text


def test_markdown_renders_as_the_text_with_nothing_injected(run_id: tuple[Path, str]) -> None:
    cwd, rid = run_id
    md = Rendered(lnrepro("report", rid, cwd=cwd).out)
    assert md.foreign_tags() == []  # no <script>, <img>, no closed <details> from the data
    (table,) = md.tables("Observed")
    assert all(len(row) == 5 for row in table)  # no pipe split a cell
    assert [row[0] for row in table[1:]] == list(NAMES)  # whole names: they go into --filter
    first = table[1][4]  # the first failure's first line, as GitHub shows it
    assert first == visible(MESSAGES[0]).split("\n")[0][:119] + (
        "…" if len(MESSAGES[0]) > 120 else ""
    )
    logs = md.fences("Logs & Diagnostics")
    assert logs and all("\x1b" not in t and "\x00" not in t for _, t in logs)
    assert any(visible(decoded(MESSAGES[1])) in t for _, t in logs)  # control characters shown


def test_junit_follows_the_xunit_rules_and_holds_the_text(
    run_id: tuple[Path, str], tmp_path: Path
) -> None:
    import xmlschema
    from junitparser.xunit2 import JUnitXml

    cwd, rid = run_id
    out = tmp_path / "j.xml"
    assert lnrepro("report", rid, "--format", "junit", "-o", str(out), cwd=cwd).returncode == 0
    xmlschema.XMLSchema(str(Path(__file__).with_name("xunit_rules.xsd"))).validate(str(out))
    cases = {c.name: c for s in JUnitXml.fromfile(str(out)) for c in s}
    assert sorted(cases) == sorted(n.split(".", 1)[1] for n in NAMES)
    text = cases["Pipe|Star*Und_er_"].result[0].text
    assert visible(decoded(MESSAGES[1])) in text and "\x1b" not in text


def test_parse_renders_the_same_log_safely(run_id: tuple[Path, str]) -> None:
    cwd, rid = run_id
    log = next((cwd / ".lnrepro" / "runs" / rid).glob("attempt-1.log"))
    md = lnrepro("parse", str(log), "--markdown", cwd=cwd).out
    r = Rendered(md)
    assert r.foreign_tags() == [] and all(len(row) == 6 for row in r.tables("")[0])
    assert schema_errors(lnrepro("parse", str(log), "--json", cwd=cwd).out) == []
