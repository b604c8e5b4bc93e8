from utf8fuzz.engine.signature import CLASSES, Signature, failure_feature, feature_of
from utf8fuzz.outcome import Outcome, Token
from utf8fuzz.profiles import get_profile

U = get_profile("unicode")


def err(data: bytes, start: int = 0, end: int | None = None, reason: str = "illegal") -> str:
    return feature_of(data, Token("error", None, start, end or len(data), reason), U)


def test_ill_formed_features_follow_table_3_1b():
    assert err(b"\xc0\x80", end=1) == "non-shortest-form"
    assert err(b"\xe0\x80\x80", end=1) == "non-shortest-form"
    assert err(b"\xf0\x8f\xbf\xbf", end=1) == "non-shortest-form"
    assert err(b"\xed\xa0\x80", end=1) == "surrogate"
    assert err(b"\xf4\x90\x80\x80", end=1) == "above-10ffff"
    assert err(b"\xf5\x80", end=1) == "above-10ffff"
    assert err(b"\xf8\x88\x80\x80\x80", end=1) == "5-byte-form"
    assert err(b"\xfc\x84", end=1) == "6-byte-form"
    assert err(b"\xfe", end=1) == "fe-ff"
    assert err(b"\x80", end=1) == "lone-continuation"
    assert err(b"\xf0\x9f\x98", reason="truncated") == "truncated-4-byte-at-end"
    assert err(b"\xe1\x80A", end=2) == "incomplete-3-byte-sequence"


def test_char_features():
    c = lambda data, cp, prof=U: feature_of(data, Token("char", cp, 0, len(data)), prof)  # noqa: E731
    assert c(b"A", 0x41) == "ascii"
    assert c("é".encode(), 0xE9) == "well-formed-2-byte"
    assert c("\uffff".encode(), 0xFFFF) == "noncharacter"
    assert c("\ufffd".encode(), 0xFFFD) == "replacement-character"
    assert c(b"\xed\xa0\x80", 0xD800, get_profile("rfc2279")) == "surrogate"
    assert c(b"\xc0\x80", 0xA0, get_profile("corrected")) == "corrected-offset-160"
    assert feature_of(b"", None, U) == "empty"


def test_crash_feature_is_the_exception_type_not_the_bytes():
    out = Outcome.failure(3, "crash", "IndexError: index out of range")
    assert failure_feature(out) == "IndexError"
    assert failure_feature(Outcome.failure(3, "timeout", "10 s")) == "timeout"


def test_signature_round_trip_and_id_is_stable():
    s = Signature("unicode", "accepts-ill-formed", "non-shortest-form", ("a:x", "b"))
    assert str(s) == "unicode/accepts-ill-formed/non-shortest-form/a:x+b"
    assert Signature.parse(str(s)) == s
    assert s.id == Signature.parse(str(s)).id and len(s.id) == 16
    assert "crash" in CLASSES


def test_crash_features_name_the_kind_of_crash_not_the_decoder() -> None:
    def feature(detail: str) -> str:
        return failure_feature(Outcome.failure(3, "crash", detail))

    # a worker's or exec client's end, as decoders/_subprocess.py and exec.py word it
    assert feature("plugin:m:f worker killed by SIGSEGV: last line") == "SIGSEGV"
    assert feature("plugin:m:f worker killed by signal 77") == "signal-77"
    assert feature("exec:client exited with status 3: usage") == "exit-3"
    assert feature("plugin:m:f worker closed its output") == "closed-output"
    assert feature("garbage reply from exec:client: id 4, expected 3") == "garbage-reply"
    assert feature("exec:client:strict failed: bad state") == "failed"
    assert feature("oom: plugin:m:f worker ran out of memory") == "oom"
    # an in-process decoder re-run in a fork (loop/recover.py)
    assert feature("SIGABRT: the decoder's process was killed by signal 6") == "SIGABRT"
    assert feature("exit-3: the decoder's process exited with status 3") == "exit-3"
    # an exception's message cannot pose as a death
    assert feature("RuntimeError: killed by SIGSEGV") == "RuntimeError"
    assert feature("KeyError: 'exited with status 1'") == "KeyError"


def test_a_segfault_and_an_abort_in_one_isolated_plugin_are_two_signatures() -> None:
    from utf8fuzz.decoders.plugin import load
    from utf8fuzz.engine.differ import Differ

    dec = load("tests.engine.killers:segfaults_on_fe_aborts_on_ff+timeout=5")
    try:
        differ = Differ([dec])
        sigs = {str(s) for data in (b"A\xfe", b"A\xff") for s in differ.signatures(data)}
    finally:
        dec.close()
    assert {s.split("/")[2] for s in sigs} == {"SIGSEGV", "SIGABRT"}
