"""``screening.judge``: the differ's judging of a whole screen, in C, for the misses
the fuzz loop meets on nearly every input (a span that differs; an ignore mode that
substitutes). Whatever it names must be exactly what the differ's own Python
(``Judge.compare_views``) names; where it declines (NotImplemented) the Python
judges. And a differ judging in C reports what a differ judging in Python reports.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utf8fuzz import decoders
from utf8fuzz import strategies as u8
from utf8fuzz.decoders.reference import Reference
from utf8fuzz.engine import differ as differ_mod
from utf8fuzz.engine import screening
from utf8fuzz.engine.classify import Judge
from utf8fuzz.engine.differ import Differ
from utf8fuzz.outcome import TEXT_VIEWS, VIEWS, Token, pack_tokens
from utf8fuzz.policies import POLICIES
from utf8fuzz.profiles import REGISTRY
from utf8fuzz.profiles import walk as walk_mod
from utf8fuzz.profiles.walk import walker

C = screening  # the C judge is screening.judge

SEEDS = Path(__file__).resolve().parents[2] / "corpus" / "seeds"
KEYS = [(p, pol) for p in sorted(REGISTRY) for pol in POLICIES]
ORDERS = [VIEWS, ("strict", "spans", "reason"), ("replace", "ignore", "escape"),
          ("reason",), ("spans", "reason", "ignore"), ("strict", "reason", "replace")]


def screens_for(data: bytes, w: Any) -> list[dict[str, Any]]:
    """Screens a complete decoder could give on ``data``: the reference's own views,
    and each kind of difference the fuzz loop meets (and some it does not)."""
    own: dict[str, Any] = {v: w.view(v) for v in ("strict", "spans", "reason")}
    for v in TEXT_VIEWS:
        t = w.text(v)
        own[v] = t if t is not None else w.view(v)
    strict, spans = own["strict"], own["spans"]
    latin1 = data.decode("latin-1")
    out: list[dict[str, Any]] = [
        own,
        {},
        # accepts everything: ill-formed bytes passed through (the C mutf8)
        {"strict": None, "spans": (), "replace": latin1, "ignore": latin1, "escape": latin1},
        {"strict": None},
        {"strict": (0, 1)},
        {"strict": (len(data), len(data) + 1), "reason": "illegal"},
        {**own, "ignore": w.text("replace") or ""},  # substitutes where errors are dropped
        {"ignore": w.text("replace") or ""},
        {**own, "ignore": latin1},
        {**own, "reason": "truncated" if own["reason"] != "truncated" else "illegal"},
        {"reason": None},
        {**own, "replace": w.view("replace")},  # a text view as a tuple: declined
        {"strict": (True, 2)},  # not an int: declined
        {"strict": [0, 1]},
        {"spans": [(0, 1)]},
    ]
    if strict is not None:
        a, b = strict
        out += [{**own, "strict": s} for s in ((a, b + 1), (a + 1, b), (a - 1, b), None)]
        out += [{"strict": (a, b - 1)}, {"strict": (a + 1, b + 1), "reason": own["reason"]}]
    if spans:
        out += [{**own, "spans": s} for s in (spans[1:], spans[:-1], (*spans, (99, 100)),
                                              ((spans[0][0], spans[0][1] + 1), *spans[1:]))]
        out.append({"spans": ((spans[0][0],),)})  # not a pair: declined
    # tokens, packed as a complete screen (ICU's) gives them
    toks = w.tokens
    out += [{"tokens": w.packed}, {**own, "tokens": w.packed}, {"tokens": toks},
            {"tokens": b"\0" * 7}, {"tokens": pack_tokens(toks[:-1])}]
    for i in {0, len(toks) - 1} if toks else ():
        t = toks[i]
        if t.kind == "char":
            changed = [t._replace(value=t.value ^ 1),
                       Token("error", None, t.start, t.end, "illegal")]
        else:
            changed = [Token("char", 0x41, t.start, t.end),
                       t._replace(reason="truncated" if t.reason != "truncated" else "illegal"),
                       t._replace(end=t.end + 1)]
        out += [{"tokens": pack_tokens((*toks[:i], c, *toks[i + 1:]))} for c in changed]
    return out


def check(data: bytes, key: tuple[str, str], seen: dict[str, Any],
          order: tuple[str, ...]) -> Any:
    w = walker(REGISTRY[key[0]], key[1])(data)
    got = C.judge(w, seen, order)
    if got is not NotImplemented:
        want = Judge(data, w, Reference(*key)).compare_views(seen, order)
        assert got == want, (data.hex(" "), key, seen, order)
    return got


@pytest.mark.exhaustive
@given(st.one_of(u8.inputs(), st.binary(max_size=24)), st.sampled_from(KEYS),
       st.sampled_from(ORDERS), st.data())
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_judge_names_what_compare_views_names(data: bytes, key: tuple[str, str],
                                              order: tuple[str, ...], draw: Any) -> None:
    w = walker(REGISTRY[key[0]], key[1])(data)
    seen = draw.draw(st.sampled_from(screens_for(data, w)))
    check(data, key, seen, order)


def test_judge_names_the_loops_common_misses_itself() -> None:
    """The cases it exists for are judged in C, not declined."""
    key = ("unicode", "maximal-subpart")
    w = walker(REGISTRY["unicode"])(b"A\xc0\x80B")
    cases = [
        # the C mutf8 passes C0 80 through: no error where the reference has two
        ("accepts-ill-formed", {"strict": None, "spans": (), "replace": "A\xc0\x80B",
                                "ignore": "A\xc0\x80B", "escape": "A\xc0\x80B"}),
        # iconv stops one byte late
        ("different-error-offset", {"strict": (1, 3), "reason": "illegal"}),
        # PyICU's ignore mode substitutes
        ("different-replacement", {"ignore": w.text("replace")}),
        # a converter that calls C0 80 one character (tokens packed, as ICU's screen)
        ("accepts-ill-formed", {"tokens": pack_tokens((
            Token("char", 0x41, 0, 1), Token("char", 0, 1, 3), Token("char", 0x42, 3, 4)))}),
    ]
    for klass, seen in cases:
        got = check(b"A\xc0\x80B", key, seen, VIEWS)
        assert got is not NotImplemented and got[0] == klass and got[1] == 1, (klass, got)
    assert check(b"A\xc0\x80B", key, {"strict": (1, 2), "reason": "illegal"}, VIEWS) is None


def test_judge_declines_what_it_does_not_know() -> None:
    w = walker(REGISTRY["unicode"])(b"A\xff")
    assert C.judge(w, {"replace": "A?"}, VIEWS) is NotImplemented  # replace: Python's
    assert C.judge(w, {"nope": 1}, ("nope",)) is NotImplemented
    pw = walk_mod.PyWalk(b"A\xff", REGISTRY["unicode"], "maximal-subpart")
    assert C.judge(pw, {"strict": None}, VIEWS) is NotImplemented  # only C walks
    with pytest.raises(TypeError):
        C.judge(w, [], VIEWS)


# Under make asan-test (libasan preloaded into a python that links no libstdc++),
# ASan's __cxa_throw interceptor finds nothing to call and aborts the first C++
# exception PyICU throws: PyICU is left out there. The C judged is the same.
SANITIZED = bool(os.environ.get("UTF8FUZZ_EXPECT_SANITIZED"))
IN_PROCESS = [d for d in decoders.available()
              if not screening.is_out_of_process(d) and not d.name.startswith("ref:")
              and not (SANITIZED and d.name.startswith("pyicu"))]
COMPLETE = [d for d in IN_PROCESS
            if screening.screen_is_whole(d) and screening.screen_of(d) is not None]


@pytest.mark.skipif(not COMPLETE, reason="no decoder with a complete screen here")
@given(st.one_of(u8.inputs(), st.binary(max_size=24)))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_judge_of_real_screens(data: bytes) -> None:
    for d in COMPLETE:
        if d.profile not in REGISTRY:
            continue
        seen = d.screen(data)
        if type(seen) is dict:
            check(data, (d.profile, d.policy), seen, VIEWS)


def _inputs() -> list[bytes]:
    return sorted(p.read_bytes() for p in SEEDS.iterdir() if p.is_file())


@pytest.mark.exhaustive
@pytest.mark.parametrize("full_every", [1, 4])
def test_a_differ_judging_in_c_reports_what_one_judging_in_python_does(
        monkeypatch: pytest.MonkeyPatch, full_every: int) -> None:
    decs = IN_PROCESS
    inputs = _inputs() * 2
    c_side = Differ(decs, full_every=full_every).run_many(inputs)
    monkeypatch.setattr(differ_mod, "screen_many", screening.py_screen_many)
    py_side = Differ(decs, full_every=full_every).run_many(inputs)
    assert [r.signatures for r in c_side] == [r.signatures for r in py_side]
    assert [r.divergences for r in c_side] == [r.divergences for r in py_side]
    assert any(r.divergences for r in c_side)


# -- the replace view's alignment in C (screening's align) ---------------------------


def _outputs(data: bytes, key: tuple[str, str], edits: list[tuple[int, int, int]],
             ) -> list[tuple[int, ...]]:
    """Replace views a decoder could give on ``data``: every policy's of its profile,
    and each of those edited (a value dropped, a U+FFFD or another value put in, a
    run merged) at the places ``edits`` name."""
    profile, _ = key
    outs = []
    for pol in POLICIES:
        base = tuple(Reference(profile, pol).decode(data).view("replace"))
        outs.append(base)
        for at, what, value in edits:
            cut = list(base)
            i = at % (len(cut) + 1)
            if what == 0 and cut:
                del cut[min(i, len(cut) - 1)]
            elif what == 1:
                cut.insert(i, 0xFFFD)
            elif what == 2:
                cut.insert(i, value)
            elif what == 3 and cut:
                cut[min(i, len(cut) - 1)] = value
            else:  # a run of U+FFFD merged into one
                while i + 1 < len(cut) and cut[i] == cut[i + 1] == 0xFFFD:
                    del cut[i + 1]
            outs.append(tuple(cut))
    return outs


def _same_alignment(data: bytes, key: tuple[str, str], outs: list[tuple[int, ...]]) -> int:
    ref = Reference(*key)
    judge = Judge(data, ref.walk(data), ref)
    compared = 0
    for theirs in outs:
        if (len(judge.tokens) + 1) * (len(theirs) + 1) > 20_000:
            continue
        assert judge._replace_alignment(theirs) == judge._py_replace_alignment(theirs), (
            data.hex(), key, theirs)
        compared += 1
    return compared


def test_the_alignment_in_c_is_the_pythons_on_the_seeds() -> None:
    edits = [(0, 0, 0), (1, 1, 0), (2, 2, 0x41), (3, 3, 0x10FFFF), (1, 4, 0), (5, 2, 0xD800),
             (0, 3, 0x7FFFFFFF)]
    compared = sum(_same_alignment(f.read_bytes()[:64], key, _outputs(f.read_bytes()[:64],
                                                                      key, edits))
                   for f in sorted(SEEDS.iterdir())[::40] for key in KEYS[::5])
    assert compared > 300


@given(st.one_of(u8.inputs(), st.binary(max_size=32)), st.sampled_from(KEYS),
       st.lists(st.tuples(st.integers(0, 40), st.integers(0, 4),
                          st.sampled_from([0x41, 0xFFFD, 0x80, 0x10000, 0x110000, 0x3F])),
                max_size=3))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_alignment_in_c_is_the_pythons(data: bytes, key: tuple[str, str],
                                           edits: list[tuple[int, int, int]]) -> None:
    _same_alignment(data, key, _outputs(data, key, edits))


def test_the_alignment_in_c_declines_what_is_not_a_plain_int() -> None:
    got = screening._screen.align(b"\xc0A", b"\x01\x00", [None, 0x41], [0, 1], [1, 2],
                                  (0xFFFD, -1))
    assert got is NotImplemented
    with pytest.raises(ValueError):
        screening._screen.align(b"A", b"\x00", [0x41], [0], [5], (0x41,))
