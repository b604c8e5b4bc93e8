"""The benchmark's inputs and output shape (its speed figures are never asserted)."""

from __future__ import annotations

import json
import random

import pytest

from utf8fuzz import bench, cli


@pytest.mark.parametrize("cls", list(bench.TARGETS))
def test_inputs_are_fixed_and_of_their_class(cls: str) -> None:
    data = bench.make_input(cls, 64 * 1024)
    assert data == bench.make_input(cls, 64 * 1024)  # fixed seed: the same bytes every run
    assert 64 * 1024 - 4 <= len(data) <= 64 * 1024
    if cls == "invalid10":
        mix = bench.make_input("mix", 64 * 1024)
        changed = sum(a != b for a, b in zip(data, mix, strict=True))
        assert 0.08 * len(data) <= changed <= 0.10 * len(data)
        assert "\ufffd" in data.decode("utf-8", "replace")
        return
    text = data.decode()  # valid UTF-8, cut at a character boundary
    top = max(map(ord, text))
    expect = {"ascii": (0, 0x7F), "latin1": (0x80, 0xFF), "cyrillic": (0x400, 0x4FF),
              "cjk": (0x3000, 0xFFFF), "emoji": (0x10000, 0x10FFFF), "mix": (0x10000, 0x10FFFF)}
    lo, hi = expect[cls]
    assert lo <= top <= hi


def test_bench_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    rc = cli.main(["bench", "--json", "--class", "ascii", "--class", "invalid10",
                   "--size", "64KiB", "--repeats", "1"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["cls"] for r in out["rows"]] == ["ascii", "invalid10"]
    for r in out["rows"]:
        assert r["cpython_mbs"] > 0 and r["fast_mbs"] > 0 and r["target"] == bench.TARGETS[r["cls"]]
    assert out["corrected"][0]["mbs"] > 0
    assert out["fast"]["selected"] and out["machine"]["cores"]


def test_bench_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "--class", "klingon"]) == 2
    assert cli.main(["bench", "--path", "neon"]) == 2
    err = capsys.readouterr().err
    assert "unknown class 'klingon'" in err and "unknown code path" in err


def test_bench_plugin_times_a_plug_in_in_its_worker(capsys: pytest.CaptureFixture[str]) -> None:
    rc = cli.main(["bench", "--plugin", "tests.engine.planted:accepts_c080+text",
                   "--inputs", "200", "--runs", "1", "--json"])
    assert rc == 0
    got = json.loads(capsys.readouterr().out)
    assert got["decoder"] == "plugin:tests.engine.planted:accepts_c080" and got["failed"] == 0
    assert [row["batch"] for row in got["rows"]] == list(bench.EXEC_BATCHES)
    # the worker's own CPU per input beside the harness's (Linux: /proc)
    assert all(row["worker_cpu_us"] >= 0 for row in got["rows"])
    assert cli.main(["bench", "--plugin", "tests.engine.planted:accepts_c080+text+inprocess"]) == 2
    assert "not with +inprocess" in capsys.readouterr().err


def test_the_pure_python_plug_in_decodes_as_cpython_strict() -> None:
    # the decoder docs/performance.md times in its worker: it must be a correct one
    rng = random.Random(7)
    cases = [bytes(rng.randrange(256) for _ in range(rng.randrange(8))) for _ in range(5000)]
    cases += [b"\xe0\xa0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xf0\x90\x80", b"a\xc2"]
    for data in cases:
        try:
            want: object = data.decode("utf-8")
        except UnicodeDecodeError as e:
            want = (e.start, e.end)
        try:
            got: object = bench.pure_python_utf8(data)
        except UnicodeDecodeError as e:
            got = (e.start, e.end)
        assert got == want, data
