"""The tt-metal look-alike: lnrepro's test bed for everything that builds and bisects tt-metal.

``generate(DIR, Spec(...))`` writes a real C++ checkout with a real git history and returns its
ground truth; ``build(...)`` runs its ``build_metal.sh``. ``python -m tests.lookalike DIR``
does the same from a shell, for demos and benchmarks. Never shipped in the lnrepro package.
"""

from tests.lookalike.build import (
    BuildResult,
    build,
    device_env,
    ensure_toolchain_image,
    install_compilers,
    run_tests,
    use_compilers,
)
from tests.lookalike.generator import (
    BUGREPRO_BRANCH,
    HANG_KERNEL,
    HANG_TEST,
    KERNEL,
    PCC_TEST,
    TEST_FILE,
    GroundTruth,
    Spec,
    generate,
    load_truth,
)

__all__ = [
    "BUGREPRO_BRANCH",
    "HANG_KERNEL",
    "HANG_TEST",
    "KERNEL",
    "PCC_TEST",
    "TEST_FILE",
    "BuildResult",
    "GroundTruth",
    "Spec",
    "build",
    "device_env",
    "ensure_toolchain_image",
    "generate",
    "install_compilers",
    "load_truth",
    "run_tests",
    "use_compilers",
]
