"""``utf8fuzz bench --loop`` (utf8fuzz.engine.loop_bench): the stream is fixed by its
seed, and a tiny run has the documented shape. No timing is asserted."""

from __future__ import annotations

import shutil
from pathlib import Path

from utf8fuzz.engine import loop_bench

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


def test_bench_output_shape(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The whole path: stream file, priming, a child process on this tree; --callgrind
    without valgrind says so and still gives the timing."""
    monkeypatch.setattr(loop_bench.shutil, "which", lambda _: None)
    assert loop_bench.main(["--inputs", "40", "--warmup", "8", "--runs", "1",
                            "--callgrind"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("fuzz loop (Finder.queue), stream seed 1: 40 inputs after 8")
    assert "sha256 " in lines[0]
    assert " cores, Python " in lines[1]
    assert lines[2].startswith("current: ")
    assert " decoders + " in lines[3] and "entries added:" in lines[3]
    assert lines[4].startswith("  exec/s (CPU): ")
    assert lines[5] == "valgrind is not installed: no instruction counts"
