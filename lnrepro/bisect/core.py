"""The search itself: pure, over a commit DAG, driven by verdicts it is told. No git, no I/O.

The candidates for "first bad commit" are the ancestors of the current bad commit (itself
included) that are not ancestors of any good commit — git bisect's definition, so merges and
side branches are handled the way git handles them. The next commit to test is the candidate
that splits the candidates most evenly: ``min(n_reachable, n - n_reachable)`` is largest, where
``n_reachable`` counts candidates that are its ancestors (git's ``find_bisection``). Skipped
commits are never picked again; when only skipped commits separate the good from the bad, the
answer is the remaining candidate set, not a guess.

``--first-parent`` walks only first parents, as git does; ``--find-fix`` is the same search with
the meaning of good and bad swapped by the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from lnrepro.model.bisect import Mark as Mark


@dataclass(frozen=True)
class Graph:
    """Commits oldest-first (every parent before its children) with their parents in range."""

    order: tuple[str, ...]
    parents: Mapping[str, tuple[str, ...]]

    def __post_init__(self) -> None:
        index = {c: i for i, c in enumerate(self.order)}
        object.__setattr__(self, "_index", index)
        anc: list[int] = []
        for i, c in enumerate(self.order):
            bits = 1 << i
            for p in self.parents.get(c, ()):
                j = index.get(p)
                if j is not None:
                    if j >= i:
                        raise ValueError(f"{p} is listed after its child {c}")
                    bits |= anc[j]
            anc.append(bits)
        object.__setattr__(self, "_anc", anc)

    def position(self, sha: str) -> int:
        """Where ``sha`` is in ``order`` (oldest first)."""
        return self._index[sha]  # type: ignore[attr-defined,no-any-return]

    def bit(self, sha: str) -> int:
        return 1 << self._index[sha]  # type: ignore[attr-defined,no-any-return]

    def ancestors(self, sha: str) -> int:
        """Bitset of ``sha`` and everything it reaches within the graph."""
        return self._anc[self._index[sha]]  # type: ignore[attr-defined,no-any-return]

    def members(self, bits: int) -> list[str]:
        return [c for i, c in enumerate(self.order) if bits >> i & 1]

    def __contains__(self, sha: object) -> bool:
        return sha in self._index  # type: ignore[attr-defined]


@dataclass
class Search:
    """State of one bisection: marks so far, and what they imply."""

    graph: Graph
    bad: str
    goods: list[str]
    marks: dict[str, Mark] = field(default_factory=dict)
    # commits with a prebuilt artifact (no build to test them): while any untested candidate has
    # one, the search picks among those only, so builds happen only inside the last interval
    # between two artifacts (mozregression's nightlies-first, then inbound builds)
    prefer: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        for sha in (self.bad, *self.goods):
            if sha not in self.graph:
                raise ValueError(f"{sha} is not in the graph")
        self.marks.setdefault(self.bad, Mark.BAD)
        for g in self.goods:
            self.marks.setdefault(g, Mark.GOOD)

    # ------------------------------------------------------------------ what is known
    def _good_bits(self) -> int:
        bits = 0
        for sha, m in self.marks.items():
            if m is Mark.GOOD:
                bits |= self.graph.ancestors(sha)
        return bits

    def _best_bad(self) -> str:
        """The bad commit with the fewest ancestors: the tightest upper end."""
        bads = [s for s, m in self.marks.items() if m is Mark.BAD]
        return min(bads, key=lambda s: bin(self.graph.ancestors(s)).count("1"))

    def candidates(self) -> list[str]:
        """Commits that may still be the first bad one, oldest first."""
        bad = self._best_bad()
        return self.graph.members(self.graph.ancestors(bad) & ~self._good_bits())

    def untested(self) -> list[str]:
        return [c for c in self.candidates() if c not in self.marks]

    def _pickable(self, cands: list[str]) -> list[str]:
        """The untested candidates a step may pick: those with artifacts while any is left."""
        untested = [c for c in cands if c not in self.marks]
        fetched = [c for c in untested if c in self.prefer]
        return fetched or untested

    @property
    def done(self) -> bool:
        return not self.untested() or len(self.candidates()) == 1

    def first_bad(self) -> str | None:
        """The answer once it is certain; None while undecided or when skips hide it."""
        cands = self.candidates()
        return cands[0] if len(cands) == 1 else None

    def steps_left(self) -> int:
        """About how many more verdicts the search needs (log2 of the untested candidates)."""
        n = len(self.untested())
        return 0 if self.done else max(1, n.bit_length() - 1)

    # ------------------------------------------------------------------ what next
    def next(self) -> str | None:
        """The commit to test next, or None when done."""
        if self.done:
            return None
        cands = self.candidates()
        reach = self._reach(cands)
        n = len(cands)
        return max(self._pickable(cands), key=lambda c: min(reach(c), n - reach(c)), default=None)

    def _reach(self, cands: list[str]) -> Callable[[str], int]:
        """How many of ``cands`` a commit has among its ancestors (itself included)."""
        cand_bits = 0
        for c in cands:
            cand_bits |= self.graph.bit(c)
        return lambda c: bin(self.graph.ancestors(c) & cand_bits).count("1")

    def next_batch(self, k: int) -> list[str]:
        """Up to ``k`` commits to test at once: a (k+1)-ary search, git's midpoint when k = 1.

        Each pick is the untested candidate whose share of ancestors among the candidates is
        nearest to i/(k+1), so k verdicts cut the candidates into about k+1 equal parts.
        """
        if self.done:
            return []
        if k <= 1:
            nxt = self.next()
            return [nxt] if nxt else []
        cands = self.candidates()
        reach = self._reach(cands)
        share = {c: reach(c) / len(cands) for c in self._pickable(cands)}
        picks: list[str] = []
        for i in range(1, k + 1):
            left = [c for c in share if c not in picks]
            if not left:
                break
            picks.append(min(left, key=lambda c: abs(share[c] - i / (k + 1))))
        return picks

    def record(self, sha: str, mark: Mark) -> None:
        if sha not in self.graph:
            raise ValueError(f"{sha} is not in the graph")
        self.marks[sha] = mark

    def last_good(self) -> list[str]:
        """Good commits that are parents of the first bad one (the evidence next to it)."""
        fb = self.first_bad()
        if fb is None:
            return []
        return [p for p in self.graph.parents.get(fb, ()) if self.marks.get(p) is Mark.GOOD]


def graph_from_rev_list(lines: Iterable[str], first_parent: bool = False) -> Graph:
    """Build a Graph from ``git rev-list --parents --reverse --topo-order`` output."""
    order: list[str] = []
    parents: dict[str, tuple[str, ...]] = {}
    for line in lines:
        parts = line.split()
        if not parts:
            continue
        sha, ps = parts[0], tuple(parts[1:])
        order.append(sha)
        parents[sha] = ps[:1] if first_parent else ps
    return Graph(tuple(order), parents)
