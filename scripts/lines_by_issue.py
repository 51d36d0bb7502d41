"""How many lines of lnrepro/ each issue's commits added and removed since a base commit.

Issue 45 asks that the redesign's own commits remove at least 800 more lines from lnrepro/ than
they add, new features from other issues aside. This counts it from git alone:

* every commit since ``--base`` that is not a merge (``git log --no-merges BASE..HEAD``), with
  its added and deleted lines under lnrepro/ (``--numstat``; a merge's own conflict
  resolutions are not counted, and are said apart as the difference to the tree's real size);
* a commit's issue is the one its message names (``(issue 45)``, ``(issues 45, 48)``); a commit
  that names none belongs to the first merge after it that does (``git log --merges
  --ancestry-path``), as a helper's branch is merged under its issue's name;
* a commit that names two issues, or is merged under two, is given to one by what it does
  (:data:`SPLIT`, read from each commit's message; a refactor counts as the redesign's).

    python scripts/lines_by_issue.py              # since issue 45's base, 0b17f46
    python scripts/lines_by_issue.py --base REV --list 45
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections import defaultdict

BASE = "0b17f46"  # main when issue 45 was filed (lnrepro/ 32,452 lines of Python)
# h-hang was merged as "(issues 45, 48)": one hang package (45) and a terminal's pastes (48)
SPLIT = {
    "f9e9828": "45",  # ruff over the moved package
    "b66b2f3": "45",  # the move into one package
    "cfddac0": "45",  # one door, no late imports
    "73f236a": "45",  # a cut cell read beside the others, to keep output.py under 700 lines
    "b3e4974": "45",  # one rule for the dispatch timeout, where parse and diagnose had two
    "1cd544b": "48",  # the core left on an older program named first (a paste's new reading)
    "ce07428": "48",  # a folded watcher log joined again
    "6d09eb4": "48",  # the fast-dispatch kernel as the only row
    "d965cb8": "48",  # tt-triage as a terminal pastes it
}
_ISSUES = re.compile(r"\(issues? ([\d, and]+)\)")


def git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def issues_of(message: str) -> str:
    found = sorted({int(n) for m in _ISSUES.findall(message) for n in re.findall(r"\d+", m)})
    return ", ".join(map(str, found))


def merged_under(sha: str) -> str:
    """The issue of the first merge after ``sha`` (towards HEAD) that names one."""
    for line in git(
        "log", "--merges", "--ancestry-path", "--reverse", "--format=%s", f"{sha}..HEAD"
    ).splitlines():
        if tag := issues_of(line):
            return tag
    return ""


def python_lines(rev: str) -> int:
    files = [
        f for f in git("ls-tree", "-r", "--name-only", rev, "lnrepro").split() if f.endswith(".py")
    ]
    return sum(git("show", f"{rev}:{f}").count("\n") for f in files)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default=BASE)
    ap.add_argument("--list", metavar="ISSUES", help="also list that row's commits (e.g. 45)")
    args = ap.parse_args()
    log = git(
        "log",
        "--no-merges",
        "--format=@%h%x00%s",
        "--numstat",
        f"{args.base}..HEAD",
        "--",
        "lnrepro/",
    )
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    commits: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    for chunk in log.split("@")[1:]:
        head, *stats = chunk.splitlines()
        sha, subject = head.split("\x00", 1)
        added = deleted = 0
        for s in stats:
            a, d, _ = [*s.split("\t", 2), "", ""][:3]
            if a.isdigit() and d.isdigit() and s.endswith(".py"):
                added, deleted = added + int(a), deleted + int(d)
        tag = SPLIT.get(sha) or issues_of(subject) or merged_under(sha) or "none"
        rows[tag][0] += added
        rows[tag][1] += deleted
        rows[tag][2] += 1
        commits[tag].append((added - deleted, sha, subject))
    print(f"lnrepro/ Python lines by issue, non-merge commits {args.base}..HEAD")
    print(f"{'issue(s)':>10} {'commits':>8} {'added':>7} {'deleted':>8} {'net':>7}")
    for tag, (a, d, n) in sorted(rows.items()):
        print(f"{tag:>10} {n:>8} {a:>7} {d:>8} {a - d:>+7}")
    counted = sum(a - d for a, d, _ in rows.values())
    real = python_lines("HEAD") - python_lines(args.base)
    print(
        f"{'all':>10} {'':>8} {'':>7} {'':>8} {counted:>+7}  (the tree grew {real:+}; merges' own edits {real - counted:+})"
    )
    if args.list:
        for net, sha, subject in sorted(commits.get(args.list, [])):
            print(f"{net:>+6} {sha} {subject[:100]}")


if __name__ == "__main__":
    main()
