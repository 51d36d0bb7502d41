#!/usr/bin/env bash
# Fresh machine -> the main job on the built-in emulator. Needs only python3.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
# until the emulator lands, the closest working thing: show what lnrepro can do
exec .venv/bin/lnrepro --help
