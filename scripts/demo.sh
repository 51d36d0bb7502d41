#!/usr/bin/env bash
# Fresh machine -> the main job on the built-in emulator: the BugRepro and NIGHTLY tests of
# tt-train's LayerNorm backward, on a numpy model of the kernel as shipped. Needs only python3.
# Extra arguments go to `lnrepro run` (e.g. ./scripts/demo.sh --defect none -n 10).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
status=0
.venv/bin/lnrepro run "$@" || status=$?
# exit 1 means "tests failed": on the shipped kernel that is the bug, reproduced
if [ "$status" -eq 1 ]; then echo "demo: the bug reproduced (exit 1 = tests failed, as expected for --defect shipped)"; exit 0; fi
exit "$status"
