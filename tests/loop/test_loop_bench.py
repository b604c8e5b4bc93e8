"""``utf8fuzz bench --loop`` (utf8fuzz.loop.loop_bench): the stream is fixed by its
seed, and a tiny run has the documented shape. No timing is asserted."""

from __future__ import annotations

import shutil
from pathlib import Path

from utf8fuzz.loop import loop_bench

ROOT = Path(__file__).resolve().parents[2]


def test_same_seed_same_stream() -> None:
    a = loop_bench.make_stream(300, seed=7, root=ROOT)
    assert a == loop_bench.make_stream(300, seed=7, root=ROOT)
    assert loop_bench.digest(a) == loop_bench.digest(loop_bench.make_stream(300, 7, ROOT))
    assert a != loop_bench.make_stream(300, seed=8, root=ROOT)
    assert len(a) == 300 and all(len(x) <= loop_bench.MAX_LEN for x in a)
    assert len(set(a)) > 250  # mutated, not the seeds replayed


def test_run_loop_in_process(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "corpus" / "entries", tmp_path / "entries")
    stream = loop_bench.make_stream(48, seed=3, root=ROOT)
    r = loop_bench.run_loop(stream, 16, tmp_path, minimize_seconds=0.05)
    assert r["inputs"] == 32 and r["warmup"] == 16
    assert r["decoders"] > 0 and r["references"] > 0
    assert isinstance(r["exec_per_s"], float) and isinstance(r["new_entries"], int)
    assert Path(r["tree"], "utf8fuzz").is_dir()


def test_same_seed_same_long_stream() -> None:
    a = loop_bench.make_long_stream(12, seed=7)
    assert a == loop_bench.make_long_stream(12, seed=7)
    assert a != loop_bench.make_long_stream(12, seed=8)
    assert all(64 < len(x) <= 65536 + 64 for x in a)
    # the digest takes lengths past 255 (one byte held the short stream's)
    assert len(loop_bench.digest(a)) == 16 != loop_bench.digest(a[1:])
    assert loop_bench.digest([b"A" * 300]) != loop_bench.digest([b"A" * 299, b"A"])
    # short streams keep the digest the docs name them by
    assert loop_bench.digest([b"ab", b""]) == loop_bench.hashlib.sha256(
        b"\x02ab\x00").hexdigest()[:16]


def test_run_loop_reports_bytes_and_memory() -> None:
    stream = loop_bench.make_long_stream(5, seed=3)
    r = loop_bench.run_loop(stream, 1, None, minimize_seconds=0.05)
    assert r["inputs"] == 4 and r["bytes"] == sum(map(len, stream[1:]))
    rss, (peak0, peak1) = r["rss_kib"], r["peak_rss_kib"]
    assert len(rss) == 5  # after the warm-up, each quarter, the end
    # the current RSS (/proc/self/statm) and the peak (ru_maxrss) are two counters the
    # kernel keeps apart: each is checked against itself, never one against the other
    assert all(x > 0 for x in rss) and 0 < peak0 <= peak1


def test_bench_output_shape(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The whole path: both stream files, priming, child processes on this tree;
    --callgrind without valgrind says so and still gives the timing."""
    monkeypatch.setattr(loop_bench.shutil, "which", lambda _: None)
    assert loop_bench.main(["--inputs", "40", "--warmup", "8", "--runs", "1",
                            "--long-inputs", "3", "--long-warmup", "1", "--callgrind"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("fuzz loop (Finder.queue), stream seed 1: 40 inputs after 8")
    assert "sha256 " in lines[0]
    assert lines[1].startswith("long stream seed 1 (engine.long): 3 inputs after 1 to warm up, ")
    assert " on average), sha256 " in lines[1]
    assert " cores, Python " in lines[2]
    assert lines[3].startswith("current: ")
    assert " decoders + " in lines[4] and "entries added:" in lines[4]
    assert lines[5].startswith("  exec/s (CPU): ") and "; MB/s (CPU): " in lines[5]
    assert lines[6].startswith("  long: exec/s (CPU): ") and "; MB/s (CPU): " in lines[6]
    assert lines[7].startswith("  long: peak RSS growth over the measured inputs (KiB): +")
    assert lines[8].startswith("  long: RSS after the warm-up, each quarter, the end (MiB): ")
    assert "entries added:" in lines[8]
    assert lines[9] == "valgrind is not installed: no instruction counts"


def test_bench_json_without_the_long_stream() -> None:
    r = loop_bench.bench(inputs=4, warmup=2, runs=1, long_inputs=0, root=ROOT)
    assert "long_stream" not in r and "long" not in r["trees"]["current"]
    assert len(r["trees"]["current"]["runs"]) == 1
    cur = r["trees"]["current"]
    assert len(cur["bytes_per_s_runs"]) == 1 and cur["bytes_per_s"] > 0
