"""The one grammar of decoder specs (utf8fuzz.decoders.spec): plug-ins, codec: and
exec: alike, their words in any order, a command's own + and @ kept, and every bad
spec one line (exit 2 from the CLI). In-process and fast, but for one real exec:
client that says the arguments it was started with."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from utf8fuzz.cli import main
from utf8fuzz.decoders import UnknownDecoder, resolve
from utf8fuzz.decoders.spec import parse, parse_entry_point

MISBEHAVING = Path(__file__).parent / "exec_clients" / "misbehaving.py"


def fields(spec: str) -> tuple[object, ...]:
    s = parse(spec)
    return (s.kind, s.target, s.argv, str(s.claim), s.shape, s.modes, s.inprocess,
            s.timeout, s.memory_mib)


@pytest.mark.parametrize("spec,kind,target,argv,claim,shape,modes,inprocess,timeout,memory", [
    ("m:f", "plugin", "m:f", (), "", None, (), False, None, None),
    ("m.sub:obj.fn@corrected+text", "plugin", "m.sub:obj.fn", (), "@corrected", "text", (),
     False, None, None),
    ("m:f+validator@unicode/per-byte", "plugin", "m:f", (), "@unicode/per-byte",
     "validator", (), False, None, None),
    ("m:f+inprocess+timeout=2.5+codec+ignore+replace", "plugin", "m:f", (), "", "codec",
     ("ignore", "replace"), True, 2.5, None),
    ("m:f+memory=512+incremental+strict", "plugin", "m:f", (), "", "incremental",
     ("strict",), False, None, 512),
    ("codec:utf-8", "codec", "codec:utf-8", (), "", None, (), False, None, None),
    ("codec:cp1252+codec@legacy+replace", "codec", "codec:cp1252", (), "@legacy", "codec",
     ("replace",), False, None, None),
    ("exec:./c", "exec", "./c", ("./c",), "", None, (), False, None, None),
    ("exec:node c.js lib+replace@cesu8", "exec", "node c.js lib",
     ("node", "c.js", "lib"), "@cesu8", None, ("replace",), False, None, None),
    ("exec:'./my client' -q 'a b'@corrected+timeout=2+strict", "exec",
     "'./my client' -q 'a b'", ("./my client", "-q", "a b"), "@corrected", None,
     ("strict",), False, 2.0, None),
    ("exec:./c+memory=0+validate@unicode/per-run", "exec", "./c", ("./c",),
     "@unicode/per-run", None, ("validate",), False, None, 0),
    # the command's own + and @: quoted, escaped, inside it, or no word
    ("exec:'./a+b' 'x@y'", "exec", "'./a+b' 'x@y'", ("./a+b", "x@y"), "", None, (), False,
     None, None),
    ("exec:./a\\+strict", "exec", "./a\\+strict", ("./a+strict",), "",
     None, (), False, None, None),
    ("exec:java -XX:+UseSerialGC Client+strict", "exec", "java -XX:+UseSerialGC Client",
     ("java", "-XX:+UseSerialGC", "Client"), "", None, ("strict",), False, None, None),
    ("exec:node node_modules/@scope/pkg/cli.js", "exec", "node node_modules/@scope/pkg/cli.js",
     ("node", "node_modules/@scope/pkg/cli.js"), "", None, (), False, None, None),
    ("exec:./c a+1", "exec", "./c a+1", ("./c", "a+1"), "", None, (), False, None, None),
])
def test_the_grammar(spec, kind, target, argv, claim, shape, modes, inprocess, timeout,
                     memory):
    assert fields(spec) == (kind, target, argv, claim, shape, modes, inprocess, timeout,
                            memory)


@pytest.mark.parametrize("specs", [
    ("m:f@unicode/per-byte+codec+replace+timeout=3", "m:f+codec@unicode/per-byte+replace"
     "+timeout=3", "m:f+timeout=3+replace+codec@unicode/per-byte"),
    ("codec:utf-8@corrected+text", "codec:utf-8+text@corrected"),
    ("exec:./c@unicode/per-byte+replace", "exec:./c+replace@unicode/per-byte"),
    ("exec:'./c' --x@cesu8+timeout=2+strict", "exec:'./c' --x+strict@cesu8"
     "+timeout=2", "exec:'./c' --x+timeout=2+strict@cesu8"),
])
def test_words_in_any_order_mean_the_same(specs):
    assert len({fields(s) for s in specs}) == 1


def test_a_codec_mode_spec_renders_as_written_in_the_usual_order():
    # a corpus entry records it; the claim comes first, the mode after the shape
    assert parse("m:f@unicode/per-byte+codec+timeout=3").for_mode("ignore") == \
        "m:f@unicode/per-byte+codec+ignore+timeout=3"
    assert parse("m:f+timeout=3+codec+strict@unicode+replace").for_mode("replace") == \
        "m:f@unicode+timeout=3+codec+replace"


def test_an_entry_point_says_its_words_after_its_name():
    short, s = parse_entry_point("mycodec+codec@unicode/per-byte+replace", "pkg.mod:decode")
    assert (short, s.target, str(s.claim), s.shape, s.modes) == (
        "mycodec", "pkg.mod:decode", "@unicode/per-byte", "codec", ("replace",))


BAD = [
    # unknown word
    ("m:f+nope", "bad decoder option +nope"),
    ("codec:utf-8+mode=replace", "bad decoder option +mode=replace"),
    ("exec:./c+inprocess", "bad decoder option +inprocess"),
    ("exec:./c+mode=lenient", "bad decoder option +mode=lenient"),
    ("m:f+inprocess=1", "bad decoder option +inprocess=1"),
    ("m:f+timeout", "bad decoder option +timeout"),
    # duplicate word
    ("m:f+inprocess+inprocess", "+inprocess given twice"),
    ("m:f+timeout=1+codec+timeout=2", "+timeout given twice"),
    ("m:f+codec+replace+replace", "mode +replace given twice"),
    ("m:f+text+validator", "two shapes, +text and +validator"),
    ("m:f@unicode+text@corrected", "two claims, @unicode and @corrected"),
    ("exec:./c+strict+lenient", "bad decoder option +lenient"),
    # empty target
    ("", "expected module:attr"),
    ("m:", "expected module:attr"),
    (":f+text", "expected module:attr"),
    ("@unicode", "expected module:attr"),
    ("codec:+codec", "expected module:attr or codec:NAME"),
    ("exec:", "expected exec:'COMMAND ARGS'"),
    ("exec:+strict", "expected exec:'COMMAND ARGS'"),
    ("exec:''@unicode", "expected exec:'COMMAND ARGS'"),
    # unbalanced quote
    ("exec:'./c+strict", "unbalanced quote"),
    ('exec:"./c \\"x\\"', "unbalanced quote"),
    ("exec:./c\\", "bad command"),
    # words that are out of range or name nothing
    ("m:f@", "a profile must follow '@'"),
    ("exec:./c+strict@", "a profile must follow '@'"),
    ("m:f@nosuch", "nosuch"),
    ("exec:./c@unicode/nope", "unknown policy 'nope'"),
    ("m:f+replace", "error modes (+replace) are for the codec shape"),
    ("exec:./c+timeout=0", "bad timeout"),
    ("m:f+timeout=nan", "bad timeout"),
    ("m:f+timeout=inf", "bad timeout"),
    ("exec:./c+timeout=1e300", "bad timeout"),
    ("m:f+inprocess+memory=64", "+memory limits a worker"),
]


@pytest.mark.parametrize("spec,says", BAD)
def test_a_bad_spec_is_one_line(spec, says):
    with pytest.raises(UnknownDecoder) as e:
        parse(spec)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_an_entry_point_takes_no_command_line_options():
    with pytest.raises(UnknownDecoder, match="option of the command line only"):
        parse_entry_point("mine+text+timeout=2", "pkg.mod:f")
    with pytest.raises(UnknownDecoder, match="a name must come before the claim"):
        parse_entry_point("@unicode", "pkg.mod:f")


@pytest.mark.parametrize("spec,says", [
    ("tests.decoders.plugin_fixtures:strict_utf8+text+nope", "bad decoder option +nope"),
    ("exec:./c+strict+strict", "mode +strict given twice"),
    ("codec:@unicode", "expected module:attr or codec:NAME"),
    ("exec:'./c@unicode", "unbalanced quote"),
])
def test_the_cli_says_a_bad_spec_in_one_line_and_exits_2(spec, says, capsys):
    # nothing is imported or started: the spec is refused as it is parsed
    assert main(["diff", "--decoder", spec, "41"]) == 2
    out, err = capsys.readouterr()
    assert len(err.splitlines()) == 1 and err.startswith("utf8fuzz diff: "), err
    assert says in err and not out


def test_the_words_after_a_command_never_reach_the_program():
    # as a shell passes `exec:'python3 client.py lib'+replace@cesu8`: the words
    # are the harness's, the program gets `lib` alone
    spec = ("exec:" + shlex.join([sys.executable, str(MISBEHAVING), "--say-args",
                                  "--flags=18", "lib"]) + "+replace@cesu8")
    (d,) = resolve(spec)
    try:
        assert (d.name, d.profile) == ("exec:misbehaving:replace@cesu8", "cesu8")
        assert json.loads(d.versions()["args"]) == ["--say-args", "--flags=18", "lib"]
        assert d.spec == spec
    finally:
        d.close()
