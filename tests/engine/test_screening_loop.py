"""The screening loop (:mod:`utf8fuzz.engine.screening`): the C ``screen_many`` and
``Walk.agrees`` against the Python definition (``py_screen``, ``agrees``), and the C
loop and judge with each allocation failing in turn; an out-of-process decoder's
outcome that agrees (``outcome_agrees``) against the full judging."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import nomemory
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.decoders.reference import Reference
from utf8fuzz.engine import screening
from utf8fuzz.engine.classify import VIEW_ORDER, Judge
from utf8fuzz.engine.differ import Differ
from utf8fuzz.outcome import MAX_CODE_POINT, VIEWS, Outcome, checked
from utf8fuzz.profiles import REGISTRY
from utf8fuzz.profiles.walk import PyWalk, walker

TEXTS = ("replace", "ignore", "escape")


def screens_for(walk: Any) -> list[Any]:
    """Screens a decoder could return for the walk's input: its own views (as
    tuples and as str), each with one view changed, empty, not a dict, raising."""
    own = {v: walk.view(v) for v in ("strict", "spans", "reason", *TEXTS)}
    texts = {v: walk.text(v) for v in TEXTS if walk.text(v) is not None}
    out: list[Any] = [own, {**own, **texts}, {}, None, [("strict", None)], {"other": 1}]
    for v in ("strict", "reason", "replace"):
        out.append({**own, v: (0, 99) if v == "strict" else "x" if v == "reason" else "\ufffd?"})
    out.append({"strict": own["strict"], "reason": own["reason"]})
    out.append({"replace": walk.text("replace") or "", "tokens": ()})
    # tokens packed (outcome.pack_tokens): equal ones end the comparison
    out += [{"tokens": walk.packed}, {"tokens": walk.packed, "strict": (0, 99)},
            {"strict": (0, 99), "tokens": walk.packed}, {"tokens": walk.packed + b"\0" * 32},
            {**own, "tokens": b""}]
    return out


@given(st.binary(max_size=24))
@settings(max_examples=150, deadline=None)
def test_screen_is_the_python_loop(data: bytes) -> None:
    """The C screen_many of one input (and Walk.agrees) against py_screen (and
    agrees), over C walks and PyWalks, for screens that agree, differ in one view, prove nothing, or
    raise; a raised Exception counts as None, as Differ.run treats it."""
    ref = REGISTRY["unicode"]
    cw, pw = walker(ref)(data), PyWalk(data, ref, "maximal-subpart")
    views_sets = [frozenset({"strict", "reason"}), frozenset(TEXTS),
                  frozenset({"strict", "spans", "reason", *TEXTS}), frozenset()]

    def boom(d: bytes) -> Any:
        raise ValueError("a plug-in's screen that raises")

    plan = []
    for k, seen in enumerate(screens_for(cw)):
        plan.append(((lambda d, s=seen: s), k % 2, views_sets[k % len(views_sets)], None))
    plan += [(None, 0, views_sets[0], None), (boom, 1, views_sets[1], None)]
    plan_t = tuple(plan)
    want = screening.py_screen(data, (pw, pw), plan_t)
    for walks in ((cw, cw), (pw, pw), (cw, pw)):
        (got,) = screening.screen_many((data,), (walks,), (plan_t,))
        assert got == tuple(want)
    for sc, _, views, _ in plan:
        seen = sc(data) if sc not in (None, boom) else None
        if type(seen) is dict:
            assert cw.agrees(seen, views) == screening.agrees(pw, seen, views)


def test_screen_lets_base_exceptions_through_and_checks_its_arguments() -> None:
    c = screening
    w = walker(REGISTRY["unicode"])(b"A")

    def interrupt(d: bytes) -> Any:
        raise KeyboardInterrupt

    def one(walks: Any, plan: Any) -> Any:
        return c.screen_many((b"A",), (walks,), (plan,))

    with pytest.raises(KeyboardInterrupt):
        one((w,), ((interrupt, 0, frozenset({"strict"}), None),))
    with pytest.raises(ValueError):
        one((w,), ((None, 1, frozenset(), None),))  # no walk 1
    with pytest.raises(ValueError):
        one((w,), ((None, 0, frozenset(), ["strict"]),))  # an order is a tuple
    with pytest.raises(TypeError):
        one([w], ())
    with pytest.raises(TypeError):
        one((w,), ((None, 0, frozenset()),))
    with pytest.raises(ValueError):  # an unknown view in a C walk is the walk's error
        one((w,), ((lambda d: {"nope": 1}, 0, frozenset({"nope"}), None),))


@given(st.lists(st.binary(max_size=16), min_size=1, max_size=5), st.randoms(use_true_random=False))
@settings(max_examples=60, deadline=None)
def test_screen_many_is_screen_of_each_input(inputs: list[bytes], rnd: Any) -> None:
    """_screening.screen_many against py_screen_many (which is py_screen per input), for
    plans that differ per input as the differ's do (a sampled input has no screen
    where a screened one has one)."""
    ref = REGISTRY["unicode"]
    views = [frozenset({"strict", "reason"}), frozenset(TEXTS), frozenset()]
    cws = tuple((walker(ref)(d),) for d in inputs)
    pws = tuple((PyWalk(d, ref, "maximal-subpart"),) for d in inputs)
    width = 6
    def returning(seen: Any) -> Any:
        return lambda d: seen

    plans = []
    for (cw,) in cws:
        seens = screens_for(cw)
        plans.append(tuple(
            (None if rnd.random() < 0.2 else returning(rnd.choice(seens)), 0,
             views[k % len(views)], None) for k in range(width)))
    want = screening.py_screen_many(tuple(inputs), pws, tuple(plans))
    assert want == [screening.py_screen(d, w, p)
                    for d, w, p in zip(inputs, pws, plans, strict=True)]
    for ws in (cws, pws):
        got = screening.screen_many(tuple(inputs), ws, tuple(plans))
        assert [tuple(x) for x in got] == [tuple(x) for x in want]


def test_screen_many_calls_decoder_major() -> None:
    calls: list[tuple[int, bytes]] = []

    def screen_of(k: int) -> Any:
        def sc(d: bytes) -> dict[str, Any]:
            calls.append((k, d))
            return {"strict": None}
        return sc

    inputs = (b"A", b"B", b"\xff")
    w = walker(REGISTRY["unicode"])
    plan = tuple((screen_of(k), 0, frozenset({"strict"}), None) for k in range(3))
    got = screening.screen_many(inputs, tuple((w(d),) for d in inputs), (plan,) * 3)
    assert calls == [(k, d) for k in range(3) for d in inputs]
    assert [m for _, m, _ in got] == [[], [], [0, 1, 2]]  # FF is an error: strict differs


def test_screen_many_checks_its_arguments() -> None:
    c = screening
    w = walker(REGISTRY["unicode"])(b"A")
    e = (None, 0, frozenset(), None)
    assert c.screen_many((), (), ()) == []
    with pytest.raises(ValueError):  # one walks per input
        c.screen_many((b"A",), (), ((e,),))
    with pytest.raises(ValueError):  # every plan as long
        c.screen_many((b"A", b"B"), ((w,), (w,)), ((e,), (e, e)))
    with pytest.raises(TypeError):
        c.screen_many([b"A"], ((w,),), ((e,),))
    with pytest.raises(TypeError):
        c.screen_many((b"A",), ([w],), ((e,),))
    for many in (c.screen_many, screening.py_screen_many):
        with pytest.raises(ValueError):
            many((b"A", b"B"), ((w,), (w,)), ((e,), (e, e)))


@pytest.mark.parametrize("name", ["unicode", "rfc2279", "corrected", "cesu8"])
def test_the_c_screening_loop_and_judge_when_memory_runs_out(name: str) -> None:
    """``screen_many`` and ``judge`` with each of their allocations failing in turn:
    MemoryError or the same answer (tests/nomemory.py)."""
    w = walker(REGISTRY[name])
    data = bytes.fromhex("41 c3a9 e282ac f09f9880 c080 eda080 f888808080 fe e282")
    calls: list[tuple[str, Any]] = []
    views = frozenset({"strict", "replace", "spans"})
    seen = {"strict": None, "replace": "A"}
    # the second and third screens differ, and are judged (an order): screening.judge.
    # A screen is a C callable (dict.get): a Python frame would allocate too.
    spans = {"spans": ((1, 2),), "strict": (1, 2)}
    plan = ((None, 0, views, None), ({data: seen, data[:5]: seen}.get, 0, views, VIEWS),
            ({data: spans, data[:5]: spans}.get, 0, views, VIEWS))
    calls.append(("screen_many", lambda: partial(
        screening.screen_many, (data, data[:5]), ((w(data),), (w(data[:5]),)), (plan, plan))))
    other = walker(REGISTRY["rfc2279"])(data)  # other tokens, packed
    for seen_ in ({"tokens": other.packed}, {"ignore": w(data).text("replace") or ""},
                  {"spans": ((1, 3),)}, {"strict": (0, 1)}):
        calls.append((f"judge {sorted(seen_)}", lambda seen_=seen_: partial(
            screening.judge, w(data), seen_, VIEWS)))
    failed = sum(nomemory.check_every_allocation(make, f"{name}: {what}")
                 for what, make in calls)
    assert failed > len(calls)  # failures were met, not run past


# -- an out-of-process decoder's outcome equal to the reference (outcome_agrees) ----


def replies_for(walk: Any, n: int) -> list[Outcome]:
    """Outcomes of the shapes the exec parser makes (exact ints and tuples) for the
    walk's input: each reply shape of the reference's own views, then each with one
    view changed, a failure, another length, and views no comparison covers."""
    v = {x: walk.view(x) for x in ("strict", "spans", "reason", "accept", *TEXTS)}
    cps = v["replace"]
    shapes: list[dict[str, Any]] = [
        {"strict": v["strict"], "spans": v["spans"], "replace": cps, "ignore": v["ignore"],
         "escape": v["escape"]},
        {"strict": v["strict"], "reason": v["reason"]}, {"strict": v["strict"]},
        {"replace": cps, "spans": v["spans"], "strict": v["strict"], "reason": v["reason"]},
        {"accept": v["accept"]}, {"replace": cps}]
    out = [Outcome.partial(n, **s) for s in shapes]
    out += [Outcome.partial(n, strict=(0, n + 1)), Outcome.partial(n, replace=(*cps, 0x41)),
            Outcome.partial(n, replace=(MAX_CODE_POINT + 1,)),
            Outcome.partial(n, accept=not v["accept"]),
            Outcome.partial(n + 1, replace=cps), Outcome.partial(n),
            Outcome.failure(n, "crash", "peer failed: x"), walk.outcome({})]
    return out


@given(st.binary(max_size=24))
@settings(max_examples=150, deadline=None)
def test_an_outcome_that_agrees_is_one_the_full_judging_passes(data: bytes) -> None:
    """outcome_agrees (the differ's shortcut for an exec client's outcomes) holds only
    where the full path - outcome.checked, then Judge.compare - finds nothing; over C
    walks and PyWalks; and it holds for every reply shape of the reference's views
    (the shortcut is taken)."""
    ref = REGISTRY["unicode"]
    cw, pw = walker(ref)(data), PyWalk(data, ref, "maximal-subpart")
    reference = Reference("unicode", "maximal-subpart")
    compared = frozenset(VIEWS)
    for k, out in enumerate(replies_for(cw, len(data))):
        agree = screening.outcome_agrees(cw, out, len(data), compared)
        assert agree == screening.outcome_agrees(pw, out, len(data), compared)
        if agree:
            assert checked(out, len(data)) is out
            assert Judge(data, cw, reference).compare(out, VIEW_ORDER) is None
        assert agree == (k < 6)
    # a view the differ does not compare is never taken as agreeing
    assert not screening.outcome_agrees(cw, replies_for(cw, len(data))[0], len(data),
                                        frozenset({"strict"}))


class Peer(Decoder):
    """An out-of-process decoder whose outcomes are given (:meth:`decode_many`)."""

    out_of_process = True
    shows = frozenset(VIEWS) - {"tokens"}

    def __init__(self, name: str, outs: dict[bytes, Outcome]) -> None:
        self.name, self.outs = name, outs

    def run(self, data: bytes) -> Outcome:
        return self.outs[data]

    def decode_many(self, inputs: Any) -> list[Outcome]:
        return [self.outs[x] for x in inputs]


INPUTS = [b"", b"A", b"\xc0\x80", b"A\xe2\x82", b"\xf0\x9f\x98\x80B", b"\xed\xa0\x80\xff",
          b"\xef\xbf\xbd\xc3"]


def test_the_shortcut_judges_out_of_process_outcomes_as_the_full_path() -> None:
    """Differ.run_out_of_process with the shortcut for the exec parser's outcomes
    (Differ._parsed) gives the results it gives without it: the same divergences,
    named the same, and the same outcomes."""
    walks = {x: walker(REGISTRY["unicode"])(x) for x in INPUTS}
    peers = [Peer(f"peer:{k}", {x: replies_for(walks[x], len(x))[k] for x in INPUTS})
             for k in range(len(replies_for(walks[b""], 0)))]
    fast, full = (Differ(peers, defer_out_of_process=True) for _ in range(2))
    fast._parsed = frozenset(p.name for p in peers)
    full._parsed = frozenset()

    def shown(res: list[Any]) -> list[Any]:
        return [(r.data, sorted(map(str, r.signatures)),
                 sorted((n, o.status, o.views, o.detail) for n, o in r.outcomes.items()
                        if not n.startswith("ref:")),
                 [(d.signature, d.offset) for d in r.divergences]) for r in res]

    assert shown(fast.run_out_of_process(INPUTS)) == shown(full.run_out_of_process(INPUTS))


def test_a_plug_ins_outcome_equal_to_the_reference_in_value_is_still_checked() -> None:
    """An out-of-process decoder that is not an exec client (a plug-in in its worker)
    is judged in full: a span that equals the reference's in value but is not exact
    ints is still a bad-outcome, which the shortcut would have passed."""
    data = b"A\xc0\x80"
    w = walker(REGISTRY["unicode"])(data)
    odd = Outcome.partial(len(data), spans=((1, 2.0), (2, 3)), replace=w.view("replace"))
    assert screening.outcome_agrees(w, odd, len(data), frozenset(VIEWS))  # equal in value
    peer = Peer("plug", {data: odd})
    d = Differ([peer], defer_out_of_process=True)
    assert not d._parsed  # a test's decoder: not one of this project's adapters
    (res,) = d.run_out_of_process([data])
    assert res.outcomes["plug"].status == "bad-outcome"
