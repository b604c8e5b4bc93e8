"""The two-tier differ: screens first, full outcomes on a mismatch and on every Nth
input; what a screen cannot see is still found through that sampling."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from tests.engine.planted import Planted, accepts_c080, planted_c080
from utf8fuzz import decoders
from utf8fuzz import strategies as u8
from utf8fuzz.cli import main
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.engine.differ import Differ
from utf8fuzz.engine.screening import screen_of
from utf8fuzz.loop.finder import FULL_EVERY, FULL_EVERY_ENV, Finder, full_every_default
from utf8fuzz.loop.run import fuzz
from utf8fuzz.outcome import Outcome

SEEDS = Path(__file__).resolve().parents[2] / "corpus" / "seeds"


def _replace(data: bytes) -> tuple[int, ...]:
    return tuple(map(ord, data.decode("utf-8", "replace")))


def _spans(data: bytes) -> tuple[tuple[int, int], ...]:
    spans: list[tuple[int, int]] = []
    pos = 0
    while pos < len(data):
        try:
            data[pos:].decode("utf-8")
            break
        except UnicodeDecodeError as e:
            spans.append((pos + e.start, pos + e.end))
            pos += e.end
    return tuple(spans)


class ShortSpans(Decoder):
    """Planted: right replace output, but every error span longer than one byte is
    reported one byte short. Its screen shows replace only (honestly: the replace
    view of its full outcome), so the bug is visible only in full outcomes."""

    name = "planted:short-spans"
    shows = frozenset({"replace", "spans"})

    def __init__(self) -> None:
        self.screens = self.decodes = 0

    def run(self, data: bytes) -> Outcome:
        self.decodes += 1
        spans = tuple((s, e - 1 if e - s > 1 else e) for s, e in _spans(data))
        return Outcome.partial(len(data), replace=_replace(data), spans=spans)

    def screen(self, data: bytes) -> dict[str, Any] | None:
        self.screens += 1
        return {"replace": _replace(data)}


class ScreenedC080(Planted):
    """Planted accepts-c080 whose screen shows the bug (the same replace view)."""

    def __init__(self) -> None:
        super().__init__("planted:screened-c080", accepts_c080)

    def screen(self, data: bytes) -> dict[str, Any] | None:
        return {"replace": tuple(map(ord, accepts_c080(data)))}


class StrictC080(Decoder):
    """Planted: replace right, but its strict view calls C0 80 valid - the same class
    and feature as accepts-c080, shown only in full outcomes."""

    name = "planted:strict-c080"
    shows = frozenset({"replace", "strict"})

    def run(self, data: bytes) -> Outcome:
        first = _spans(data.replace(b"\xc0\x80", b"\x00\x00"))
        return Outcome.partial(len(data), replace=_replace(data),
                               strict=first[0] if first else None)

    def screen(self, data: bytes) -> dict[str, Any] | None:
        return {"replace": _replace(data)}


class Raises(Decoder):
    name = "planted:screen-raises"
    shows = frozenset({"replace"})

    def run(self, data: bytes) -> Outcome:
        raise KeyError("planted full-path crash")

    def screen(self, data: bytes) -> dict[str, Any] | None:
        raise ValueError("a screen that raises")


SHORT = "unicode/different-error-offset/truncated-3-byte-at-end/planted:short-spans"


def test_full_every_1_never_screens():
    d = ShortSpans()
    differ = Differ([d])
    for _ in range(3):
        res = differ.run(b"\xe1\x80")
        assert res.full and res.signatures == {SHORT}
    assert d.screens == 0 and differ.screened == 0


def test_full_every_n_decodes_the_first_and_every_nth_input_in_full():
    d = ShortSpans()
    differ = Differ([d], full_every=4)
    found = [bool(differ.run(b"\xe1\x80").divergences) for _ in range(9)]
    # the bug shows only in spans, which the screen leaves out: seen in full runs only
    assert found == [True, False, False, False, True, False, False, False, True]
    assert differ.screened == 6 and d.decodes == 3


def test_a_screened_agreement_records_what_was_observed():
    d = ShortSpans()
    differ = Differ([d], full_every=2)
    differ.run(b"A")  # the full one
    res = differ.run(b"A\xe1\x80")
    assert not res.full and not res.divergences
    out = res.outcomes[d.name]
    assert out.shows == {"replace"} and out.view("replace") == (0x41, 0xFFFD)
    assert res.outcomes["ref:unicode:maximal-subpart"].tokens_  # references always full


def test_a_screen_mismatch_decodes_in_full_with_the_same_divergence():
    full = Differ([ScreenedC080()]).run(b"A\xc0\x80")
    differ = Differ([ScreenedC080()], full_every=100)
    differ.run(b"")
    res = differ.run(b"A\xc0\x80")
    assert not res.full and res.divergences == full.divergences
    assert res.outcomes["planted:screened-c080"] == full.outcomes["planted:screened-c080"]


def test_signatures_and_forced_runs_are_always_full():
    differ = Differ([ShortSpans()], full_every=1000)
    differ.run(b"")
    assert differ.signatures(b"\xe1\x80") == {SHORT}
    assert differ.run(b"\xe1\x80", full=True).signatures == {SHORT}
    assert not differ.run(b"\xe1\x80").divergences  # screened: the counter did not move


def test_a_raising_screen_falls_back_to_the_full_path_and_its_crash():
    differ = Differ([Raises()], full_every=1000)
    differ.run(b"A")
    res = differ.run(b"B")
    assert res.outcomes["planted:screen-raises"].status == "crash"
    assert res.signatures == {"unicode/crash/KeyError/planted:screen-raises"}


def test_a_screen_with_no_view_this_differ_compares_is_no_agreement():
    d = ShortSpans()
    differ = Differ([d], views={"spans"}, full_every=1000)
    differ.run(b"A")
    assert differ.run(b"\xe1\x80").signatures == {SHORT}


def test_finder_reruns_in_full_before_naming_a_new_signature(tmp_path):
    # Screened, only screened-c080 differs; in full strict-c080 differs the same way,
    # and is named too (each decoder its own signature).
    f = Finder([ScreenedC080(), StrictC080()], tmp_path, "manual", minimize_seconds=1,
               full_every=1000)
    f.consider(b"A")
    assert not f.differ.run(b"\xc0\x80").full
    f.consider(b"\xc0\x80")
    assert sorted(x.signature for x in f.found) == [
        "unicode/accepts-ill-formed/non-shortest-form/planted:screened-c080",
        "unicode/accepts-ill-formed/non-shortest-form/planted:strict-c080"]
    assert all(x.input == b"\xc0\x80" for x in f.found)


def test_the_fuzz_loop_finds_a_bug_its_screen_cannot_see(tmp_path):
    shutil.copytree(SEEDS, tmp_path / "seeds")
    r = fuzz([ShortSpans(), planted_c080()], engine="hypothesis", runs=300, seed=1,
             seconds=120, corpus=tmp_path, full_every=8)
    assert r["full_every"] == 8
    sigs = {x["signature"] for x in r["new"]}
    assert any(s.endswith("/planted:short-spans") for s in sigs), sigs
    assert "unicode/accepts-ill-formed/non-shortest-form/planted:accepts-c080" in sigs


REAL = Differ([d for d in decoders.available() if d.profile in ("unicode", "cesu8", "corrected")
               and screen_of(d) is not None])
REAL_SCREENED = Differ(REAL.decoders, full_every=1_000_000)
REAL_SCREENED.run(b"")


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(u8.inputs("unicode"))
def test_screening_real_decoders_reports_a_subset_of_the_full_differences(data):
    full = {x.decoder: x for d in REAL.run(data).divergences for x in d.differences}
    res = REAL_SCREENED.run(data)
    assert not res.full
    for div in res.divergences:
        for x in div.differences:
            # the same difference, from the same full outcome (incremental relabelling
            # aside: whether a sibling differs may depend on screening)
            y = full[x.decoder]
            assert (x.feature, x.offset, x.view, x.detail) == (
                y.feature, y.offset, y.view, y.detail)
            assert x.klass == y.klass or "incremental-differs" in (x.klass, y.klass)
    # a decoder that differs only in full differs at a view its screen does not show
    screened = {x.decoder for d in res.divergences for x in d.differences}
    for name in set(full) - screened:
        assert full[name].view not in res.outcomes[name].shows


def test_full_every_default_and_env(monkeypatch):
    monkeypatch.delenv(FULL_EVERY_ENV, raising=False)
    assert full_every_default() == FULL_EVERY == 8
    monkeypatch.setenv(FULL_EVERY_ENV, "3")
    assert full_every_default() == 3
    assert Finder([], None, "manual").differ.full_every == 3
    monkeypatch.setenv(FULL_EVERY_ENV, "0")
    with pytest.raises(ValueError, match="positive integer"):
        full_every_default()
    with pytest.raises(ValueError):
        Differ([], full_every=0)


def test_cli_full_every_usage_errors(capsys, monkeypatch, tmp_path):
    assert main(["fuzz", "--full-every", "0", "--time", "1"]) == 2
    monkeypatch.setenv(FULL_EVERY_ENV, "x")
    assert main(["fuzz", "--engine", "hypothesis", "--time", "1", "--decoder",
                 "cpython:strict", "--corpus", str(tmp_path), "--no-report"]) == 2
    err = capsys.readouterr().err
    assert "--full-every must be at least 1" in err and FULL_EVERY_ENV in err


class CompleteC080(ScreenedC080):
    """The same bug, with a screen that is its whole outcome (``screen_is_whole``)."""

    screen_is_whole = True

    def __init__(self) -> None:
        super().__init__()
        self.name = "planted:complete-c080"
        self.decodes = 0

    def run(self, data: bytes) -> Outcome:
        self.decodes += 1
        return super().run(data)


def test_a_whole_views_is_judged_as_it_is_and_never_sampled_in_full():
    full = Differ([CompleteC080()]).run(b"A\xc0\x80")
    d = CompleteC080()
    differ = Differ([d], full_every=2)
    first = differ.run(b"A\xc0\x80")  # a sampled input: the screen still answers
    second = differ.run(b"A\xc0\x80")  # a screened input, the screen disagreeing
    assert d.decodes == 0
    assert first.full and not second.full
    assert first.divergences == second.divergences == full.divergences
    assert second.outcomes[d.name].view("replace") == full.outcomes[d.name].view("replace")
    differ.run(b"A\xc0\x80", full=True)  # forced: a full decode, as the minimizer needs
    assert d.decodes == 1


class StrictOnlyWrongText(Decoder):
    """Planted: a strict-style decoder (it declares only ``strict``, as iconv and
    mutf8 do) whose text on input it accepts has 'A' as 'B'. Its complete screen
    gives that text, as its full outcome does."""

    name = "planted:strict-only-wrong-text"
    shows = frozenset({"strict"})
    screen_is_whole = True

    def run(self, data: bytes) -> Outcome:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            return Outcome.partial(len(data), strict=(e.start, e.end))
        cps = tuple(0x42 if c == "A" else ord(c) for c in text)
        return Outcome.partial(len(data), strict=None, spans=(), replace=cps, ignore=cps,
                               escape=cps)

    def screen(self, data: bytes) -> dict[str, Any] | None:
        out = self.run(data)
        return {v: out.view(v) for v in out.shows}


def test_a_whole_views_is_compared_at_every_view_it_gives():
    """Not only at the views its decoder declares: the text a strict decoder gives on
    valid input is compared on screened inputs too (it once was not)."""
    d = StrictOnlyWrongText()
    differ = Differ([d], full_every=1000)
    differ.run(b"xAy")  # the first input is sampled in full
    screened = differ.run(b"xAy")
    assert not screened.full
    assert screened.signatures == {"unicode/different-code-point/ascii/" + d.name}
    assert screened.signatures == Differ([d]).run(b"xAy", full=True).signatures


class CompletingStrictC080(StrictC080):
    """StrictC080 with a complete screen besides its partial one
    (``Decoder.whole_views``): its full outcome, as the fast path's C gives it."""

    def __init__(self) -> None:
        self.name = "planted:completing-strict-c080"
        self.decodes = self.completes = 0

    def run(self, data: bytes) -> Outcome:
        self.decodes += 1
        return super().run(data)

    def whole_views(self, data: bytes) -> dict[str, Any] | None:
        self.completes += 1
        out = super().run(data)
        return {v: out.view(v) for v in out.shows}


def test_a_whole_views_stands_in_for_the_sampled_full_decode():
    d = CompletingStrictC080()
    differ = Differ([d], full_every=2)
    sampled = differ.run(b"A\xc0\x80")  # the strict view shows the bug: found there
    screened = differ.run(b"A\xc0\x80")  # the partial screen (replace) agrees
    assert (d.completes, d.decodes) == (1, 0)
    assert sampled.full and not screened.full
    assert sampled.signatures == Differ([CompletingStrictC080()]).run(
        b"A\xc0\x80", full=True).signatures != set()
    assert not screened.signatures  # as with any partial screen
    assert sampled.outcomes[d.name].view("strict") is None  # the planted bug
    differ.run(b"A\xc0\x80", full=True)  # forced: a full decode, as the minimizer needs
    assert (d.completes, d.decodes) == (1, 1)
