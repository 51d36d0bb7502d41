#!/usr/bin/env bash
# Fresh machine -> the main job on the built-in emulator: the BugRepro and NIGHTLY tests of
# tt-train's LayerNorm backward, on a numpy model of the kernel as shipped; then a bisect of a
# small generated history whose commits change the emulated kernel. Needs only python3 and git.
# Extra arguments go to `lnrepro run` (e.g. ./scripts/demo.sh --defect none -n 10).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
lnrepro="$PWD/.venv/bin/lnrepro"
status=0
"$lnrepro" run "$@" || status=$?
# exit 1 means "tests failed": on the shipped kernel that is the bug, reproduced
if [ "$status" -eq 1 ]; then echo "demo: the bug reproduced (exit 1 = tests failed, as expected for --defect shipped)"; status=0; fi
[ "$status" -eq 0 ] || exit "$status"

# A 24-commit history; commit 17 switches the emulated kernel from the fixed one to the shipped one.
repo="$(mktemp -d)/history"
git init -q -b main "$repo"
for i in $(seq 1 24); do
  if [ "$i" -lt 17 ]; then echo none > "$repo/kernel-defect"; else echo shipped > "$repo/kernel-defect"; fi
  echo "change $i" >> "$repo/CHANGES"
  git -C "$repo" add -A
  msg="[tt-train] change $i"; [ "$i" -eq 17 ] && msg="[tt-train] LayerNorm backward: fuse mean(dy*gamma) into compute_dx"
  git -C "$repo" -c user.name=demo -c user.email=demo@lnrepro.invalid commit -q -m "$msg (#$((30000 + i)))"
done
echo "demo: bisecting $repo (good: the first commit, bad: main) with the emulator as the test"
"$lnrepro" bisect --repo "$repo" --good main~23 --bad main --record-dir "$repo/../runs" \
  --command "sh -c '$lnrepro run --defect \$(cat kernel-defect) --filter *2048Features --seed 1 --bisect-exit-code --record-dir ../runs >/dev/null 2>&1'"
