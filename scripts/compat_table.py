"""Write the compatibility table into docs/compatibility.md, from lnrepro.run.compat.

The table sits between ``<!-- eras:begin -->`` and ``<!-- eras:end -->``; the prose around it is
written by hand. ``--check`` exits 1 when the page is not what this script would write.

    python scripts/compat_table.py           # rewrite docs/compatibility.md
    python scripts/compat_table.py --check   # for the tests
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "compatibility.md"


def table() -> str:
    from lnrepro.present.escape import markdown, markdown_code
    from lnrepro.run.compat import ERAS, TESTS

    def codes(items: tuple[str, ...]) -> str:
        return "<br>".join(markdown_code(i) for i in items)

    rows = [
        "| era | period | build (in-tree, fresh worktree) | build (standalone) | toolchain "
        "| clang-17 files | tt-train picks | binary | runtime root | sources |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for e in ERAS:
        rows.append(
            f"| {e.name} | {markdown(e.period)} | {codes(e.in_tree)} | {codes(e.standalone)} "
            f"| {markdown_code(e.toolchain)} | {'yes' if e.clang17_files else 'no'} "
            f"| {markdown(e.train_compiler.value)} | {markdown_code(e.binary)}<br>"
            f"{markdown_code(e.standalone_binary)} | {markdown_code(e.runtime_root_var)} "
            f"| {'<br>'.join(markdown(s) for s in e.sources)} |"
        )
    return "\n".join(
        [
            "<!-- eras:begin -->",
            "",
            *rows,
            "",
            f"Tests in every era: {markdown(TESTS)}.",
            "",
            "<!-- eras:end -->",
        ]
    )


def render(text: str) -> str:
    return re.sub(r"<!-- eras:begin -->.*?<!-- eras:end -->", lambda _: table(), text, flags=re.S)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the page is out of date")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    old = PAGE.read_text(encoding="utf-8")
    new = render(old)
    if args.check:
        if new != old:
            print(f"{PAGE} is out of date: run python scripts/compat_table.py")
            return 1
        return 0
    PAGE.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
