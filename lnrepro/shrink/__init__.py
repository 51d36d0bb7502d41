"""``lnrepro shrink``: from a masked or flaky failure to the smallest, loudest deterministic case.

:mod:`.core` is the search (pure, its evaluator injected); :mod:`.space` the case space;
:mod:`.emulator` the in-process evaluator; :mod:`.validate` the request checked before anything
runs; :mod:`.emit` the test source a maintainer picks.
"""
