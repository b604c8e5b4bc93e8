"""Every outcome a decoder returns is checked where the differ receives it: spans
inside the input and in order, code points in 0..U+8421109F, no view longer than
``output_bound``. A violation is one ``bad-outcome`` finding named by its kind,
never a divergence at a view; a correct decoder is never judged by a guess."""

from __future__ import annotations

import itertools
import json

import pytest

from tests.cli.hostile import assert_no_raw, run
from utf8fuzz.decoders import plugin
from utf8fuzz.engine.differ import Differ
from utf8fuzz.outcome import Outcome, Token, check, checked, output_bound, pack_tokens

HOSTILE = "tests.hostile.hostile_decoders"
FE = b"A\xfeB"


@pytest.mark.parametrize(("out", "kind"), [
    (Outcome.partial(3, strict=(-1, 2)), "span-outside-input"),
    (Outcome.partial(3, spans=((0, 4),)), "span-outside-input"),
    (Outcome.partial(3, spans=((2, 2),)), "span-outside-input"),
    (Outcome.partial(3, spans=((2, 3), (0, 1))), "spans-out-of-order"),
    (Outcome.partial(3, replace=(-5, 65)), "code-point-out-of-range"),
    (Outcome.partial(3, ignore=(0x842110A0,)), "code-point-out-of-range"),
    (Outcome.partial(3, replace="A" * (output_bound(3) + 1)), "oversized-output"),
    (Outcome.partial(2, strict=None), "span-outside-input"),  # not this input's length
])
def test_a_violation_is_named_by_its_kind(out: Outcome, kind: str) -> None:
    why = check(out, 3)
    assert why is not None and why.startswith(kind + ": ")
    bad = checked(out, 3)
    assert bad.status == "bad-outcome" and bad.detail is not None
    assert bad.detail.startswith(kind + ": ")


def test_screens_dicts_and_packed_tokens_are_checked_too() -> None:
    toks = (Token("char", 65, 0, 1), Token("error", None, 1, 9, "illegal"))
    assert check({"tokens": pack_tokens(toks)}, 3) is not None
    assert check({"replace": (0x7FFFFFFF,) * output_bound(3)}, 3) is None
    assert check({"replace": (65,) * (output_bound(3) + 1)}, 3) is not None


def test_what_is_an_outcome_of_its_input_passes_as_it_is() -> None:
    for out in (Outcome.partial(3, strict=(1, 2), spans=((1, 2),), replace="A\ufffdB"),
                Outcome.partial(0, strict=None, replace=()),
                Outcome.failure(3, "crash", "IndexError: x")):
        assert checked(out, len(FE) if out.length else 0) is out


def test_a_failure_detail_is_cut() -> None:
    got = checked(Outcome.failure(3, "crash", "x" * 10_000), 3)
    assert got.status == "crash" and len(got.detail or "") <= 500


@pytest.mark.parametrize(("shape", "kind"), [
    ("huge_text+text", "oversized-output"),
    ("spans_outside+outcome", "span-outside-input"),
    ("negative_code_points+outcome", "code-point-out-of-range"),
    ("mutates", "mutated-input"),
])
@pytest.mark.parametrize("screened", [False, True])
def test_a_bad_outcome_is_one_crash_like_divergence(shape: str, kind: str,
                                                    screened: bool) -> None:
    (d,) = plugin.load_all(f"{HOSTILE}:{shape}+inprocess")
    differ = Differ([d], full_every=2 if screened else 1)
    results = differ.run_many([FE, FE]) if screened else [differ.run(FE, full=True)]
    for r in results:
        (div,) = r.divergences
        assert (div.signature.klass, div.signature.feature) == ("bad-outcome", kind)
        assert str(div.signature) == f"unicode/bad-outcome/{kind}/{d.name}"
        assert r.outcomes[d.name].status == "bad-outcome"
    # its input is the caller's still (a decoder gets a copy of its own)
    assert FE == b"A\xfeB"


def test_an_isolated_decoders_outcome_is_checked_as_it_comes_back() -> None:
    (d,) = plugin.load_all(f"{HOSTILE}:negative_code_points+outcome")
    try:
        (div,) = Differ([d]).run(FE, full=True).divergences
        assert div.signature.feature == "code-point-out-of-range"
        (res,) = Differ([d], defer_out_of_process=True).run_out_of_process([FE])
        (div,) = res.divergences
        assert div.signature.feature == "code-point-out-of-range"
    finally:
        d.close()


# A chunk boundary inside a sequence, then an error: where a decoder holds bytes back.
INPUTS = [b"".join(t) for n in (2, 3, 4) for t in itertools.product(
    [b"A", b"\xe2", b"\x82", b"\xac", b"\xf0", b"\x9f", b"\xfe"], repeat=n)]


@pytest.mark.parametrize("factory", ["NoGetstate", "Opaque"])
def test_a_correct_incremental_decoder_whose_getstate_raises_gives_no_finding(
        factory: str) -> None:
    decs = plugin.load_all(f"{HOSTILE}:{factory}+incremental+inprocess")
    differ = Differ(decs)
    found = {str(x.signature) for data in INPUTS
             for x in differ.run(data, full=True).divergences}
    assert found == set()


def test_diff_of_an_oversized_output_prints_and_writes_nothing_oversized() -> None:
    p = run("diff", "--json", "--decoder", f"{HOSTILE}:huge_text+text+inprocess", FE.hex())
    assert p.returncode == 0, p.stderr
    assert len(p.stdout) < 100_000 and "Traceback" not in p.stderr
    out = json.loads(p.stdout)
    (name,) = [n for n in out["decoders"] if "huge_text" in n]
    assert out["decoders"][name]["status"] == "bad-outcome"
    (div,) = out["divergences"]
    assert div["signature"].startswith("unicode/bad-outcome/oversized-output/")


def test_diff_of_a_long_input_checks_what_it_summarizes() -> None:
    # over diff's summary size, decoders run one at a time (commands/diff.py)
    data = b"A" * 5000 + b"\xfe"
    p = run("diff", "--json", "--decoder", f"{HOSTILE}:spans_outside+outcome+inprocess",
            "--decoder", "cpython:strict", data.hex())
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)["decoders"]
    (mine,) = [v for k, v in got.items() if "spans_outside" in k]
    assert mine["status"] == "bad-outcome"
    assert mine["detail"].startswith("span-outside-input: ")
    assert_no_raw(p)
