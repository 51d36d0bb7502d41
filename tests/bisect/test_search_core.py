"""git bisect's rules in lnrepro.bisect.core, one by one: the candidates, the midpoint, a
(k+1)-ary split, artifacts first, what is the answer and when skips hide it. Pure, small graphs."""

from __future__ import annotations

import pytest

from lnrepro.bisect.core import Graph, Mark, Search, graph_from_rev_list
from tests.bisect.test_core import linear

# a merge: a - b - m - d with a side branch a - x - m
MERGE = Graph(("a", "b", "x", "m", "d"), {"b": ("a",), "x": ("a",), "m": ("b", "x"), "d": ("m",)})


def test_a_graph_knows_positions_bits_ancestors_and_members() -> None:
    g = MERGE
    assert [g.position(c) for c in g.order] == [0, 1, 2, 3, 4]
    assert g.bit("x") == 4 and g.bit("a") == 1
    assert g.ancestors("m") == 0b1111 and g.ancestors("x") == 0b101
    assert g.members(0b10110) == ["b", "x", "d"]
    assert "m" in g and "zz" not in g
    # a parent outside the graph is ignored
    g2 = Graph(("b",), {"b": ("outside",)})
    assert g2.ancestors("b") == 1
    with pytest.raises(ValueError, match=r"^a is listed after its child b$"):
        Graph(("b", "a"), {"b": ("a",)})
    with pytest.raises(ValueError, match=r"^b is listed after its child b$"):
        Graph(("b",), {"b": ("b",)})


def test_a_rev_list_becomes_a_graph_blank_lines_ignored() -> None:
    g = graph_from_rev_list(["a", "", "b a", "c b a"])
    assert g.order == ("a", "b", "c") and g.parents["c"] == ("b", "a")
    assert graph_from_rev_list(["a", "c b a"], first_parent=True).parents["c"] == ("b",)


def test_the_candidates_are_the_bad_commits_ancestors_no_good_commit_reaches() -> None:
    s = Search(MERGE, "d", ["b"])
    assert s.candidates() == ["x", "m", "d"]
    assert s.untested() == ["x", "m"]
    s.record("m", Mark.BAD)
    assert s.candidates() == ["x", "m"]  # the tightest bad commit: the fewest ancestors
    s.record("x", Mark.GOOD)
    assert s.candidates() == ["m"] and s.first_bad() == "m" and s.done
    assert s.last_good() == ["b", "x"]  # both parents good: b given, x tested


def test_unknown_commits_are_refused() -> None:
    with pytest.raises(ValueError, match=r"^zz is not in the graph$"):
        Search(MERGE, "zz", ["a"])
    with pytest.raises(ValueError, match=r"^zz is not in the graph$"):
        Search(MERGE, "d", ["zz"])
    with pytest.raises(ValueError, match=r"^zz is not in the graph$"):
        Search(MERGE, "d", ["a"]).record("zz", Mark.BAD)


def test_the_next_commit_splits_the_candidates_most_evenly() -> None:
    s = Search(linear(9), "c8", ["c0"])
    assert s.next() == "c4"  # 8 candidates: c4 has 4 of them as ancestors, 4 not
    s.record("c4", Mark.GOOD)
    assert s.next() == "c6"
    s.record("c6", Mark.BAD)
    assert s.next() == "c5"
    s.record("c5", Mark.BAD)
    assert s.next() is None and s.first_bad() == "c5" and s.last_good() == ["c4"]


def test_ties_go_to_the_oldest_candidate() -> None:
    s = Search(linear(4), "c3", ["c0"])  # c1 (1 | 2) and c2 (2 | 1) tie
    assert s.next() == "c1"


def test_skips_are_never_picked_and_may_leave_several_candidates() -> None:
    s = Search(linear(4), "c3", ["c0"])
    s.record("c1", Mark.SKIP)
    assert s.next() == "c2"
    s.record("c2", Mark.SKIP)
    assert s.next() is None and s.done and s.first_bad() is None
    assert s.candidates() == ["c1", "c2", "c3"] and s.last_good() == []
    assert s.steps_left() == 0


def test_steps_left_is_about_log2_of_the_untested() -> None:
    assert Search(linear(2), "c1", ["c0"]).steps_left() == 0
    assert Search(linear(4), "c3", ["c0"]).steps_left() == 1  # 2 untested
    assert Search(linear(5), "c4", ["c0"]).steps_left() == 1  # 3 untested
    assert Search(linear(6), "c5", ["c0"]).steps_left() == 2  # 4 untested
    assert Search(linear(18), "c17", ["c0"]).steps_left() == 4  # 16 untested


def test_artifacts_are_picked_while_any_is_untested() -> None:
    s = Search(linear(9), "c8", ["c0"], prefer=frozenset({"c2", "c7"}))
    assert s.next() == "c2"  # of the two artifacts, the better split
    assert s.next_batch(2) == ["c2", "c7"]
    s.record("c2", Mark.GOOD)
    s.record("c7", Mark.BAD)
    assert s.next() == "c4"  # no artifact left: a build


def test_k_jobs_cut_the_candidates_into_k_plus_one_parts() -> None:
    s = Search(linear(13), "c12", ["c0"])  # 12 candidates
    assert s.next_batch(1) == ["c6"]
    assert s.next_batch(0) == ["c6"]
    assert s.next_batch(2) == ["c4", "c8"]
    assert s.next_batch(3) == ["c3", "c6", "c9"]
    # more jobs than untested candidates: each once
    small = Search(linear(4), "c3", ["c0"])
    assert sorted(small.next_batch(5)) == ["c1", "c2"]
    small.record("c1", Mark.GOOD)
    small.record("c2", Mark.GOOD)
    assert small.next_batch(3) == [] and small.next_batch(1) == []


def test_a_single_candidate_is_the_answer_even_with_untested_ones_elsewhere() -> None:
    s = Search(linear(3), "c2", ["c1"])
    assert s.candidates() == ["c2"] and s.done and s.first_bad() == "c2"
    assert s.next() is None
