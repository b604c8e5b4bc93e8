import json

import pytest

from tests.engine import handmade
from tests.engine.planted import Planted, accepts_c080, planted_c080
from utf8fuzz import decoders
from utf8fuzz.engine import replay
from utf8fuzz.engine.corpus import load
from utf8fuzz.loop.finder import Finder


def utf8_replace(b):
    return b.decode("utf-8", "replace")


@pytest.fixture
def entry_path(tmp_path):
    cp = decoders.resolve("cpython:replace")
    f = Finder([planted_c080(), *cp], tmp_path, "manual", minimize_seconds=2)
    f.consider(b"A\xc0\x80")
    (x,) = f.found
    assert "cpython:replace" in x.sidecar["outcomes"]
    return x.path


def entry(path):
    (e,) = [e for e in load(path.parent.parent)[0] if e.path == path]
    return e


def edit(path, fn):
    side = json.loads(path.read_text())
    fn(side)
    path.write_text(json.dumps(side))


def verdict(path, name, extra=()):
    return {v.decoder: v for v in replay.replay_entry(entry(path), extra)}[name]


def owned(name, fn):
    """The user's own decoder (what the pytest plugin's --utf8fuzz-decoder gives)."""
    return Planted(name, fn)


def test_external_decoder_with_recorded_behaviour_passes(entry_path):
    v = verdict(entry_path, "cpython:replace")
    assert v.status == "pass" and not v.notes
    assert verdict(entry_path, "planted:accepts-c080").status == "skip"


def test_new_version_same_behaviour_passes_with_a_note(entry_path):
    edit(entry_path, lambda s: s["outcomes"]["cpython:replace"]["versions"].update(
        python="2.7.0"))
    v = verdict(entry_path, "cpython:replace")
    assert v.status == "pass" and "version changed" in v.notes[0] and "2.7.0" in v.notes[0]


def test_changed_behaviour_fails_plainly(entry_path):
    def tamper(s):
        s["outcomes"]["cpython:replace"]["outcome"]["views"]["replace"] = [0x41, 0]
    edit(entry_path, tamper)
    v = verdict(entry_path, "cpython:replace")
    assert v.status == "fail"
    assert "behaviour of cpython:replace changed" in v.message
    assert "now agrees with the reference" in v.message


def test_changed_reference_expectation_fails(entry_path):
    edit(entry_path, lambda s: s["expectation"]["substitute"]["output"].append("U+0041"))
    assert verdict(entry_path, "ref:unicode:maximal-subpart").status == "fail"


def test_each_decoder_checked_once_reference_first_then_recorded_then_the_callers(entry_path):
    mine = owned("mine", utf8_replace)
    same = owned("planted:accepts-c080", utf8_replace)  # recorded: checked once, as owned
    other = Planted("mine:corrected", utf8_replace, profile="corrected")
    assert replay.checks(entry(entry_path), [mine, same, other]) == [
        "ref:unicode:maximal-subpart", "cpython:replace", "planted:accepts-c080", "mine"]


def test_owned_decoder_open_finding_is_open_then_fixed(entry_path):
    buggy = owned("planted:accepts-c080", accepts_c080)
    v = verdict(entry_path, "planted:accepts-c080", [buggy])
    assert v.status == "open"
    assert "open finding unicode/accepts-ill-formed/non-shortest-form/planted:accepts-c080" \
        in v.message
    fixed = owned("planted:accepts-c080", utf8_replace)
    v = verdict(entry_path, "planted:accepts-c080", [fixed])
    assert v.status == "fixed" and "corpus refresh" in v.message


def test_project_decoder_open_finding_is_open(entry_path, monkeypatch):
    # Decoder.own (this project's, e.g. the fast path): owned without being given
    buggy = Planted("planted:accepts-c080", accepts_c080)
    buggy.own = True
    real = decoders.trusted
    monkeypatch.setattr(decoders, "trusted", lambda name, given=(): buggy if name.startswith(
        "planted") else real(name, given))
    assert verdict(entry_path, "planted:accepts-c080").status == "open"


def test_owned_decoder_recorded_as_meeting_the_expectation_regresses(entry_path):
    # cpython:replace met the expectation when the entry was recorded; as the
    # caller's own, diverging now is a regression, not an open finding
    v = verdict(entry_path, "cpython:replace", [owned("cpython:replace", accepts_c080)])
    assert v.status == "fail" and v.message.startswith("regressed: cpython:replace met")


def test_owned_decoder_recorded_fixed_that_diverges_again_regresses(entry_path):
    edit(entry_path, lambda s: s.update(fixed={"planted:accepts-c080": {
        "at": "2026-11-20T00:00:00Z", "versions": {}}}))
    buggy = owned("planted:accepts-c080", accepts_c080)
    v = verdict(entry_path, "planted:accepts-c080", [buggy])
    assert v.status == "fail"
    assert v.message.startswith("regressed: planted:accepts-c080 was recorded fixed "
                                "(2026-11-20T00:00:00Z)")
    fixed = owned("planted:accepts-c080", utf8_replace)
    assert verdict(entry_path, "planted:accepts-c080", [fixed]).status == "pass"


def test_unreadable_fixed_fails_rather_than_hiding_a_regression(entry_path):
    edit(entry_path, lambda s: s.update(fixed=["planted:accepts-c080"]))
    buggy = owned("planted:accepts-c080", accepts_c080)
    v = verdict(entry_path, "planted:accepts-c080", [buggy])
    assert v.status == "fail" and "'fixed'" in v.message


def test_unrecorded_owned_decoder_must_meet_the_expectation(entry_path):
    v = verdict(entry_path, "mine", [owned("mine", accepts_c080)])
    assert v.status == "fail" and "mine does not meet the expectation" in v.message
    assert verdict(entry_path, "mine", [owned("mine", utf8_replace)]).status == "pass"


def test_refresh_records_each_fix_once_keeping_every_other_key(entry_path):
    before = json.loads(entry_path.read_text())
    corpus = entry_path.parent.parent
    buggy = owned("planted:accepts-c080", accepts_c080)
    assert replay.refresh(corpus, [buggy]) == []  # still open: nothing to record
    fixed = owned("planted:accepts-c080", utf8_replace)
    assert [names for _, names in replay.refresh(corpus, [fixed], dry_run=True)] == [
        ["planted:accepts-c080"]]
    assert json.loads(entry_path.read_text()) == before  # a dry run writes nothing
    (done,) = replay.refresh(corpus, [fixed])
    assert done[1] == ["planted:accepts-c080"]
    after = json.loads(entry_path.read_text())
    mark = after.pop("fixed")["planted:accepts-c080"]
    assert after == before
    assert mark["at"].endswith("Z") and mark["versions"] == {"planted": "1"}
    assert mark["environment"]["utf8fuzz"]
    assert replay.refresh(corpus, [fixed]) == []  # recorded already
    assert not list(corpus.rglob("*.tmp"))
    v = verdict(entry_path, "planted:accepts-c080", [buggy])
    assert v.status == "fail" and v.message.startswith("regressed")


def test_refresh_leaves_an_entry_replaced_meanwhile_alone(entry_path, monkeypatch):
    corpus = entry_path.parent.parent
    real = replay.check

    def check_then_replace(e, name, extra=()):
        v = real(e, name, extra)
        edit(entry_path, lambda s: s.update(input="41"))  # what a fuzz worker may do
        return v

    monkeypatch.setattr(replay, "check", check_then_replace)
    assert replay.refresh(corpus, [owned("planted:accepts-c080", utf8_replace)]) == []
    assert "fixed" not in json.loads(entry_path.read_text())


def test_prune_never_removes_a_regression_test_of_an_owned_decoder(tmp_path, monkeypatch):
    # Each entry names a decoder under a signature nothing gives any more on its
    # input (what fixing the decoder does); only the external one goes.
    external = handmade.save(tmp_path, "ValueError", b"\xc0\x80", decoder="cpython:replace")
    ours = handmade.save(tmp_path, "ValueError", b"\xc0\x81", decoder="fast:unicode")
    marked = handmade.save(tmp_path, "ValueError", b"\xc0\x82", decoder="cpython:strict",
                           fixed={"cpython:strict": {"at": "2026-11-20T00:00:00Z"}})
    rec = {"profile": "unicode", "policy": "maximal-subpart", "own": False,
           "spec": "tests.engine.planted:accepts_c080+inprocess"}
    plugin = handmade.sidecar("ValueError", b"\xc0\x83",
                              decoder="plugin:tests.engine.planted:accepts_c080")
    plugin["outcomes"]["plugin:tests.engine.planted:accepts_c080"] = {
        **rec, "outcome": plugin["outcomes"]["ref:unicode:maximal-subpart"]["outcome"]}
    from utf8fuzz.engine import corpus

    mine, _ = corpus.save(tmp_path, plugin, b"\xc0\x83")
    monkeypatch.chdir(replay.Path(__file__).resolve().parents[2])  # the plug-in imports
    assert {e.path for e in load(tmp_path)[0]} == {external, ours, marked, mine}
    assert [e.path for e in replay.prune(tmp_path)] == [external]
    assert ours.exists() and marked.exists() and mine.exists()
