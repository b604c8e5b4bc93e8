"""Plug-in shapes, each declared: the spec grammar, the view each shape is judged
at, a codec's error modes as decoders of their own, the claimed policy, entry
points that say all of it in their name, and bad specs as one line and exit 2.

Expected values are CPython's own codec in the mode named (a real decoder) and
Unicode's example of maximal subparts (decoder_inputs)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.decoders.decoder_inputs import EXAMPLE, EXAMPLE_REPLACE
from utf8fuzz.decoders import UnknownDecoder, plugin, resolve
from utf8fuzz.decoders.plugin import IsolatedDecoder
from utf8fuzz.decoders.spec import parse as parse_spec
from utf8fuzz.engine.differ import Differ
from utf8fuzz.policies import POLICIES

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
M = "tests.decoders.plugin_fixtures"
P = "tests.engine.planted_shapes"
CP = [ord(c) for c in EXAMPLE.decode("utf-8", "replace")]


@pytest.fixture
def loaded():
    made: list = []

    def make(spec: str):
        decs = plugin.load_all(spec)
        made.extend(decs)
        return decs

    yield make
    for d in made:
        d.close()


def _cp(data: bytes, errors: str) -> tuple[int, ...]:
    return tuple(map(ord, data.decode("utf-8", errors)))


# -- the grammar --------------------------------------------------------------------


@pytest.mark.parametrize("spec,target,claim,shape,modes,inprocess", [
    ("m:f", "m:f", "", None, (), False),
    ("m:f@corrected", "m:f", "@corrected", None, (), False),
    ("m:f@unicode/per-byte+validator", "m:f", "@unicode/per-byte", "validator", (), False),
    ("m.sub:obj.fn+text+inprocess", "m.sub:obj.fn", "", "text", (), True),
    ("m:f+codec", "m:f", "", "codec", (), False),
    ("m:f@unicode/per-sequence+codec+replace+ignore+timeout=2", "m:f",
     "@unicode/per-sequence", "codec", ("replace", "ignore"), False),
    ("m:f+inprocess+spans", "m:f", "", "spans", (), True),  # words in any order
    ("m:f+outcome", "m:f", "", "outcome", (), False),
])
def test_the_grammar(spec, target, claim, shape, modes, inprocess):
    s = parse_spec(spec)
    assert (s.target, str(s.claim), s.shape, s.modes, s.inprocess) == \
        (target, claim, shape, modes, inprocess)


def test_every_policy_can_be_claimed():
    for policy in POLICIES:  # whatever policies.py offers, never a list of our own
        assert parse_spec(f"m:f@unicode/{policy}+text").claim.policy == policy


def test_the_spec_of_one_codec_mode_names_that_mode_alone():
    s = parse_spec("m:f@unicode/per-byte+codec+timeout=3")
    assert s.for_mode("ignore") == "m:f@unicode/per-byte+codec+ignore+timeout=3"
    s = parse_spec("m:f+codec+strict+replace")
    assert s.for_mode("replace") == "m:f+codec+replace"


@pytest.mark.parametrize("spec,match", [
    (f"{M}:strict_utf8+nope", "bad decoder option \\+nope"),
    (f"{M}:strict_utf8+codec+nope", "bad decoder option \\+nope"),
    (f"{M}:strict_utf8+replace", "error modes .* are for the codec shape"),
    (f"{M}:strict_utf8+text+validator", "two shapes"),
    (f"{M}:strict_utf8+codec+ignore+ignore", "given twice"),
    (f"{M}:strict_utf8@unicode/nope", "unknown policy 'nope'"),
    (f"{M}:strict_utf8@nosuch/per-byte", "unknown profile"),
    (f"{M}:strict_utf8@", "a profile must follow"),
    (f"{M}:strict_utf8+timeout", "bad decoder option"),
    (f"{M}:strict_utf8+inprocess=1", "bad decoder option"),
    (f"{M}:strict_and_replace+codec+ignore", "rejects errors='ignore'"),
    (f"{M}:strict_and_replace+codec+ignore+inprocess", "rejects errors='ignore'"),
    (f"{M}:takes_no_errors+codec", "accepts none of the error modes"),
    (f"{M}:takes_no_errors+codec+inprocess", "accepts none of the error modes"),
    (f"{M}:FullDecoder+text", "a Decoder is its own shape"),
    ("codec:utf-8+validator", "a registered codec takes no \\+validator"),
])
def test_bad_specs_are_one_line(spec, match):
    with pytest.raises(UnknownDecoder, match=match) as e:
        resolve(spec)
    assert "\n" not in str(e.value)


def _cli(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    import os

    exe = Path(sys.executable).parent / "utf8fuzz"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "utf8fuzz"]
    return subprocess.run([*cmd, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=120)


@pytest.mark.parametrize("spec,says", [
    (f"{M}:strict_utf8+nope", "bad decoder option +nope"),
    (f"{M}:strict_utf8@unicode/nope", "unknown policy"),
    (f"{M}:strict_utf8+codec+sometimes", "bad decoder option +sometimes"),
])
def test_cli_bad_spec_is_one_line_and_exit_2(spec, says):
    r = _cli("diff", "--decoder", spec, "41")
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and says in r.stderr and not r.stdout


# -- each shape, at its own view ------------------------------------------------------


@pytest.mark.parametrize("opt", ["+inprocess", ""])
def test_a_text_function_is_judged_at_replace(loaded, opt):
    (dec,) = loaded(f"{P}:cpython_replace+text{opt}")
    assert dec.name == f"plugin:{P}:cpython_replace" and dec.shows == {"replace"}
    out = dec.decode(EXAMPLE)
    assert out.shows == {"replace"} and out.view("replace") == EXAMPLE_REPLACE
    # a U+FFFD it writes is a replacement: nothing here says it accepted the input
    assert not Differ([dec]).signatures(EXAMPLE)


@pytest.mark.parametrize("opt", ["+inprocess", ""])
def test_a_validator_is_judged_at_accept(loaded, opt):
    (good,) = loaded(f"{P}:cpython_valid+validator{opt}")
    assert good.shows == {"accept"}
    assert good.decode(EXAMPLE).view("accept") is False
    assert good.decode("aé€😀".encode()).view("accept") is True
    assert not Differ([good]).signatures(EXAMPLE)
    (bad,) = loaded(f"{P}:validator_accepts_surrogates+validator{opt}")
    assert Differ([bad]).signatures(bytes.fromhex("41 ED A0 80 42")) == {
        f"unicode/accepts-ill-formed/surrogate/plugin:{P}:validator_accepts_surrogates"}


@pytest.mark.parametrize("opt", ["+inprocess", ""])
def test_a_codec_runs_in_every_mode_it_accepts_each_a_decoder(loaded, opt):
    decs = loaded(f"encodings.utf_8:decode+codec{opt}")
    by = {d.name: d for d in decs}
    base = "plugin:encodings.utf_8:decode"
    assert list(by) == [f"{base}:{m}" for m in ("strict", "replace", "ignore",
                                                 "surrogateescape")]
    views = {"strict": "strict", "replace": "replace", "ignore": "ignore",
             "surrogateescape": "escape"}
    for mode, view in views.items():
        d = by[f"{base}:{mode}"]
        assert d.shows == {view} and d.spec == f"encodings.utf_8:decode+codec+{mode}{opt}"
        out = d.decode(EXAMPLE)
        if mode == "strict":
            assert out.view("strict") == (1, 4)
            assert d.decode(b"ab").view("ignore") == (0x61, 0x62)  # its text when it accepts
        else:
            assert out.view(view) == _cp(EXAMPLE, mode)
    if not opt:  # one worker for the spec, serving every mode
        assert len({id(d.worker) for d in decs}) == 1
        assert all(isinstance(d, IsolatedDecoder) for d in decs)
    assert not Differ(decs).signatures(EXAMPLE)


def test_the_spec_of_a_codec_mode_loads_that_decoder_alone(loaded):
    decs = loaded(f"{M}:strict_and_replace+codec+inprocess")
    for d in decs:
        (again,) = loaded(d.spec)
        assert again.name == d.name and again.shows == d.shows


@pytest.mark.parametrize("opt", ["+inprocess", ""])
def test_a_mode_the_codec_rejects_is_left_out_in_one_escaped_line(loaded, opt, capsys):
    decs = loaded(f"{M}:strict_and_replace+codec{opt}")
    assert [d.name for d in decs] == [f"plugin:{M}:strict_and_replace:strict",
                                      f"plugin:{M}:strict_and_replace:replace"]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.isascii() and line.isprintable() for line in err)
    assert "strict_and_replace:ignore left out" in err[0]
    assert "LookupError" in err[0] and "\\x1b[2J\\u202e" in err[0]
    assert "surrogateescape left out" in err[1]


def test_a_codec_mode_that_raises_is_a_crash_not_a_strict_answer(loaded):
    decs = {d.name.rsplit(":", 1)[1]: d for d in loaded("codecs:utf_8_decode+codec+inprocess")}
    # codecs.utf_8_decode without final=True holds back a truncated tail
    out = decs["replace"].decode(bytes.fromhex("41 E2 82"))
    assert out.status == "crash" and "consumed 1 of 3 bytes" in out.detail
    assert decs["replace"].decode(EXAMPLE).view("replace") == EXAMPLE_REPLACE


def test_a_registered_codec_in_modes(loaded):
    decs = loaded("codec:utf-8+codec+ignore+inprocess")
    assert [d.name for d in decs] == ["plugin:codec:utf-8:ignore"]
    assert decs[0].decode(EXAMPLE).view("ignore") == _cp(EXAMPLE, "ignore")


@pytest.mark.parametrize("spec,says", [
    (f"{M}:as_tuple", "declare the shape it has"),
    (f"{M}:says_maybe+validator", "the validator shape returns bool"),
    (f"{M}:strict_utf8+spans", "the spans shape returns (str, spans)"),
    (f"{M}:strict_utf8+outcome", "the outcome shape returns an Outcome"),
])
def test_a_return_of_another_shape_is_a_crash_naming_the_shapes(loaded, spec, says):
    (dec,) = loaded(spec + "+inprocess")
    out = dec.decode(b"ab")
    assert out.status == "crash" and says in out.detail


# -- the claim ---------------------------------------------------------------------------


def test_the_claimed_policy_picks_the_reference(loaded):
    data = bytes.fromhex("41 E2 82")  # one maximal subpart, two bytes
    (maximal,) = loaded(f"{P}:cpython_replace+text+inprocess")
    (per_byte,) = loaded(f"{P}:cpython_replace@unicode/per-byte+text+inprocess")
    assert maximal.policy == "maximal-subpart" and per_byte.policy == "per-byte"
    assert per_byte.name == f"plugin:{P}:cpython_replace@unicode/per-byte"
    assert not Differ([maximal]).signatures(data)
    (sig,) = Differ([per_byte]).signatures(data)
    assert sig.startswith("unicode/different-replacement/")


def test_a_claim_overrides_a_decoder_subclass(loaded):
    (dec,) = loaded(f"{M}:FullDecoder@unicode/per-byte+inprocess")
    assert (dec.profile, dec.policy) == ("unicode", "per-byte")


def test_codec_mode_names_carry_the_claim(loaded):
    decs = loaded("encodings.utf_8:decode@unicode/per-byte+codec+replace+inprocess")
    assert [d.name for d in decs] == ["plugin:encodings.utf_8:decode:replace@unicode/per-byte"]
    assert decs[0].policy == "per-byte"


# -- entry points --------------------------------------------------------------------------


ENTRY_POINTS = {
    "ep_valid@unicode/per-byte+validator": "ep_mod:valid",
    "ep_codec+codec": "ep_mod:two_modes",
    "ep_replace@unicode+codec+replace": "ep_mod:two_modes",
    "ep_text+text": "ep_mod:text",
    "ep_unknown+nope": "ep_mod:valid",
    "ep_policy@unicode/nope": "ep_mod:valid",
    "ep_option+inprocess": "ep_mod:valid",
}


def _install(root: Path) -> None:
    """A module and a .dist-info whose entry points say claim, shape and modes in
    their names, as pyproject.toml would write them."""
    (root / "ep_mod.py").write_text(textwrap.dedent("""
        def valid(data):
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                return False
            return True
        def two_modes(data, errors="strict"):
            if errors not in ("strict", "replace"):
                raise LookupError(errors)
            return data.decode("utf-8", errors)
        def text(data):
            return data.decode("utf-8", "replace")
    """))
    dist = root / "ep_plug-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ep-plug\nVersion: 1.0\n")
    lines = "".join(f"{k} = {v}\n" for k, v in ENTRY_POINTS.items())
    (dist / "entry_points.txt").write_text(f"[utf8fuzz.decoders]\n{lines}")


def test_entry_points_declare_claim_shape_and_modes_in_their_name(tmp_path, monkeypatch):
    _install(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    found = plugin.discover()
    ok = {d.name: d for d in found if not isinstance(d, plugin.Unavailable)}
    missing = {u.name: u.reason for u in found if isinstance(u, plugin.Unavailable)}
    try:
        assert set(ok) == {"plugin:ep_valid", "plugin:ep_codec:strict",
                           "plugin:ep_codec:replace", "plugin:ep_replace:replace",
                           "plugin:ep_text"}
        valid = ok["plugin:ep_valid"]
        assert (valid.profile, valid.policy, valid.shows) == ("unicode", "per-byte",
                                                              {"accept"})
        assert valid.decode(EXAMPLE).view("accept") is False
        assert ok["plugin:ep_codec:replace"].decode(EXAMPLE).view("replace") == EXAMPLE_REPLACE
        assert ok["plugin:ep_codec:strict"].decode(EXAMPLE).view("strict") == (1, 4)
        assert ok["plugin:ep_text"].shows == {"replace"}
    finally:
        for d in ok.values():
            d.close()
    assert "rejects errors='ignore'" in missing["plugin:ep_codec:ignore"]
    assert "rejects errors='surrogateescape'" in missing["plugin:ep_codec:surrogateescape"]
    assert "bad decoder option +nope" in missing["plugin:ep_unknown"]
    assert "unknown policy" in missing["plugin:ep_policy"]
    assert "command line only" in missing["plugin:ep_option"]


def test_cli_lists_entry_point_shapes_and_bad_ones(tmp_path):
    _install(tmp_path)
    r = _cli("decoders", "--json", cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    listing = json.loads(r.stdout)
    avail = {d["name"]: d for d in listing["available"]}
    assert avail["plugin:ep_valid"]["policy"] == "per-byte"
    assert avail["plugin:ep_valid"]["shows"] == ["accept"]
    assert avail["plugin:ep_codec:replace"]["shows"] == ["replace"]
    unavailable = {u["name"] for u in listing["unavailable"]}
    assert {"plugin:ep_codec:ignore", "plugin:ep_unknown", "plugin:ep_policy"} <= unavailable


@pytest.mark.parametrize("opt", ["+inprocess", ""])
def test_a_type_error_the_codec_raises_itself_is_its_answer_not_a_refused_mode(opt):
    """Python refuses a call's arguments before the function's first line runs; a
    TypeError from inside the function is the decoder's own, reported as what it is
    (a crash outcome naming it) in every mode, never as "rejects errors=strict"."""
    decs = resolve(f"{M}:raises_its_own_type_error+codec{opt}")
    try:
        assert sorted(d.name.rsplit(":", 1)[1] for d in decs) == sorted(
            ["strict", "replace", "ignore", "surrogateescape"])
        for d in decs:
            out = d.decode(b"A")
            assert out.status == "crash" and (out.detail or "").startswith("TypeError: "), out
            assert "can only concatenate str" in (out.detail or "")
    finally:
        for d in decs:
            d.close()
