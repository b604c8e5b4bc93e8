"""``utf8fuzz expect`` and ``utf8fuzz diff`` on a megabyte: they finish, within a
bounded peak RSS (measured on the child process, ``os.wait4``), and what they
print for a large input is what they print for a small one, summarized.

The time bound is only a generous subprocess timeout (the machine is shared); on
a quiet machine each command took 0.3-2.7 s and 50-126 MB on these inputs.
"""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.peak_rss import measured, peak_kib
from utf8fuzz.decoders.reference import Reference
from utf8fuzz.engine.expect import expectation, format_text, summary_text, write_json
from utf8fuzz.policies import POLICIES
from utf8fuzz.profiles import REGISTRY

MB = 1_000_000
#: Peak RSS a command may reach on a megabyte of input.
RSS_LIMIT_KIB = 200 << 10
TIMEOUT = 60.0


def _random(n: int, seed: int = 17) -> bytes:
    return random.Random(seed).randbytes(n)


def _text(n: int) -> bytes:
    """Well-formed UTF-8 of 1- to 4-byte characters, cut to whole characters."""
    rng = random.Random(5)
    pools = ((0x20, 0x7E), (0xA0, 0x7FF), (0x800, 0xD7FF), (0x10000, 0x10FFFF))
    text = "".join(chr(rng.randint(*rng.choice(pools))) for _ in range(n // 2))
    return text.encode()[:n].decode("utf-8", "ignore").encode()


INPUTS = {
    "random": lambda: _random(MB),
    "text": lambda: _text(MB),
    "continuations": lambda: b"\x80" * MB,  # an error token per byte: the most of them
}


def run_measured(args: list[str], tmp_path: Path) -> tuple[int, int, str]:
    """Run ``utf8fuzz ARGS``: exit status, peak RSS in KiB (that command's own:
    :mod:`tests.peak_rss`), and the first 64 KiB of what it printed."""
    out, peak = tmp_path / "stdout", tmp_path / "peak"
    with open(out, "wb") as f:
        try:
            p = subprocess.run(measured([sys.executable, "-m", "utf8fuzz", *args], peak),
                               stdout=f, stderr=subprocess.DEVNULL, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"utf8fuzz {' '.join(args[:2])} took over {TIMEOUT:g} s")
    with open(out, "rb") as f:
        head = f.read(1 << 16).decode("utf-8", "replace")
    return p.returncode, peak_kib(peak), head


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("large")
    paths = {}
    for name, make in INPUTS.items():
        paths[name] = root / f"{name}.bin"
        paths[name].write_bytes(make())
    return paths


@pytest.mark.parametrize(("command", "kind"), [
    ("expect", "random"), ("expect --json", "random"), ("diff", "random"),
    ("diff --json", "random"), ("expect", "continuations"), ("diff", "continuations"),
])
def test_a_megabyte_in_bounded_memory(command: str, kind: str, inputs: dict[str, Path],
                                      tmp_path: Path) -> None:
    code, rss, head = run_measured([*command.split(), "--file", str(inputs[kind])], tmp_path)
    assert code == 0
    assert rss < RSS_LIMIT_KIB, f"peak RSS {rss >> 10} MiB"
    if command == "expect":
        assert "more)" in head  # summarized, not a 50 MB line per mode
    if command == "diff":
        assert "decoders skipped" in head and "fast:unicode" in head


def test_expect_text_on_a_megabyte_of_text(inputs: dict[str, Path], tmp_path: Path) -> None:
    code, rss, head = run_measured(["expect", "--file", str(inputs["text"])], tmp_path)
    assert code == 0 and rss < RSS_LIMIT_KIB
    assert head.splitlines()[-1].strip() == "no error (valid)"


# -- what is printed: the small input's output, summarized ---------------------------


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300), st.sampled_from(sorted(REGISTRY)), st.sampled_from(POLICIES))
def test_expect_json_is_written_exactly_as_the_expectation_dumps(
    data: bytes, profile: str, policy: str
) -> None:
    buf = io.StringIO()
    write_json(data, buf.write, profile, policy)
    exp = expectation(data, profile, policy)
    assert buf.getvalue() == json.dumps(exp, indent=2)
    assert summary_text(data, profile, policy) == format_text(exp)


@pytest.mark.parametrize("n", [16383, 16384, 16385, 40000])  # around write_json's pieces
def test_expect_json_across_pieces(n: int) -> None:
    data = _random(n, seed=n)
    buf = io.StringIO()
    write_json(data, buf.write, "corrected", "per-byte")
    exp = expectation(data, "corrected", "per-byte")
    assert buf.getvalue() == json.dumps(exp, indent=2)
    assert summary_text(data, "corrected", "per-byte") == format_text(exp)


def test_expect_text_lists_the_first_items_and_counts_the_rest() -> None:
    data = b"\x80" * 1500
    text = format_text(expectation(data))
    lines = text.splitlines()
    assert lines[0].endswith("policy: maximal-subpart")
    assert "(+500 more bytes)" in lines[0]
    assert lines[1].startswith("substitute output: U+FFFD@0 ")
    assert lines[1].endswith("U+FFFD@999 ... (+500 more)")
    assert lines[2].endswith("error at 0: 80 (illegal)")
    assert "... (+1400 more errors)" in text
    assert "skip       output: (none)" in text


def _diff(*args: str) -> dict[str, object]:
    p = subprocess.run([sys.executable, "-m", "utf8fuzz", "diff", "--json", *args],
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    result: dict[str, object] = json.loads(p.stdout)
    return result


def test_diff_summary_holds_the_head_and_the_counts(tmp_path: Path) -> None:
    data = _random(5000, seed=3)
    f = tmp_path / "in.bin"
    f.write_bytes(data)
    got = _diff("--file", str(f), "--decoder", "ref:unicode:maximal-subpart",
                "--decoder", "cpython:replace", "--decoder", "cpython:strict")
    assert got["length"] == 5000 and got["input"] == data[:32].hex()
    decs = got["decoders"]
    assert isinstance(decs, dict)
    ref = Reference("unicode").decode(data)
    real = data.decode("utf-8", "replace")
    r = decs["ref:unicode:maximal-subpart"]
    assert r["tokens"] == [t.as_list() for t in ref.tokens[:32]]
    assert r["counts"] == {"tokens": len(ref.tokens), "replace": len(ref.tokens)}
    assert r["first_error"] == list(ref.view("strict")) and r["reason"] == ref.view("reason")
    rep = decs["cpython:replace"]
    assert rep["replace"] == [ord(c) for c in real[:32]]
    assert rep["counts"] == {"replace": len(real)}
    with pytest.raises(UnicodeDecodeError) as e:
        data.decode("utf-8")
    assert decs["cpython:strict"]["first_error"] == [e.value.start, e.value.end]


def test_diff_groups_by_the_whole_outcome(tmp_path: Path) -> None:
    # two references that agree on 5000 ASCII bytes; then on a tail past what the
    # summary shows, which they read differently (C0 80: an error in unicode,
    # U+0000 in legacy): one group, then two
    f = tmp_path / "in.bin"
    names = ["ref:unicode:maximal-subpart", "ref:legacy:maximal-subpart"]
    for tail, groups in ((b"", 1), (b"\xc0\x80", 2)):
        f.write_bytes(b"a" * 5000 + tail)
        p = subprocess.run([sys.executable, "-m", "utf8fuzz", "diff", "--file", str(f),
                            *(a for n in names for a in ("--decoder", n))],
                           capture_output=True, text=True, timeout=TIMEOUT,
                           env={**os.environ, "COLUMNS": "200"})
        assert p.returncode == 0, p.stderr
        assert p.stdout.count("tokens: ") == groups, p.stdout[:3000]


def test_diff_skips_slow_decoders_over_64_kib_unless_named(tmp_path: Path) -> None:
    f = tmp_path / "in.bin"
    f.write_bytes(b"\xe2\x82\xac" * 30000)  # 90 kB of euro signs
    got = _diff("--file", str(f), "--profile", "unicode")
    skipped = got["skipped"]
    assert isinstance(skipped, list) and "node:buffer" in skipped and "fast:unicode" in skipped
    decs = got["decoders"]
    assert isinstance(decs, dict)
    assert "ref:unicode:maximal-subpart" in decs and "node:buffer" not in decs
    named = _diff("--file", str(f), "--decoder", "fast:unicode")
    assert "skipped" not in named
    decs = named["decoders"]
    assert isinstance(decs, dict)
    fast = decs["fast:unicode"]
    assert fast["counts"] == {"tokens": 30000, "replace": 30000}
    assert fast["first_error"] is None and fast["replace"] == [0x20AC] * 32


def test_large_hostile_input_is_never_printed_raw(tmp_path: Path) -> None:
    hostile = (b"\x1b[2J" + "\u202e".encode() + b"\x00\x07") * 1000
    f = tmp_path / "in.bin"
    f.write_bytes(hostile)
    for cmd in (["diff"], ["diff", "--json"], ["expect"], ["expect", "--json"]):
        p = subprocess.run([sys.executable, "-m", "utf8fuzz", *cmd, "--file", str(f)],
                           capture_output=True, text=True, timeout=TIMEOUT)
        assert p.returncode == 0, p.stderr
        for bad in ("\x1b", "\u202e", "\x00", "\x07"):
            assert bad not in p.stdout, cmd


@pytest.mark.parametrize("data", [
    "héllo wörld €😀 ".encode() * 300 + b"\xc0\x80",
    _random(5000, seed=11),
    b"a" * 4000 + b"\xed\xa0\x80" + b"b" * 1000 + b"\xf0\x9f",
    b"\xfe\xff" * 2600,
], ids=["text-then-overlong", "random", "surrogate-and-truncated", "fe-ff"])
def test_the_summary_groups_decoders_as_the_full_outcomes_do(data: bytes) -> None:
    from utf8fuzz import decoders
    from utf8fuzz.commands.diff import _outcome, _summarize, _summary

    def partition(keys: list[tuple[str, object]]) -> list[tuple[str, ...]]:
        groups: dict[object, list[str]] = {}
        for name, key in keys:
            groups.setdefault(key, []).append(name)
        return sorted(map(tuple, groups.values()))

    decs = decoders.available()
    # the small input's grouping (diff._print_text): the whole outcome's rows
    full = [(d.name, json.dumps([o.status, o.detail, sorted(o.shows), _summary(o)]))
            for d in decs for o in [d.decode(data)]]
    summarized = [(d.name, _summarize(d, _outcome(d, data), data).key) for d in decs]
    assert partition(summarized) == partition(full)


# -- inputs over the limit: refused with one line, their rest never read ---------------


@pytest.mark.parametrize("command", ["diff", "expect", "document"])
def test_an_endless_file_is_refused_in_one_line_having_read_one_byte_past_the_limit(
    command: str, tmp_path: Path
) -> None:
    """``/dev/zero`` never ends: without a limit the command reads until MemoryError."""
    code, rss, _ = run_measured([command, "--file", "/dev/zero"], tmp_path)
    p = subprocess.run([sys.executable, "-m", "utf8fuzz", command, "--file", "/dev/zero"],
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert code == p.returncode == 2
    assert rss < RSS_LIMIT_KIB
    assert p.stdout == ""
    assert p.stderr.count("\n") == 1 and "longer than 1,048,576 bytes" in p.stderr
    assert "--max-bytes" in p.stderr and "Traceback" not in p.stderr


def test_max_bytes_moves_the_limit_both_ways(inputs: dict[str, Path]) -> None:
    """One megabyte (10^6 bytes) is under the default 2^20; ``--max-bytes`` lowers the
    limit below it, and takes exactly that many bytes."""
    f = inputs["random"]
    small = subprocess.run([sys.executable, "-m", "utf8fuzz", "expect", "--file", str(f),
                            "--max-bytes", "999999"], capture_output=True, text=True,
                           timeout=TIMEOUT)
    assert small.returncode == 2 and "longer than 999,999 bytes" in small.stderr
    exact = subprocess.run([sys.executable, "-m", "utf8fuzz", "expect", "--json", "--file",
                            str(f), "--max-bytes", str(MB)], capture_output=True,
                           timeout=TIMEOUT)
    assert exact.returncode == 0 and len(bytes.fromhex(json.loads(exact.stdout)["input"])) == MB


def test_hex_over_the_limit_a_bad_limit_and_convert_are_one_line() -> None:
    for args, said in ((["expect", "--max-bytes", "2", "41 42 43"], "longer than 2 bytes"),
                       (["diff", "--max-bytes", "-1", "41"], "not a negative one"),
                       (["convert", "--to", "utf8", "--max-bytes", "1", "/dev/zero", "/dev/null"],
                        "longer than 1 bytes")):
        p = subprocess.run([sys.executable, "-m", "utf8fuzz", *args], capture_output=True,
                           text=True, timeout=TIMEOUT)
        assert p.returncode == 2 and p.stdout == "", args
        assert said in p.stderr and "Traceback" not in p.stderr, p.stderr
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        assert len(lines) <= 2, p.stderr  # usage + error
