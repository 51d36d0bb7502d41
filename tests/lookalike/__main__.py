"""python -m tests.lookalike DIR [--seed N] [--commits N] [--tus N] [--bulk-files N] ... [--build]

Writes a tt-metal look-alike checkout at DIR and prints its ground truth as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields
from pathlib import Path

from tests.lookalike.build import build
from tests.lookalike.generator import Spec, generate


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.lookalike", description=__doc__)
    ap.add_argument("dir", type=Path)
    for f in fields(Spec):
        if f.name in ("culprit_defects", "unbuildable"):
            continue
        opt = "--" + f.name.replace("_", "-")
        if f.type in ("bool",):
            ap.add_argument(
                opt, type=lambda s: s.lower() in ("1", "true", "yes"), default=f.default
            )
        elif f.type in ("int",):
            ap.add_argument(opt, type=int, default=f.default)
        elif f.type in ("float", "float | None"):
            ap.add_argument(opt, type=float, default=f.default)
        else:
            ap.add_argument(opt, default=f.default)
    ap.add_argument("--culprit-defects", default="double-subtract,drop-xhat-blocks")
    ap.add_argument("--no-unbuildable", action="store_true")
    ap.add_argument("--build", action="store_true", help="also run ./build_metal.sh at main")
    ns = ap.parse_args(argv)
    kw = {
        f.name: getattr(ns, f.name)
        for f in fields(Spec)
        if f.name not in ("culprit_defects", "unbuildable")
    }
    spec = Spec(
        **kw,
        culprit_defects=tuple(d for d in ns.culprit_defects.split(",") if d),
        unbuildable=None if ns.no_unbuildable else Spec.unbuildable,
    )
    truth = generate(ns.dir.resolve(), spec)
    summary = {k: v for k, v in truth.to_json().items() if k not in ("defects", "first_parent")}
    summary["first_parent_commits"] = len(truth.first_parent)
    print(json.dumps(summary, indent=2))
    if ns.build:
        res = build(ns.dir.resolve())
        print(res.output[-2000:], file=sys.stderr)
        return res.returncode
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
