"""``lnrepro bisect``: find the commit that introduced (or fixed) the bug.

The search is pure: :mod:`.core` (git bisect's rules over the commit DAG), :mod:`.bayes` (a
Bayesian search under noise), chosen between by :mod:`.strategy`; :mod:`.evidence` says what one
run means. :mod:`.validate` checks a request before anything starts; :mod:`.loop` drives the
search over a real repository — an isolated worktree, tests injected by cherry-pick or patch, an
oracle per step (:mod:`.oracle`, :mod:`.prebuilt` for ready build trees) — and :mod:`.state`
writes the state after every step so ``--resume`` continues where it stopped.
"""
