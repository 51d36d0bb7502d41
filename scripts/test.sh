#!/usr/bin/env bash
# The whole test suite, from a fresh machine: system packages, Docker engine, virtualenv,
# then ruff, mypy and pytest. README.md and .ci/run both call exactly this.
# Extra arguments go to pytest (e.g. scripts/test.sh -k parse).
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v g++ >/dev/null || need+=(g++)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
command -v dockerd >/dev/null || need+=(docker.io)
[ -x /bin/busybox ] || command -v busybox >/dev/null || need+=(busybox-static)
command -v timeout >/dev/null || need+=(coreutils)
command -v git >/dev/null || need+=(git)
command -v cmake >/dev/null || need+=(cmake)      # the tt-metal look-alike builds with CMake,
command -v ninja >/dev/null || need+=(ninja-build) # Ninja
command -v ccache >/dev/null || need+=(ccache)     # and, when asked, ccache
command -v debootstrap >/dev/null || need+=(debootstrap)  # the container tests' toolchain image
command -v ssh-keyscan >/dev/null || need+=(openssh-client)  # ssh:// contexts to a card host
command -v node >/dev/null || need+=(nodejs)       # GitHub's issue-form parser and JSON.parse,
command -v npm >/dev/null || need+=(npm)           # from the npm registry
command -v tmux >/dev/null || need+=(tmux)         # a real terminal for the Ctrl-C screen test
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "test.sh: installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "test.sh: missing system packages: ${need[*]} (run as root, or install them); those tests will skip" >&2
  fi
fi

# A Docker engine for the container tests: start one if we may and none answers.
if command -v dockerd >/dev/null && ! docker info >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "test.sh: starting dockerd"
  nohup dockerd >/tmp/lnrepro-dockerd.log 2>&1 &
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
  docker info >/dev/null 2>&1 || { echo "test.sh: dockerd did not start; see /tmp/lnrepro-dockerd.log" >&2; tail -20 /tmp/lnrepro-dockerd.log >&2; }
fi

# The container tests' images (about 70 and 20 core-s of debootstrap and apt, on a fresh machine): made in
# the background while the virtualenv is installed and ruff and mypy run (tests/prebuild.py), for
# a run of the whole suite; whatever is still running when this script ends is ended with it.
builders=""
trap 'for g in $builders; do kill -TERM -- "-$g" 2>/dev/null || true; done; [ -z "${warm:-}" ] || kill "$warm" 2>/dev/null || true' EXIT
if { [ $# = 0 ] || [ "$*" = "-q" ]; } && [ "$(id -u)" = 0 ] && command -v debootstrap >/dev/null \
    && docker info >/dev/null 2>&1; then
  builders=$(python3 -m tests.prebuild) || echo "test.sh: could not start the image builders; the tests will build them" >&2
fi

[ -x .venv/bin/python ] || python3 -m venv .venv

# A user who is not root, in the docker group: lnrepro's containers run as the invoking user,
# and tt-metal's dev image's entrypoint needs root for sshd, which root cannot show. The tests run
# lnrepro as this user (LNREPRO_TEST_USER); it must be able to run the venv's interpreter.
if [ "$(id -u)" = 0 ]; then
  id lnrepro-test >/dev/null 2>&1 || useradd --create-home --shell /bin/sh lnrepro-test
  getent group docker >/dev/null && usermod -aG docker lnrepro-test
  real=$(readlink -f .venv/bin/python)
  d=$(dirname "$real")
  while [ "$d" != / ]; do chmod o+x "$d" 2>/dev/null || true; d=$(dirname "$d"); done
  chmod -R o+rX "$(dirname "$(dirname "$real")")" "$PWD" 2>/dev/null || true
  export LNREPRO_TEST_USER=lnrepro-test
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'

# Python's bytecode, compiled once and kept: where PYTHONDONTWRITEBYTECODE=1 is set (as on some
# sandboxes and CI images), each of the ~450 Python processes of a run (lnrepro, the emulator,
# the xdist workers and their assertion-rewritten test modules) compiled every module of its own
# anew (scripts/bench_startup.py measures it). Only Python's own cache files, in __pycache__/.
unset PYTHONDONTWRITEBYTECODE
.venv/bin/python -m compileall -q -x 'tests/lookalike/tree' lnrepro tests scripts >/dev/null
# and pytest's cache of the test modules it rewrites, written while ruff and mypy run (each
# xdist worker then collects in 1.2 s of CPU, not 2.9)
.venv/bin/python -m pytest --collect-only -q -n0 -p no:cacheprovider >/dev/null 2>&1 &
warm=$!

# GitHub's parser of issue forms, once per machine (tests/consumers/test_issue_form.py)
if command -v npm >/dev/null && [ ! -d .cache/npm/node_modules/@github/issue-parser ]; then
  npm install --silent --no-audit --no-fund --prefix .cache/npm @github/issue-parser@2.0.0 >/dev/null 2>&1 \
    || echo "test.sh: npm could not install @github/issue-parser; its tests will say so" >&2
fi

# torch 2.13's CPU build (from this machine's package sources), in a venv of its own so the main
# one stays light: tests/numerics/test_real_torch.py runs seed 004 in it. Made while ruff and mypy run.
torchv=""
if [ ! -x .cache/torch-venv/bin/python ] || ! .cache/torch-venv/bin/python -c 'import torch, pytest' 2>/dev/null; then
  { python3 -m venv .cache/torch-venv && .cache/torch-venv/bin/python -m pip install -q \
      --disable-pip-version-check torch==2.13.0 numpy pytest; } >/tmp/lnrepro-torch-venv.log 2>&1 &
  torchv=$!
fi

echo "test.sh: ruff"
.venv/bin/ruff check lnrepro tests scripts
.venv/bin/ruff format --check -q lnrepro tests scripts
echo "test.sh: mypy --strict"
.venv/bin/mypy
wait "$warm" || true  # a collection error shows again, in the run itself
if [ -n "$torchv" ]; then
  wait "$torchv" || { echo "test.sh: could not install torch 2.13 (see /tmp/lnrepro-torch-venv.log)" >&2; rm -rf .cache/torch-venv; }
fi
echo "test.sh: pytest"
.venv/bin/python -m pytest "$@"
