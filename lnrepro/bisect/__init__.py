"""``lnrepro bisect``: find the commit that introduced (or fixed) the bug.

:mod:`.core` is the search (pure); :mod:`.session` drives it over a real repository — an isolated
worktree, tests injected by cherry-pick or patch, an oracle per step, state written after every
step so ``--resume`` continues where it stopped.
"""
