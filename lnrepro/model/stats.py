"""Pass-rate statistics: how sure can we be that a test is flaky, broken or fine?"""

from __future__ import annotations

import math


def wilson(successes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default).

    Unlike the normal approximation it stays inside [0, 1] and is honest at 0/n and n/n:
    5 passes of 5 runs gives (0.566, 1.0), not (1.0, 1.0).
    """
    if trials <= 0:
        return (0.0, 1.0)
    if not 0 <= successes <= trials:
        raise ValueError(f"successes={successes} outside 0..{trials}")
    p = successes / trials
    z2 = z * z
    denom = 1 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denom
    lo = 0.0 if successes == 0 else max(0.0, centre - half)
    hi = 1.0 if successes == trials else min(1.0, centre + half)  # exact, not 0.9999999999999999
    return (lo, hi)
