import json

from utf8fuzz.cli import main
from utf8fuzz.decoders.reference import Reference
from utf8fuzz.engine.expect import check_outcome, expectation, expected_outcome
from utf8fuzz.outcome import Outcome


def test_modes_offsets_and_reasons():
    e = expectation(bytes.fromhex("41 C0 80 F0 9F 98"))
    assert e["substitute"]["output"] == ["U+0041", "U+FFFD", "U+FFFD", "U+FFFD"]
    assert e["substitute"]["offsets"] == [0, 1, 2, 3]
    assert [x["reason"] for x in e["substitute"]["errors"]] == ["illegal", "illegal", "truncated"]
    assert e["skip"]["output"] == ["U+0041"] and e["skip"]["offsets"] == [0]
    assert e["stop"] == {"output": ["U+0041"], "offsets": [0],
                         "error": {"offset": 1, "bytes": "C0", "reason": "illegal"}}


def test_impossible_prefix_at_end_is_illegal_not_truncated():
    for h in ("E0 80", "ED A0"):
        assert expectation(bytes.fromhex(h))["stop"]["error"]["reason"] == "illegal"
    assert expectation(bytes.fromhex("E1 80"))["stop"]["error"]["reason"] == "truncated"


def test_expected_outcome_round_trips_the_reference():
    for h, p in (("41 C0 80 E1 80", "unicode"), ("FE 41 C0 80", "corrected"), ("", "unicode")):
        data = bytes.fromhex(h)
        assert expected_outcome(expectation(data, p)).tokens == Reference(p).decode(data).tokens


def test_check_outcome_at_the_resolution_a_decoder_shows():
    e = expectation(b"A\xc0\x80")
    assert check_outcome(Outcome.partial(3, replace=[0x41, 0xFFFD, 0xFFFD]), e) is None
    assert check_outcome(Outcome.partial(3, strict=(1, 2), reason="illegal"), e) is None
    bad = check_outcome(Outcome.partial(3, replace=[0x41, 0]), e)
    assert bad and bad.startswith("accepts-ill-formed")
    late = check_outcome(Outcome.partial(3, strict=(1, 3)), e)
    assert late and late.startswith("different-error-offset")


def test_cli_json_and_usage_error(capsys):
    assert main(["expect", "C0 80", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["substitute"]["output"] == ["U+FFFD", "U+FFFD"]
    assert main(["expect", "C0 80", "--profile", "legacy"]) == 0
    assert "U+0000@0" in capsys.readouterr().out
    assert main(["expect", "zz"]) == 2
    assert main(["expect", "41", "--profile", "nope"]) == 2
