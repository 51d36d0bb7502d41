"""``lnrepro bisect``: find the commit that introduced (or fixed) the bug.

The search is pure: :mod:`.core` (git bisect's rules over the commit DAG), :mod:`.bayes` (a
Bayesian search under noise), chosen between by :mod:`.strategy`; :mod:`.evidence` alone says
what a run means (signature, hangs, crashes, ``--find-fix``). :mod:`.validate` checks a request
before anything starts; :mod:`.loop` drives the search over a :mod:`.workspace` (an isolated
worktree, tests injected by cherry-pick or patch) with an oracle per step (:mod:`.oracle`,
:mod:`.prebuilt` for ready build trees), and :mod:`.state` writes the state after every step so
``--resume`` continues where it stopped.
"""
