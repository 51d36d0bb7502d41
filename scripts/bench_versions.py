"""What one step of ``bisect --package`` costs, against doing it by hand.

    python scripts/bench_versions.py [--python PATH] [--package NAME --version V --index DIR]

Without arguments it measures the look-alike index the tests write (tests/pyproject_lookalike/
index.py, ``tinyscale`` 1.4, which needs a new dependency). Three timings, each of the install
plus one pytest run of the test:

* bare: what a person types — ``python -m venv --system-site-packages`` and ``pip install
  NAME==V``, then ``pytest NODEID``;
* step: lnrepro's step (:func:`lnrepro.bisect.releases.step_env`, then ``lnrepro run``'s
  pipeline), on an empty cache;
* repeated: the same step again (the venv is cached: the install is nearly free).

Then the step's environment alone (:func:`~lnrepro.bisect.releases.step_env`: the venv layered
over the user's Python and the install, on an empty cache), with pip and with uv, for a version
that needs nothing new (1.2) and one that needs a new dependency (1.4, where uv installs the
package and pip its dependency); the median of ``--repeat`` runs each.

The issue's bar: step <= 1.5 x bare, repeated close to the pytest run alone.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from lnrepro.bisect.releases import releases, step_env
    from lnrepro.model.requests import PythonSpec, RunRequest, TestSpec
    from lnrepro.run.backends.factory import make_backend
    from lnrepro.run.pipeline import run_tests
    from tests.pyproject_lookalike.index import TEST_NODE, make_index, make_version_project

    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--package", default="tinyscale")
    ap.add_argument("--version", default="1.4")
    ap.add_argument("--index")
    ap.add_argument("--project")
    ap.add_argument("--node", default=TEST_NODE)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--installs", default="1.2,1.4", help="versions whose install is timed")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        if a.index is None:
            wheels, _ = make_index(t / "index")
            a.index, a.project = str(wheels), str(make_version_project(t / "project"))
        index = ["--no-index", "--find-links", a.index]
        project = Path(a.project)

        start = time.monotonic()
        bare = t / "bare"
        subprocess.run([a.python, "-m", "venv", "--system-site-packages", str(bare)], check=True)
        subprocess.run(
            [str(bare / "bin" / "python"), "-m", "pip", "install", "-q", *index,
             f"{a.package}=={a.version}"],
            check=True,
        )  # fmt: skip
        subprocess.run(
            [str(bare / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", a.node],
            cwd=project,
            capture_output=True,
        )
        bare_s = time.monotonic() - start

        release = next(r for r in releases(a.index, a.package) if r.version == a.version)
        cache = t / "cache"
        times = []
        for _ in range(2):
            start = time.monotonic()
            py = step_env(cache, a.python, a.package, release, index)
            spec = PythonSpec(project=project, python=py)
            req = RunRequest(backend=spec, tests=TestSpec(pytest=(a.node,)), record_dir=t / "runs")
            run_tests(make_backend(spec), req)
            times.append(time.monotonic() - start)
        shutil.rmtree(cache, ignore_errors=True)

        found = {r.version: r for r in releases(a.index, a.package)}
        installs: dict[tuple[str, str], float] = {}
        for version in a.installs.split(","):
            for installer in ("pip", "uv"):
                runs = []
                for i in range(a.repeat):
                    c = t / f"c-{installer}-{version}-{i}"
                    start = time.monotonic()
                    step_env(c, a.python, a.package, found[version], index, installer=installer)
                    runs.append(time.monotonic() - start)
                    shutil.rmtree(c, ignore_errors=True)
                installs[version, installer] = statistics.median(runs)
    step_s, again_s = times
    print(f"bare install + pytest: {bare_s:6.1f} s")
    print(f"lnrepro step:          {step_s:6.1f} s  ({step_s / bare_s:.2f} x bare)")
    print(f"repeated step:         {again_s:6.1f} s  ({again_s / bare_s:.2f} x bare)")
    print(f"step's environment (venv + install, empty cache), median of {a.repeat}:")
    for version in a.installs.split(","):
        pip_s, uv_s = installs[version, "pip"], installs[version, "uv"]
        print(
            f"  {a.package}=={version}:  pip {pip_s:5.2f} s   uv {uv_s:5.2f} s"
            f"  ({pip_s / uv_s:.1f} x faster)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
