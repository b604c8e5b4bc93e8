"""User decoders: every pluggable shape, isolation (raise, crash, hang), entry
points, and ``--decoder`` on the command line."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.decoders.decoder_inputs import EXAMPLE, EXAMPLE_REPLACE, EXAMPLE_SPANS
from utf8fuzz.decoders import UnknownDecoder, plugin, resolve
from utf8fuzz.decoders.plugin import IsolatedDecoder
from utf8fuzz.engine import screening

HERE = Path(__file__).parent
M = "tests.decoders.plugin_fixtures"


@pytest.fixture
def isolated():
    made: list = []

    def make(spec: str):
        d = plugin.load(spec)
        made.append(d)
        return d

    yield make
    for d in made:
        d.close()


@pytest.mark.parametrize("opt", ["+inprocess", ""])
def test_plain_callable_shows_strict_and_the_text_when_valid(isolated, opt):
    dec = isolated(f"{M}:strict_utf8{opt}")
    assert isinstance(dec, IsolatedDecoder) == (opt == "")
    assert dec.name == f"plugin:{M}:strict_utf8" and dec.profile == "unicode"
    out = dec.decode(EXAMPLE)
    assert out.ok and out.view("strict") == (1, 4)
    assert out.shows == {"strict"}
    ok = dec.decode("aé€😀".encode())
    assert ok.view("strict") is None
    assert ok.view("replace") == (0x61, 0xE9, 0x20AC, 0x1F600)
    assert dec.versions()["version"] == "0.0-test"


def test_claimed_profile(isolated):
    assert isolated(f"{M}:strict_utf8@corrected+inprocess").profile == "corrected"
    with pytest.raises(UnknownDecoder, match="unknown profile"):
        plugin.load(f"{M}:strict_utf8@nosuch")


def test_richer_form_returns_every_span(isolated):
    out = isolated(f"{M}:with_spans+spans").decode(EXAMPLE)
    assert out.view("replace") == EXAMPLE_REPLACE
    assert out.view("spans") == EXAMPLE_SPANS and out.view("strict") == (1, 4)


def test_decoder_subclass_keeps_its_profile_and_tokens(isolated):
    dec = isolated(f"{M}:FullDecoder")
    assert dec.profile == "surrogatepass"
    out = dec.decode(bytes.fromhex("ED A0 80 80"))
    assert [t.as_list() for t in out.tokens] == [["char", 0xD800, 0, 3], ["error", None, 3, 4]]
    assert out.view("escape") == (0xD800, 0xDC80)  # tokens rebuilt with the input


def test_registered_codec(isolated):
    out = isolated("codec:utf-8+inprocess").decode(EXAMPLE)
    assert out.view("spans") == EXAMPLE_SPANS and out.view("replace") == EXAMPLE_REPLACE
    with pytest.raises(UnknownDecoder, match="no codec"):
        plugin.load("codec:no-such-codec")


@pytest.mark.parametrize("spec,match", [
    (f"{M}:not_callable", "not callable"),
    (f"{M}:missing", "no attribute"),
    ("no_such_module_xyz:f", "cannot import"),
    (f"{M}:strict_utf8+fast", "bad decoder option"),
    (f"{M}:strict_utf8+timeout=-1", "bad timeout"),
])
def test_bad_specs_say_why(spec, match):
    with pytest.raises(UnknownDecoder, match=match):
        resolve(spec)


@pytest.mark.parametrize("opt", ["+inprocess", ""])
def test_a_decoder_that_raises_gives_a_crash_outcome(isolated, opt):
    dec = isolated(f"{M}:raises{opt}")
    outs = screening.decode_many(dec, [b"a", b"boom", b"\x80"])
    assert [o.status for o in outs] == ["ok", "crash", "ok"]
    assert outs[1].detail == "RuntimeError: the plug-in broke"
    assert outs[2].view("strict") == (0, 1)


@pytest.mark.parametrize("fixture,signal", [("aborts", "SIGABRT"), ("segfaults", "SIGSEGV")])
def test_a_decoder_that_kills_its_process_gives_a_crash_and_a_new_worker(
    isolated, fixture, signal
):
    dec = isolated(f"{M}:{fixture}")
    outs = dec.decode_many([b"x", b"die", b"y", b"\xff"])
    assert [o.status for o in outs] == ["ok", "crash", "ok", "ok"]
    assert f"killed by {signal}" in outs[1].detail
    assert outs[3].view("strict") == (0, 1)
    # the batch's death, then "die" alone (_subprocess.py, "Batches")
    assert dec.worker.restarts == 2
    assert dec.decode(b"die").status == "crash" and dec.decode(b"z").ok


def test_a_dying_workers_stderr_is_escaped_in_the_crash_detail(isolated):
    # its last line of stderr (an ANSI colour, U+202E, a Cyrillic look-alike) is in
    # the detail of the crash, as printable ASCII: once for a worker that dies on an
    # input, once for one that dies as it starts (the worker cannot run)
    died = isolated(f"{M}:dies_shouting").decode_many([b"x", b"die"])[1]
    unstarted = isolated("tests.decoders.dies_in_worker:decode").decode(b"x")
    for o in (died, unstarted):
        assert o.status == "crash" and "exited with status 3" in o.detail, o.detail
        assert o.detail.isascii() and o.detail.isprintable(), o.detail
        assert "\\u0430dmin" in o.detail
    assert "cannot run: " in unstarted.detail


def test_a_decoder_that_hangs_gives_a_timeout(isolated):
    dec = isolated(f"{M}:hangs+timeout=0.5")
    outs = dec.decode_many([b"a", b"hang", b"b"])
    assert [o.status for o in outs] == ["ok", "timeout"]  # then nothing more is sent
    assert "0.5 s" in outs[1].detail
    # the batch's hang, then "hang" alone (_subprocess.py, "Batches")
    assert dec.decode(b"b").ok and dec.worker.restarts == 2


def test_a_plugin_that_prints_does_not_corrupt_the_protocol(isolated):
    assert isolated(f"{M}:chatty").decode(b"\xc3\xa9").view("replace") == (0xE9,)


def test_an_outcome_of_the_wrong_length_is_a_crash(isolated):
    out = isolated(f"{M}:wrong_length+outcome+inprocess").decode(b"ab")
    assert out.status == "crash" and "covers 3 bytes" in out.detail


def _install_entry_point(root: Path) -> None:
    """A real installed distribution: a module and a .dist-info with entry_points.txt."""
    (root / "tmpplug_mod.py").write_text(textwrap.dedent("""
        def decode(data: bytes) -> str:
            return data.decode("utf-8")
        decode.utf8fuzz_profile = "surrogatepass"
        def broken(data):
            return ""
    """))
    dist = root / "tmpplug-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tmpplug\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[utf8fuzz.decoders]\ntmpplug = tmpplug_mod:decode\nbadplug = tmpplug_mod:nope\n"
    )


def test_entry_point_plugins_are_discovered(tmp_path, monkeypatch):
    _install_entry_point(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    found = {getattr(d, "name", None): d for d in plugin.discover()}
    dec = found["plugin:tmpplug"]
    try:
        assert dec.profile == "surrogatepass"
        assert dec.decode(EXAMPLE).view("strict") == (1, 4)
    finally:
        dec.close()
    bad = found["plugin:badplug"]
    assert "cannot load tmpplug_mod:nope" in bad.reason


def _cli(*args: str, cwd: Path, env_path: str | None = None) -> subprocess.CompletedProcess:
    import os

    exe = Path(sys.executable).parent / "utf8fuzz"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "utf8fuzz"]
    env = dict(os.environ)
    if env_path:
        env["PYTHONPATH"] = env_path
    return subprocess.run([*cmd, *args], cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=120)


def test_cli_decoder_option_loads_a_plugin_from_the_working_directory():
    local = "plugin_fixtures"  # importable from tests/decoders, the working directory
    r = _cli("diff", "--json", "--decoder", f"{local}:strict_utf8", "--decoder",
             "cpython:strict", EXAMPLE.hex(), cwd=HERE)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)["decoders"][f"plugin:{local}:strict_utf8"]
    assert got["first_error"] == [1, 4] and got["status"] == "ok"


def test_cli_lists_entry_point_plugins(tmp_path):
    _install_entry_point(tmp_path)
    r = _cli("decoders", "--json", cwd=tmp_path, env_path=str(tmp_path))
    assert r.returncode == 0, r.stderr
    listing = json.loads(r.stdout)
    assert "plugin:tmpplug" in [d["name"] for d in listing["available"]]
    assert "plugin:badplug" in [d["name"] for d in listing["unavailable"]]


def test_cli_bad_plugin_is_one_line_and_exit_2():
    r = _cli("diff", "--decoder", "no_such_module_xyz:f", "41", cwd=HERE)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "cannot import" in r.stderr


def test_the_readme_example_is_a_working_plugin(tmp_path, monkeypatch):
    readme = (HERE.parent.parent / "README.md").read_text()
    section = readme.split("## Plug in your own decoder", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "readme_decoder.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    dec = plugin.load("readme_decoder:decode+inprocess")
    assert dec.decode(bytes.fromhex("2F C0 AF 2E")).view("replace") == (0x2F, 0x2F, 0x2E)
    assert dec.decode(bytes.fromhex("F7 BF BF BF")).status == "crash"
    naive = plugin.load("readme_decoder:decode@legacy+inprocess")
    from utf8fuzz.decoders.reference import reference

    data = bytes.fromhex("E0 80 AF")
    assert naive.decode(data).view("replace") == reference("legacy").decode(data).view("replace")


def test_docs_name_every_adapter_decoder():
    from utf8fuzz.decoders import available

    doc = (HERE.parent.parent / "docs" / "decoders.md").read_text()
    for d in available():
        family = d.name.split(":")[0]
        if family in ("ref", "fast", "plugin"):
            continue
        assert f"`{d.name}`" in doc, d.name
