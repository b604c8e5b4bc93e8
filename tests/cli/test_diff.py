"""``utf8fuzz diff`` as a user runs it: a subprocess of the installed command."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "utf8fuzz", *args], capture_output=True, text=True, timeout=60
    )


def test_json_shape() -> None:
    p = run("diff", "C0 80", "--profile", "legacy", "--profile", "unicode", "--json")
    assert p.returncode == 0, p.stderr
    obj = json.loads(p.stdout)
    assert obj["input"] == "c080"
    legacy = obj["decoders"]["ref:legacy:maximal-subpart"]
    assert legacy["tokens"] == [["char", 0, 0, 2]]
    assert legacy["replace"] == [0] and legacy["first_error"] is None
    uni = obj["decoders"]["ref:unicode:per-sequence"]
    assert uni["tokens"] == [["error", None, 0, 2]]
    assert uni["replace"] == [0xFFFD] and uni["first_error"] == [0, 2]
    assert uni["profile"] == "unicode" and uni["policy"] == "per-sequence"


def test_hostile_input_is_never_printed_raw(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # ESC [ 2 J (clear screen), U+202E (RIGHT-TO-LEFT OVERRIDE), NUL, BEL
    hostile = b"\x1b[2J" + "\u202e".encode() + b"\x00\x07"
    f = tmp_path / "in.bin"
    f.write_bytes(hostile)
    for args in (["--file", str(f)], ["--file", str(f), "--json"]):
        p = run("diff", *args, "--profile", "unicode")
        assert p.returncode == 0, p.stderr
        for bad in ("\x1b", "\u202e", "\x00", "\x07"):
            assert bad not in p.stdout
        assert "U+202E" in p.stdout or "8238" in p.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["diff", "zz"], "bad hex"),
        (["diff", "--file", "/nonexistent/x"], "No such file"),
        (["diff", "41", "--profile", "utf-9"], "unknown profile"),
        (["diff"], "no input"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    p = run(*args)
    assert p.returncode == 2
    assert message in p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_a_decoder_named_alone_is_judged_beside_its_reference() -> None:
    # the planted decoder reads C0 80 as U+0000; Unicode's Table 3-7 has no C0 lead
    root = str(Path(__file__).resolve().parents[2])
    spec = "tests.engine.planted:PLANTED_C080+inprocess"
    env = {**os.environ, "PYTHONPATH": root}

    def diff(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "utf8fuzz", "diff", "C0 80",
                               "--decoder", spec, *args], capture_output=True, text=True,
                              timeout=60, env=env)

    obj = json.loads(diff("--json").stdout)
    assert sorted(obj["decoders"]) == ["planted:accepts-c080", "ref:unicode:maximal-subpart"]
    (x,) = obj["divergences"]
    assert x["signature"] == "unicode/accepts-ill-formed/non-shortest-form/planted:accepts-c080"
    assert x["reference"] == "ref:unicode:maximal-subpart" and x["offset"] == 0
    text = diff().stdout
    assert "ref:unicode:maximal-subpart" in text and "verdict" in text
    assert "accepts-ill-formed/non-shortest-form" in text.replace("\n", "")


def test_a_conforming_decoder_named_alone_agrees() -> None:
    p = run("diff", "C0 80", "--decoder", "cpython:replace", "--json")
    obj = json.loads(p.stdout)
    assert "ref:unicode:maximal-subpart" in obj["decoders"] and obj["divergences"] == []


def test_a_validator_and_an_escaping_decoder_show_their_views() -> None:
    root = str(Path(__file__).resolve().parents[2])
    p = subprocess.run(
        [sys.executable, "-m", "utf8fuzz", "diff", "41 ED A0 80",
         "--decoder", "tests.engine.planted_shapes:validator_accepts_surrogates+validator",
         "--decoder", "cpython:surrogateescape"],
        capture_output=True, text=True, timeout=60, cwd=root)
    assert p.returncode == 0, p.stderr
    assert "accept: well-formed" in p.stdout  # the planted bug: it accepts a surrogate
    assert "escape: U+0041 U+DCED U+DCA0 U+DC80" in p.stdout
    assert "accepts-ill-formed/surrogate" in p.stdout


def test_json_holds_the_value_of_every_view_a_partial_decoder_shows() -> None:
    """A validator's answer and an escaping decoder's text are in ``diff --json``, as
    the text output shows them (they have no tokens to read them from)."""
    root = str(Path(__file__).resolve().parents[2])
    p = subprocess.run(
        [sys.executable, "-m", "utf8fuzz", "diff", "41 ED A0 80", "--json",
         "--decoder", "tests.engine.planted_shapes:validator_accepts_surrogates+validator",
         "--decoder", "cpython:surrogateescape"],
        capture_output=True, text=True, timeout=60, cwd=root)
    assert p.returncode == 0, p.stderr
    decs = json.loads(p.stdout)["decoders"]
    (valid,) = [v for k, v in decs.items() if "validator_accepts_surrogates" in k]
    assert valid["shows"] == ["accept"] and valid["accept"] is True  # the planted bug
    assert decs["ref:unicode:maximal-subpart"]["accept"] is False  # ED A0 80: a surrogate
    esc = decs["cpython:surrogateescape"]
    assert esc["escape"] == [0x41, 0xDCED, 0xDCA0, 0xDC80]
