"""reproduce: the diff command runs, and the pytest body pins the spec's answer
and fails exactly while the decoder diverges."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.report.builder import cpython_decoders, write_corpus
from utf8fuzz.cli import main
from utf8fuzz.decoders import resolve
from utf8fuzz.report.load import load_corpus
from utf8fuzz.report.reproduce import decoder_spec, diff_command, pytest_body

PLUGIN = "tests.engine.planted:accepts_c080"


@pytest.fixture(scope="module")
def plugin_entry(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("plugin-corpus")
    planted = resolve(PLUGIN + "+inprocess")[0]
    write_corpus(root, inputs=[b"\x41\xc0\x80"], decoders=[*cpython_decoders(), planted],
                 position_dependent=())
    entries = [e for e in load_corpus(root).entries if "plugin:" + PLUGIN in e.decoders]
    assert entries, "the planted plug-in must diverge on C0 80"
    return entries[0]


def test_decoder_spec_is_the_recorded_spec(plugin_entry) -> None:  # type: ignore[no-untyped-def]
    assert decoder_spec(plugin_entry, "plugin:" + PLUGIN) == PLUGIN + "+inprocess"
    assert decoder_spec(plugin_entry, "cpython:replace") == "cpython:replace"
    # entries that recorded no spec: a module:attr plug-in is named by its target
    assert decoder_spec(plugin_entry, "plugin:m.x:f") == "m.x:f"
    assert decoder_spec(plugin_entry, "plugin:mydecoder") == "plugin:mydecoder"


def test_a_codec_modes_reproduction_loads_that_mode_with_its_shape(tmp_path: Path) -> None:
    # the shape and the mode are in the recorded spec, not in the name
    spec = "tests.engine.planted_shapes:replace_splits_truncated3+codec+replace+inprocess"
    (dec,) = resolve(spec)
    write_corpus(tmp_path, inputs=[b"\x41\xe2\x82"], decoders=[*cpython_decoders(), dec],
                 position_dependent=())
    (entry,) = [e for e in load_corpus(tmp_path).entries if dec.name in e.decoders]
    argv = shlex.split(diff_command(entry))
    assert spec in argv and dec.name not in argv
    assert [d.name for d in resolve(spec)] == [dec.name]


def test_diff_command_runs(plugin_entry, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    cmd = diff_command(plugin_entry)
    argv = shlex.split(cmd)
    assert argv[:3] == ["utf8fuzz", "diff", "41c080"]
    assert "--decoder" in argv and PLUGIN + "+inprocess" in argv
    assert "ref:unicode:maximal-subpart" in argv
    assert main([*argv[1:], "--json"]) == 0
    out = capsys.readouterr().out
    assert '"input": "41c080"' in out


def test_pytest_body_pins_the_spec_and_fails_on_the_divergence(plugin_entry) -> None:  # type: ignore[no-untyped-def]
    body = pytest_body(plugin_entry, "a clause")
    assert body.startswith(f"def test_divergence_{plugin_entry.sig_id}():")
    assert "assert expected.codepoints() == [0x0041, 0xFFFD, 0xFFFD]" in body
    assert "assert expected.error_spans == [(1, 2), (2, 3)]" in body
    ns: dict[str, object] = {}
    exec(compile(body, "<report>", "exec"), ns)
    test = ns[f"test_divergence_{plugin_entry.sig_id}"]
    with pytest.raises(AssertionError) as info:
        test()  # type: ignore[operator]
    # It fails at the decoder's check, after the spec's expectations held.
    assert str(info.value) in {"tokens", "spans", "strict", "reason", "replace", "ignore"}


def test_hostile_names_stay_ascii(corpus_dir: Path) -> None:
    for e in load_corpus(corpus_dir).entries:
        for text in (diff_command(e), pytest_body(e, "\u202e\x1b[2J")):
            assert all(ch == "\n" or 0x20 <= ord(ch) < 0x7F for ch in text)


def test_a_reproduction_that_loads_code_the_corpus_names_says_so(plugin_entry) -> None:  # type: ignore[no-untyped-def]
    # A sidecar is hostile: its recorded spec (a plug-in module, an exec: program) is
    # what the command and the test would load. The report says so beside them; an
    # entry of built-in decoders alone needs no such word.
    from utf8fuzz.report import markdown
    from utf8fuzz.report.analyze import analyze
    from utf8fuzz.report.reproduce import WARNING, recorded_code

    assert recorded_code(plugin_entry) == [PLUGIN + "+inprocess"]
    assert WARNING in pytest_body(plugin_entry)
    # the committed corpus: built-in decoders only
    builtin = load_corpus(Path(__file__).resolve().parents[2] / "corpus").entries
    assert builtin and all(recorded_code(e) == [] and WARNING not in pytest_body(e)
                           for e in builtin)
    text = markdown.render(analyze(load_corpus(plugin_entry.path.parents[1]), "2026-11-28"))
    assert f"Reproduce ({WARNING}):" in text
