#!/usr/bin/env python3
"""Pictures of what a person sees: `lnrepro run`, `compare` and `bisect` at 80 columns, from
their real output in a real terminal (a pty read by pyte, as tests/terminal does), drawn as SVG
by rich (``Console.save_svg``) into docs/img/.

    python scripts/screens.py            # docs/img/{run,compare,bisect}-80.svg
    python scripts/screens.py --width 60 --out /tmp/shots

Uses the emulator (no card, no Docker); about twenty seconds.
"""

from __future__ import annotations

import argparse
import io
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.style import Style  # noqa: E402
from rich.text import Text  # noqa: E402

from tests.terminal.screen import lnrepro, terminal  # noqa: E402

FILTER = "*Deterministic_256Tiles:*8462Features:*TightTolerance_8192*:*NoL1Fit"


def colour(name: str) -> str | None:
    """pyte's colour name (``red``, ``brightred``, ``ff0000``) as rich's."""
    if name == "default":
        return None
    if len(name) == 6 and all(c in "0123456789abcdef" for c in name):
        return f"#{name}"
    return "bright_" + name[6:] if name.startswith("bright") else name


def style(key: tuple[str, bool, bool] | None) -> Style:
    fg, bold, reverse = key or ("default", False, False)
    return Style(color=colour(fg), bold=bold, reverse=reverse)


def prompt(argv: list[str], width: int) -> list[Text]:
    """The command as typed: shell words, broken before a word with `` \\`` (still one command
    to a shell) where the line would pass the right edge."""
    lines, cur = [], "$"
    for word in (shlex.quote(w) for w in argv):
        if len(cur) + 1 + len(word) + 2 > width and cur.strip() not in ("$", ">"):
            lines.append(cur + " \\")
            cur = " "
        cur += " " + word
    lines.append(cur)
    return [Text(ln, style="bold") for ln in lines]


def picture(argv: list[str], width: int, cwd: Path, title: str, out: Path) -> None:
    env = {"PATH": f"{Path(lnrepro()).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    code, screen = terminal(argv, width, cwd=cwd, timeout=600, env=env)
    rows = [screen.buffer[y] for y in range(screen.lines)]
    used = max((y for y, row in enumerate(screen.display) if row.strip()), default=0) + 1
    console = Console(
        record=True, width=width, force_terminal=True, color_system="truecolor", file=io.StringIO()
    )
    for line in prompt(argv, width):
        console.print(line, soft_wrap=True)
    for y in range(used):
        line, run, key = Text(), "", None
        for x in range(width):  # runs of one style: one span each
            ch = rows[y][x]
            k = (ch.fg, ch.bold, ch.reverse)
            if k != key and run:
                line.append(run, style=style(key))
                run = ""
            key, run = k, run + (ch.data or " ")
        line.append(run, style=style(key))
        line.rstrip()
        console.print(line, soft_wrap=True)
    console.save_svg(str(out), title=title)
    print(f"{out}: {used} rows, exit {code}")


TEST = """# the bisect's test: the emulator, with the kernel this commit names
lnrepro run --defect "$(cat kernel-defect)" --filter '*2048Features' --seed 1 \\
  --bisect-exit-code --record-dir ../runs >/dev/null 2>&1
"""


def history(where: Path) -> Path:
    """Twelve commits; the ninth switches the emulated kernel from the fixed one to the shipped."""
    repo = where / "tt-metal-history"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "test-kernel.sh").write_text(TEST)
    for i in range(1, 13):
        (repo / "kernel-defect").write_text("shipped\n" if i >= 9 else "none\n")
        with (repo / "CHANGES").open("a") as f:
            f.write(f"change {i}\n")
        subject = (
            "[tt-train] LayerNorm backward: fuse mean(dy*gamma) into compute_dx"
            if i == 9
            else f"[tt-train] change {i}"
        )
        subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
        subprocess.run(
            [
                "git",
                "-C",
                str(repo),
                "-c",
                "user.name=lnrepro demo",
                "-c",
                "user.email=demo@lnrepro.invalid",
                "commit",
                "-q",
                "-m",
                f"{subject} (#{30000 + i})",
            ],
            check=True,
        )
    return repo


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--width", type=int, default=80)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    w = args.width
    cwd = Path(tempfile.gettempdir()) / "lnrepro-screens"  # a short path for the pictures
    shutil.rmtree(cwd, ignore_errors=True)
    cwd.mkdir()
    try:
        runs = "runs"
        picture(
            ["lnrepro", "run", "--filter", FILTER, "--seed", "1", "--record-dir", runs],
            w,
            cwd,
            "lnrepro run",
            args.out / f"run-{w}.svg",
        )
        subprocess.run(
            [
                lnrepro(),
                "run",
                "--defect",
                "none",
                "--filter",
                FILTER,
                "--seed",
                "1",
                "--record-dir",
                runs,
            ],
            cwd=cwd,
            capture_output=True,
            check=False,
        )
        ids = sorted(p.name for p in (cwd / runs).iterdir() if p.name.startswith("run-"))
        picture(
            ["lnrepro", "compare", ids[0], ids[-1], "--record-dir", runs],
            w,
            cwd,
            "lnrepro compare",
            args.out / f"compare-{w}.svg",
        )
        repo = history(cwd)
        picture(
            [
                "lnrepro",
                "bisect",
                "--repo",
                repo.name,
                "--good",
                "main~11",
                "--bad",
                "main",
                "--command",
                "sh test-kernel.sh",
            ],
            w,
            cwd,
            "lnrepro bisect",
            args.out / f"bisect-{w}.svg",
        )
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
