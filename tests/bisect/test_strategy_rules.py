"""lnrepro's manners around git bisect (lnrepro.bisect.strategy.GitSearch), one rule each: the
endpoints and merge bases first, noise retried then skipped and given second chances, the
culprit confirmed, and the words of every error and answer. Pure, small graphs."""

from __future__ import annotations

from lnrepro.bisect.core import Graph, Mark
from lnrepro.bisect.strategy import GitSearch, merge_base_error
from lnrepro.model.bisect import (
    Action,
    ActionKind,
    BuildKind,
    CommitInfo,
    ResultKind,
    RunOutcome,
    SearchKind,
)
from tests.bisect.test_core import linear

FAIL, PASS, NOISE = RunOutcome.FAIL, RunOutcome.PASS, RunOutcome.NOISE
E, S, C, M = ActionKind.ENDPOINT, ActionKind.STEP, ActionKind.CONFIRM, ActionKind.MERGE_BASE


def do(s: GitSearch, kind: ActionKind, sha: str, *outs: RunOutcome) -> Mark:
    return s.observe(Action(sha=sha, kind=kind), [(o, o.value) for o in outs])


def plan(s: GitSearch, jobs: int = 1) -> list[tuple[ActionKind, str]]:
    return [(a.kind, a.sha) for a in s.next_batch(jobs)]


def test_merge_base_words() -> None:
    assert merge_base_error("0123456789abcdef", ["fedcba9876543210", "g"]) == (
        "the merge base 0123456789ab is bad: the bug was fixed between 0123456789ab and "
        "[fedcba987654, g]"
    )


def test_endpoints_first_then_steps_then_the_culprit_and_its_parent() -> None:
    s = GitSearch(linear(5), "c4", ["c0"], prefer=frozenset({"c4"}))
    assert s.next_batch(3) == [
        Action(job=0, sha="c4", kind=E, build=BuildKind.PREBUILT),
        Action(job=1, sha="c0", kind=E, build=BuildKind.BUILD),
    ]
    do(s, E, "c4", FAIL)
    assert plan(s) == [(E, "c0")]
    do(s, E, "c0", PASS)
    assert plan(s) == [(S, "c2")]
    assert s.progress() == (4, 1)
    do(s, S, "c2", PASS)
    do(s, S, "c3", FAIL)
    assert plan(s, 2) == [(C, "c3"), (C, "c2")]
    assert not s.done
    do(s, C, "c3", FAIL)
    assert plan(s, 2) == [(C, "c2")]
    do(s, C, "c2", PASS)
    assert s.done and s.next_batch(1) == [] and s.next_for(0, {}) is None
    a = s.answer("first bad commit")
    assert (a.first_bad, a.last_good, a.last_good_all, a.confirmed) == ("c3", "c2", ("c2",), True)
    assert a.search is SearchKind.GIT and a.error is None


def test_without_confirm_no_endpoint_or_confirm_steps() -> None:
    s = GitSearch(linear(3), "c2", ["c0"], confirm=False)
    assert plan(s) == [(S, "c1")]
    do(s, S, "c1", PASS)
    assert s.done
    assert s.answer("first bad commit").confirmed is None


def test_a_merge_base_is_tested_and_a_bad_one_is_an_error() -> None:
    g = Graph(("a", "b", "x"), {"b": ("a",), "x": ("a",)})  # --good x is no ancestor of --bad b
    s = GitSearch(g, "b", ["x", "a"], merge_bases=["a"], confirm=False)
    assert plan(s, 2) == [(M, "a")]
    do(s, M, "a", FAIL)
    assert s.error == merge_base_error("a", ["x"]) and s.done
    assert s.answer("first bad commit").error == s.error
    s = GitSearch(g, "b", ["x", "a"], merge_bases=["a"])
    assert plan(s, 5) == [(E, "b"), (E, "x"), (M, "a")]
    do(s, M, "a", PASS)
    assert s.error is None


def test_an_endpoint_that_tests_the_wrong_way_is_an_error() -> None:
    s = GitSearch(linear(3), "c2", ["c0"])
    do(s, E, "c2", PASS)
    assert s.error == "the bad endpoint c2 tested good" and s.done
    s = GitSearch(linear(3), "c2", ["c0"])
    do(s, E, "c0", FAIL)
    assert s.error == "the good endpoint c0 tested bad"


def test_noise_is_retried_then_skipped_with_second_chances() -> None:
    s = GitSearch(linear(4), "c3", ["c0"], confirm=False, retries=2, second_chances=1)
    for _ in range(2):
        assert do(s, S, "c1", NOISE) is Mark.SKIP
        assert "c1" not in s.search.marks  # retried, not skipped yet
    assert do(s, S, "c1", NOISE) is Mark.SKIP
    assert s.search.marks["c1"] is Mark.SKIP and s.noise_skipped == {"c1"}
    assert plan(s) == [(S, "c2")]
    do(s, S, "c2", FAIL)  # c1 alone hides the answer: a second chance
    assert "c1" not in s.search.marks and s.revived == {"c1": 1}
    assert plan(s) == [(S, "c1")]
    for _ in range(3):
        do(s, S, "c1", NOISE)
    # no chance left: the skip stands and hides the answer
    assert s.done and s.search.marks["c1"] is Mark.SKIP
    a = s.answer("first bad commit")
    assert a.first_bad is None
    assert a.candidates == (CommitInfo(sha="c1"), CommitInfo(sha="c2"))
    assert a.reason == "skipped commits hide which candidate is first"


def test_an_endpoints_noise_is_retried_but_never_a_noise_skip() -> None:
    s = GitSearch(linear(3), "c2", ["c0"], retries=0)
    assert do(s, E, "c2", NOISE) is Mark.SKIP
    assert s.noise_skipped == set() and s.tested[(E, "c2")] is Mark.SKIP


def test_a_commit_that_cannot_be_tested_is_skipped_at_once() -> None:
    s = GitSearch(linear(4), "c3", ["c0"], confirm=False)
    m = s.observe(Action(sha="c1", kind=S), [], cannot_test="no build")
    assert m is Mark.SKIP and s.search.marks["c1"] is Mark.SKIP and s.noise_skipped == set()


def test_equal_inputs_share_the_verdict() -> None:
    s = GitSearch(linear(5), "c4", ["c0"], confirm=False)
    do(s, S, "c2", FAIL)
    assert s.equate(Action(sha="c1", kind=S), "c2") is Mark.BAD
    assert s.search.marks["c1"] is Mark.BAD
    assert s.equate(Action(sha="c3", kind=S), "c9") is Mark.SKIP
    # an endpoint's verdict counts too; a skip does not
    t = GitSearch(linear(5), "c4", ["c0"])
    do(t, E, "c4", FAIL)
    assert t.verdict("c4") is Mark.BAD
    t.tested[(C, "c2")] = Mark.SKIP
    assert t.verdict("c2") is None
    t.tested[(C, "c3")] = Mark.GOOD
    assert t.verdict("c3") is Mark.GOOD


def test_a_confirmation_that_contradicts_the_search_says_so() -> None:
    s = GitSearch(linear(3), "c2", ["c0"])
    do(s, E, "c2", FAIL)
    do(s, E, "c0", PASS)
    do(s, S, "c1", FAIL)
    do(s, C, "c1", PASS)  # the culprit passes when re-tested
    do(s, C, "c0", PASS)
    assert s.answer("first bad commit").confirmed is False
    t = GitSearch(linear(3), "c2", ["c0"])
    do(t, E, "c2", FAIL)
    do(t, E, "c0", PASS)
    do(t, S, "c1", FAIL)
    do(t, C, "c1", NOISE, NOISE, NOISE)
    t.tested[(C, "c1")] = Mark.SKIP
    t.tested[(C, "c0")] = Mark.GOOD
    assert t.answer("first bad commit").confirmed is None  # a re-test said nothing


def test_an_idle_job_takes_a_commit_nobody_runs() -> None:
    s = GitSearch(linear(9), "c8", ["c0"], confirm=False)
    a = s.next_for(3, {0: "c4"})
    assert a is not None and a.job == 3 and a.sha in ("c3", "c5", "c6", "c2") and a.sha != "c4"
    assert s.next_for(1, {}) == Action(job=1, sha="c4", kind=S, build=BuildKind.BUILD)
    s.learn_costs(BuildKind.BUILD, 1.0, 1.0)  # git's rule weighs no costs
    assert s.runs_per_action() is None
    t = GitSearch(linear(3), "c2", ["c0"], confirm=False)
    assert t.next_for(1, {0: "c1"}) is None  # the only candidate runs already


def test_every_action_names_its_job_kind_and_build_and_the_answer_its_kind() -> None:
    arts = frozenset({"c2", "c3"})
    s = GitSearch(linear(5), "c4", ["c0"], prefer=arts)
    do(s, E, "c4", FAIL)
    do(s, E, "c0", PASS)
    assert s.next_batch(2) == [
        Action(job=0, sha="c2", kind=S, build=BuildKind.PREBUILT),
        Action(job=1, sha="c3", kind=S, build=BuildKind.PREBUILT),
    ]
    do(s, S, "c2", PASS)
    do(s, S, "c3", FAIL)
    assert s.next_batch(2) == [
        Action(job=0, sha="c3", kind=C, build=BuildKind.PREBUILT),
        Action(job=1, sha="c2", kind=C, build=BuildKind.PREBUILT),
    ]
    do(s, C, "c3", FAIL)
    do(s, C, "c2", PASS)
    a = s.answer("first fixed commit")
    assert a.kind is ResultKind.FIRST_FIXED and a.search is SearchKind.GIT
    assert (a.first_bad, a.last_good, a.error, a.confirmed) == ("c3", "c2", None, True)
    t = GitSearch(linear(4), "c3", ["c0"], confirm=False)
    do(t, S, "c1", NOISE, NOISE, NOISE)
    do(t, S, "c2", NOISE, NOISE, NOISE)
    for _ in range(6):
        for sha in ("c1", "c2"):
            if (S, sha) in {(k, x) for k, x in plan(t, 2)}:
                do(t, S, sha, NOISE, NOISE, NOISE)
    b = t.answer("first fixed commit")
    assert b.kind is ResultKind.FIRST_FIXED and b.search is SearchKind.GIT and b.first_bad is None


def test_a_first_bad_without_a_good_parent_has_no_last_good() -> None:
    g = Graph(("a", "b"), {"b": ()})  # b's history does not reach the good end (a shallow clone)
    s = GitSearch(g, "b", ["a"], confirm=False)
    a = s.answer("first bad commit")
    assert (a.first_bad, a.last_good, a.last_good_all) == ("b", None, ())


def test_a_commit_that_cannot_be_tested_is_not_judged_by_its_runs() -> None:
    s = GitSearch(linear(4), "c3", ["c0"], confirm=False)
    m = s.observe(Action(sha="c1", kind=S), [(FAIL, "f")], cannot_test="did not build")
    assert m is Mark.SKIP and s.search.marks["c1"] is Mark.SKIP
    assert s.verdict("c3") is Mark.BAD and s.verdict("c1") is None
