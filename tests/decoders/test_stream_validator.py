"""The ``+stream-validator`` plug-in shape: an object made by the target, fed the
chunks of the one split rule (``utf8fuzz.decoders.chunks``) then its end check, and
its one-shot sibling; in process and in the worker, from the command line and from
an entry point; its spec words, and every bad spec one line.

Expected acceptance comes from CPython's codec (a real decoder), never from the
adapter under test.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.decoders.test_streaming import findings, seeded_inputs
from tests.engine.planted_stream_validators import END_TRIGGER, SPLIT_TRIGGER
from utf8fuzz.cli import main
from utf8fuzz.decoders import UnknownDecoder, plugin, resolve
from utf8fuzz.decoders.chunks import chunks
from utf8fuzz.decoders.spec import StreamMethods, parse
from utf8fuzz.engine.differ import Differ

M = "tests.engine.planted_stream_validators"
#: CPython's incremental decoder as a stream validator, in its own words.
CODECS = ("encodings.utf_8:IncrementalDecoder+stream-validator+feed=decode+final=final"
          "+raises")


def _valid(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.fixture
def loaded():
    opened: list = []

    def load(spec: str) -> list:
        decs = resolve(spec)
        opened.extend(decs)
        return decs

    yield load
    for d in opened:
        d.close()


# -- the words -------------------------------------------------------------------------


@pytest.mark.parametrize(("spec", "methods"), [
    ("m:C+stream-validator", StreamMethods("validate", "final", None, False)),
    ("m:C+feed=push+stream-validator+end=done", StreamMethods("push", "done", None, False)),
    ("m:C@unicode+stream-validator+final=last+raises+feed=decode",
     StreamMethods("decode", None, "last", True)),
])
def test_the_words_say_how_the_object_is_called(spec, methods):
    s = parse(spec)
    assert (s.shape, s.stream) == ("stream-validator", methods)
    assert parse("m:C+validator").stream is None


@pytest.mark.parametrize(("spec", "says"), [
    ("m:C+validator+feed=push", "+feed is a word of the +stream-validator shape"),
    ("m:C+raises", "+raises is a word of the +stream-validator shape"),
    ("m:C+stream-validator+end=a+final=b", "+end= and +final= are two ends"),
    ("m:C+stream-validator+feed=a+feed=b", "+feed given twice"),
    ("m:C+stream-validator+feed=1x", "+feed= names a method or keyword"),
    ("m:C+stream-validator+end", "bad decoder option +end"),
    ("m:C+stream-validator+raises=1", "bad decoder option +raises=1"),
    ("m:C+stream-validator+replace", "error modes (+replace) are for the codec shape"),
])
def test_a_bad_stream_spec_is_one_line(spec, says):
    with pytest.raises(UnknownDecoder) as e:
        parse(spec)
    assert says in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(("spec", "says"), [
    (f"{M}:NoEnd+stream-validator", "has no method 'final' (name it with +end=NAME)"),
    (f"{M}:Correct+stream-validator+feed=push", "has no method 'push'"),
    (f"{M}:SaysNone+stream-validator", "validate() returned NoneType; add +raises"),
    (f"{M}:Correct+stream-validator+final=last",
     "got an unexpected keyword argument 'last'"),
    (f"{M}:NeedsAnArgument+stream-validator", "making its object failed: TypeError"),
])
@pytest.mark.parametrize("opt", ["+inprocess", ""])
def test_a_decoder_not_of_its_declared_shape_is_one_line_and_exit_2(spec, says, opt, capsys):
    # found at load, in the worker too, before anything is fuzzed
    assert main(["diff", "--decoder", spec + opt, "41"]) == 2
    out, err = capsys.readouterr()
    assert len(err.splitlines()) == 1 and err.startswith("utf8fuzz diff: "), err
    assert says in err and not out


# -- the decoders a spec gives ------------------------------------------------------------


@pytest.mark.parametrize("opt", ["+inprocess", ""])
def test_a_streaming_decoder_and_its_one_shot_sibling(opt, loaded):
    decs = loaded(f"{M}:Correct@unicode/per-byte+stream-validator{opt}")
    base = f"plugin:{M}:Correct"
    assert [d.name for d in decs] == [f"{base}@unicode/per-byte",
                                      f"{base}:oneshot@unicode/per-byte"]
    assert [d.incremental for d in decs] == [True, False]
    assert {d.family for d in decs} == {base}
    assert {d.shows for d in decs} == {frozenset({"accept"})}
    assert {d.policy for d in decs} == {"per-byte"}
    for d in decs:  # its spec loads it again
        assert [x.name for x in loaded(d.spec or "")].count(d.name) == 1
    for x in (b"", SPLIT_TRIGGER, END_TRIGGER, b"\xff", "h\u00e9\u20ac\U0001f600".encode()):
        assert [d.decode(x).view("accept") for d in decs] == [_valid(x)] * 2, x.hex(" ")


class _Recorder:
    """Every call it is given, in order, into :data:`_calls`; says no to ``FF``."""

    def validate(self, chunk: bytes, last: bool = False) -> bool:
        _calls.append(("validate", chunk, last))
        return b"\xff" not in chunk

    def done(self) -> bool:
        _calls.append(("done",))
        return True


_calls: list[tuple] = []


def test_it_is_fed_the_rules_chunks_then_ended_and_stops_at_the_first_no(loaded):
    data = bytes.fromhex("41 F2 90 80 80 42 C3 A9")
    streaming, oneshot = loaded(f"{__name__}:_Recorder+stream-validator+end=done+inprocess")
    _calls.clear()
    assert streaming.decode(data).view("accept") is True
    assert _calls == [*(("validate", c, False) for c in chunks(data)), ("done",)]
    assert len(_calls) > 3  # the rule cut it
    _calls.clear()
    assert oneshot.decode(data).view("accept") is True
    assert _calls == [("validate", data, False), ("done",)]
    _calls.clear()
    assert oneshot.decode(b"").view("accept") is True
    assert _calls == [("done",)]  # no chunk for an empty input
    _calls.clear()
    bad = bytes.fromhex("41 42 FF 43 44 45")
    assert streaming.decode(bad).view("accept") is False
    assert _calls == [("validate", c, False) for c in chunks(bad)[:2]]  # no call after a no
    # the final keyword instead of an end method: b"" with it true ends the stream
    streaming, _ = loaded(f"{__name__}:_Recorder+stream-validator+final=last+inprocess")
    _calls.clear()
    assert streaming.decode(data).view("accept") is True
    assert _calls == [*(("validate", c, False) for c in chunks(data)), ("validate", b"", True)]


def test_a_non_bool_answer_later_is_a_crash_that_names_the_shape(loaded):
    (streaming, _) = loaded(f"{M}:Correct+stream-validator+inprocess")
    streaming.fn = lambda: type("Odd", (), {"validate": lambda s, c: "yes",
                                            "final": lambda s: True})()
    out = streaming.decode(b"A")
    assert out.status == "crash" and "stream-validator shape" in (out.detail or "")


# -- judged: correct ones find nothing, planted bugs are found ------------------------------


@pytest.mark.parametrize("spec", [f"{M}:Correct+stream-validator", CODECS])
@pytest.mark.parametrize("opt", ["+inprocess", ""])
def test_a_correct_stream_validator_finds_nothing(spec, opt, loaded):
    assert findings(loaded(spec + opt), seeded_inputs(1000)) == {}


@pytest.mark.parametrize("opt", ["+inprocess", ""])
def test_a_lost_split_sequence_is_incremental_differs_of_the_streaming_one(opt, loaded):
    decs = loaded(f"{M}:LosesSplitSequence+stream-validator{opt}")
    for x in (SPLIT_TRIGGER, bytes.fromhex("41 C2 41")):  # rejects well-formed; accepts not
        assert chunks(x)[0].endswith(b"\xc2")  # a chunk ends after C2
        result = Differ(decs).run(x, full=True)
        diffs = [d for dv in result.divergences for d in dv.differences]
        assert [(d.decoder, d.klass) for d in diffs] == [(decs[0].name, "incremental-differs")]
        assert [d.decode(x).view("accept") for d in decs] == [not _valid(x), _valid(x)]


@pytest.mark.parametrize("opt", ["+inprocess", ""])
def test_a_missing_end_check_is_the_same_difference_in_both(opt, loaded):
    decs = loaded(f"{M}:ForgetsEndCheck+stream-validator{opt}")
    result = Differ(decs).run(END_TRIGGER, full=True)
    diffs = [d for dv in result.divergences for d in dv.differences]
    assert sorted((d.decoder, d.klass) for d in diffs) == [
        (d.name, "accepts-ill-formed") for d in decs]


# -- utf8fuzz decoders: entry points --------------------------------------------------------


def test_entry_points_of_the_shape_are_listed_and_bad_ones_say_why(tmp_path: Path,
                                                                   monkeypatch):
    (tmp_path / "sv_mod.py").write_text(textwrap.dedent(f"""
        from {M} import Correct, NoEnd
    """))
    dist = tmp_path / "sv_plug-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: sv-plug\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[utf8fuzz.decoders]\nsv@unicode/per-byte+stream-validator = sv_mod:Correct\n"
        "sv_bad+stream-validator = sv_mod:NoEnd\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = plugin.discover()
    ok = {d.name: d for d in found if not isinstance(d, plugin.Unavailable)}
    missing = {u.name: u.reason for u in found if isinstance(u, plugin.Unavailable)}
    try:
        assert set(ok) == {"plugin:sv", "plugin:sv:oneshot"}
        assert [ok[n].incremental for n in ("plugin:sv", "plugin:sv:oneshot")] == [True, False]
        assert {d.policy for d in ok.values()} == {"per-byte"}
        assert [ok[n].decode(SPLIT_TRIGGER).view("accept")
                for n in ("plugin:sv", "plugin:sv:oneshot")] == [True, True]
    finally:
        for d in ok.values():
            d.close()
    assert "has no method 'final'" in missing["plugin:sv_bad"]
