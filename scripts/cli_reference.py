"""Write every command's options into docs/commands.md, from the click commands themselves.

Each command gets a table per help section (option, value, what it does) between the markers
``<!-- options:COMMAND:begin -->`` and ``<!-- options:COMMAND:end -->``; the prose around them is
written by hand. ``--check`` exits 1 when the page is not what this script would write.

    python scripts/cli_reference.py           # rewrite docs/commands.md
    python scripts/cli_reference.py --check   # for the tests
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "commands.md"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def options_block(name: str, cmd: click.Command) -> str:
    ctx = click.Context(cmd, info_name=name)
    sections: dict[str, list[str]] = {}
    for p in cmd.get_params(ctx):
        if not isinstance(p, click.Option) or p.hidden:
            continue
        rec = p.get_help_record(ctx)
        if rec is None:
            continue
        flags, text = rec
        sections.setdefault(getattr(p, "group", "Options"), []).append(
            f"| `{_cell(flags)}` | {_cell(text)} |"
        )
    out = [f"<!-- options:{name}:begin -->"]
    for title, rows in sections.items():
        out += ["", f"**{title}**", "", "| option | what it does |", "| --- | --- |", *rows]
    out += ["", f"<!-- options:{name}:end -->"]
    return "\n".join(out)


def render(text: str) -> str:
    from lnrepro.cli import all_commands

    for name, cmd in sorted(all_commands().items()):
        pattern = re.compile(
            re.escape(f"<!-- options:{name}:begin -->")
            + r".*?"
            + re.escape(f"<!-- options:{name}:end -->"),
            re.S,
        )
        if not pattern.search(text):
            sys.exit(f"{PAGE} has no options block for `lnrepro {name}`")
        text = pattern.sub(lambda _m, n=name, c=cmd: options_block(n, c), text)
    return text


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--check", action="store_true")
    ns = ap.parse_args()
    text = PAGE.read_text()
    new = render(text)
    if ns.check:
        if new != text:
            print(f"{PAGE} is stale: run python scripts/cli_reference.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
