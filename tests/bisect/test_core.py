"""The bisect search, pure: scripted verdicts on synthetic DAGs, checked against brute force."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lnrepro.bisect.core import Graph, Mark, Search, graph_from_rev_list


def linear(n: int) -> Graph:
    order = tuple(f"c{i}" for i in range(n))
    return Graph(order, {c: ((order[i - 1],) if i else ()) for i, c in enumerate(order)})


def random_dag(rng: random.Random, n: int) -> Graph:
    """A history with merges: each commit has its predecessor, sometimes a second older parent."""
    order = tuple(f"c{i}" for i in range(n))
    parents: dict[str, tuple[str, ...]] = {order[0]: ()}
    for i in range(1, n):
        ps = [order[i - 1]]
        if i > 2 and rng.random() < 0.3:
            ps.append(order[rng.randrange(0, i - 1)])
        parents[order[i]] = tuple(ps)
    return Graph(order, parents)


def run(
    graph: Graph, bad: str, good: str, is_bad: dict[str, bool], skip: set[str] = frozenset()
) -> tuple[Search, int]:  # type: ignore[assignment]
    s = Search(graph, bad, [good])
    steps = 0
    while (c := s.next()) is not None:
        steps += 1
        s.record(c, Mark.SKIP if c in skip else Mark.BAD if is_bad[c] else Mark.GOOD)
        assert steps <= len(graph.order)
    return s, steps


def test_linear_history_takes_log2_steps() -> None:
    g = linear(1024)
    for culprit in (1, 2, 511, 512, 1023):
        is_bad = {c: i >= culprit for i, c in enumerate(g.order)}
        s, steps = run(g, "c1023", "c0", is_bad)
        assert s.first_bad() == f"c{culprit}" and steps <= 10


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(3, 80))
def test_dag_with_merges_finds_a_commit_whose_parents_are_all_good(seed: int, n: int) -> None:
    """Like git: the answer is bad, every parent in range is good — checked by brute force."""
    rng = random.Random(seed)
    g = random_dag(rng, n)
    culprit = g.order[rng.randrange(1, n)]
    # bad = descends from the culprit (the defect propagates through merges)
    is_bad = {c: bool(g.ancestors(c) & g.bit(culprit)) for c in g.order}
    s, steps = run(g, g.order[-1] if is_bad[g.order[-1]] else culprit, g.order[0], is_bad)
    fb = s.first_bad()
    assert fb == culprit
    assert steps <= 2 * max(1, n.bit_length())  # DAG-aware: about log2, never a linear walk


def test_skips_leave_the_candidate_set_when_they_hide_the_answer() -> None:
    g = linear(10)
    is_bad = {c: i >= 5 for i, c in enumerate(g.order)}
    s, _ = run(g, "c9", "c0", is_bad, skip={"c4", "c5"})
    assert s.first_bad() is None
    # c3 good, c6 bad: the skipped c4 and c5 hide which of c4, c5, c6 is first
    assert s.candidates() == ["c4", "c5", "c6"] and s.done


def test_skips_around_an_unambiguous_answer_do_not_matter() -> None:
    g = linear(32)
    is_bad = {c: i >= 20 for i, c in enumerate(g.order)}
    s, _ = run(g, "c31", "c0", is_bad, skip={"c10", "c11", "c25"})
    assert s.first_bad() == "c20"


def test_replay_resumes_without_repeating_steps() -> None:
    g = linear(64)
    is_bad = {c: i >= 40 for i, c in enumerate(g.order)}
    s = Search(g, "c63", ["c0"])
    done = []
    for _ in range(3):
        c = s.next()
        assert c is not None
        m = Mark.BAD if is_bad[c] else Mark.GOOD
        s.record(c, m)
        done.append((c, m))
    r = Search(g, "c63", ["c0"])  # what a resumed bisect rebuilds from its saved steps
    for c, m in done:
        r.record(c, m)
    assert r.next() == s.next() and r.candidates() == s.candidates()
    assert r.next() not in dict(done)


def test_graph_from_rev_list_and_first_parent() -> None:
    lines = ["a", "b a", "x a", "m b x", "d m"]
    g = graph_from_rev_list(lines)
    assert g.parents["m"] == ("b", "x") and g.ancestors("d") == (1 << 5) - 1
    fp = graph_from_rev_list(lines, first_parent=True)
    assert fp.parents["m"] == ("b",)
    assert not fp.ancestors("d") & fp.bit("x")
    with pytest.raises(ValueError, match="listed after"):
        Graph(("b", "a"), {"b": ("a",), "a": ()})


@pytest.mark.parametrize("jobs", [1, 3])
@given(seed=st.integers(0, 10_000))
@settings(max_examples=40, deadline=None)
def test_artifacts_first_then_builds_only_inside_the_last_interval(jobs: int, seed: int) -> None:
    """With prebuilt artifacts on every 10th commit, every step before the first one without an
    artifact tests an artifact, every later step lies between two neighbouring artifacts (the
    last interval), and the answer is the one a search without artifacts gives."""
    rng = random.Random(seed)
    g = random_dag(rng, 120) if seed % 2 else linear(120)
    culprit = g.order[rng.randrange(1, 119)]
    bit = g.bit(culprit)
    is_bad = {c: bool(g.ancestors(c) & bit) for c in g.order}
    artifacts = frozenset(g.order[::10])
    s = Search(g, g.order[-1], [g.order[0]], prefer=artifacts)
    tested: list[str] = []
    while batch := s.next_batch(jobs):
        for c in batch:
            tested.append(c)
            s.record(c, Mark.BAD if is_bad[c] else Mark.GOOD)
    plain, _ = run(g, g.order[-1], g.order[0], is_bad)
    assert s.first_bad() == plain.first_bad()
    built = [c for c in tested if c not in artifacts]
    if built:
        first = tested.index(built[0])
        assert all(c in artifacts for c in tested[:first])
        lows = [a for a in artifacts if s.marks.get(a) is Mark.GOOD] + [g.order[0]]
        highs = [a for a in artifacts if s.marks.get(a) is Mark.BAD] + [g.order[-1]]
        lo = max(g.position(a) for a in lows)
        hi = min(g.position(a) for a in highs)
        if not seed % 2:  # on a line the last interval is (lo, hi): at most 9 commits inside
            assert hi - lo <= 10
            assert all(lo < g.position(c) < hi for c in built)
