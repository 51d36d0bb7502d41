"""Write the command reference's report excerpt from a real report, never by hand.

Runs ``lnrepro run -n 3`` on the emulator (the test's own data) (the kernel as shipped) in a scratch
directory, renders ``lnrepro report last``, and puts its Observed and Frequency sections between
the command reference's ``<!-- report-excerpt:begin -->`` and ``<!-- report-excerpt:end -->`` markers.

    python scripts/report_excerpt.py           # rewrite docs/commands.md
    python scripts/report_excerpt.py --check   # exit 1 when docs/commands.md is not what it would write
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- report-excerpt:begin -->", "<!-- report-excerpt:end -->"
KEEP = ("### Observed", "### 3. Frequency")


def lnrepro(*args: str, cwd: Path) -> str:
    p = subprocess.run(
        [sys.executable, "-m", "lnrepro", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    if p.returncode not in (0, 1):
        sys.exit(f"lnrepro {' '.join(args)} failed: {p.stderr}")
    return p.stdout


def excerpt() -> str:
    with tempfile.TemporaryDirectory(prefix="lnrepro-excerpt-") as tmp:
        cwd = Path(tmp)
        lnrepro("run", "-n", "3", "--json", cwd=cwd)
        md = lnrepro("report", "last", cwd=cwd)
    sections = re.split(r"(?m)^(?=### )", md)
    kept = [s.strip() for s in sections if s.startswith(KEEP)]
    body = "\n\n".join(kept).replace("###", "####")
    return f"{BEGIN}\n<!-- written by scripts/report_excerpt.py: lnrepro run -n 3; lnrepro report last -->\n\n{body}\n\n{END}"


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--check", action="store_true")
    ns = ap.parse_args()
    readme = ROOT / "docs" / "commands.md"
    text = readme.read_text()
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        sys.exit(f"docs/commands.md has no {BEGIN} ... {END} markers")
    new = pattern.sub(lambda _m: excerpt(), text)
    if ns.check:
        if new != text:
            print(
                "docs/commands.md's report excerpt is stale: run python scripts/report_excerpt.py",
                file=sys.stderr,
            )
            return 1
        return 0
    readme.write_text(new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
