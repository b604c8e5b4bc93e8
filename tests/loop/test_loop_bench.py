"""``utf8fuzz bench --loop`` (utf8fuzz.loop.loop_bench): the stream is fixed by its
seed, and a tiny run has the documented shape. No timing is asserted."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from utf8fuzz.engine.screening import SlowShare
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
                            "--long-inputs", "3", "--long-warmup", "1", "--callgrind",
                            "--parts", "none"]) == 0
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
    assert lines[11] == "issue 27's figures (medians of the runs; ratio: median of the pairs'):"
    assert lines[12].startswith("  in-process decoders, short stream: ")
    assert lines[13].startswith("  in-process decoders, long stream: ")
    assert lines[14].startswith("(the whole run: ") and len(lines) == 15


def test_bench_json_without_the_long_stream() -> None:
    r = loop_bench.bench(inputs=4, warmup=2, runs=1, long_inputs=0, root=ROOT)
    assert "long_stream" not in r and "long" not in r["trees"]["current"]
    assert len(r["trees"]["current"]["runs"]) == 1
    cur = r["trees"]["current"]
    assert len(cur["bytes_per_s_runs"]) == 1 and cur["bytes_per_s"] > 0


# -- issue 27's parts: their plumbing on tiny counts, and the summary's verdicts ------


def test_parts_by_name() -> None:
    assert loop_bench.parts_of("planted,all-decoders") == ("all-decoders", "planted")
    assert loop_bench.parts_of("none") == ()
    assert loop_bench.parts_of("all") == loop_bench.PARTS[2:] == loop_bench.parts_of("plugin,all")
    with pytest.raises(ValueError, match="unknown part bogus"):
        loop_bench.parts_of("plugin,bogus")
    with pytest.raises(ValueError, match="--part-runs"):
        loop_bench.bench(inputs=4, warmup=2, parts=("plugin",), part_runs=0, root=ROOT)


def test_the_planted_part_says_so_outside_a_checkout(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    # an installed package has no tests/engine/planted.py: one line, not a FAILED row
    monkeypatch.setattr(loop_bench, "SRC", tmp_path / "site-packages")
    with pytest.raises(ValueError, match="installed package does not have"):
        loop_bench.parts_of("all")
    assert loop_bench.parts_of("plugin") == ("plugin",)


def test_share_watch_counts_interesting_inputs_the_share_missed() -> None:
    """Each input that brought coverage or a new set of divergences is interesting;
    one the share did not give the slow decoders is missed (a real SlowShare)."""
    w = loop_bench._ShareWatch(SlowShare(every=1000, first=2))
    taken = [w.wants(False), w.wants(False),  # the first two: given, not interesting
             w.wants(False, ["a"]), w.wants(False, ["a"]),  # a new set, then met again
             w.wants(True), w.wants(False)]
    assert taken == [True, True, True, False, True, False]
    assert (w.total, w.taken, w.interesting, w.missed) == (6, 4, 2, 0)
    assert w.asked == 6  # the share's own counts show through

    class Stingy:  # a share that gives nothing: every interesting input is missed
        def wants(self, novel: bool, divergences: object = ()) -> bool:
            return False

    w = loop_bench._ShareWatch(Stingy())
    for novel, divs in ((True, ()), (False, ["b"]), (False, ["b"]), (False, ["b", "c"])):
        w.wants(novel, divs)
    assert (w.interesting, w.missed, w.taken) == (3, 3, 0)


def test_plugin_part_gives_the_worker_every_input(tmp_path: Path) -> None:
    stream = loop_bench.make_stream(60, seed=3, root=ROOT)
    r = loop_bench.run_decoders(stream, 20, None, [loop_bench.PLUGIN], every_input=True,
                                minimize_seconds=0.05)
    assert r["inputs"] == 40 and r["out_of_process"] == 1
    assert r["seen_measured"] == {f"plugin:{loop_bench.PLUGIN}": 40}
    assert r["share"]["given"] == r["share"]["inputs"] == 60 and r["share"]["missed"] == 0
    assert r["wall_s"] > 0 and r["exec_per_s"] > 0 and r["others_cpu_s"] >= 0


def test_structured_buffers_are_fixed_by_their_seed() -> None:
    # (run_structured itself is left to the benchmark: drawing the first input builds
    # every profile's strategies, seconds of a test's time)
    buffers = loop_bench.make_buffers(6, seed=5)
    assert buffers == loop_bench.make_buffers(6, seed=5) != loop_bench.make_buffers(6, 6)
    assert all(b.startswith(b"\xffHYP") and len(b) <= 4 + loop_bench.MAX_LEN for b in buffers)


def _runs(**figures: float) -> dict[str, list[dict[str, float]]]:
    return {"runs": [dict(figures)]}


def test_summary_has_a_row_per_figure_with_targets_and_planted_verdicts() -> None:
    """The summary reads the parts' runs (made up here): one row per figure, issue
    27's target met or missed, and a planted bug needing more inputs than the
    baseline, or missed where the baseline found it, is WORSE."""
    share = {"inputs": 100, "given": 40, "interesting": 7, "missed": 0}
    alld = {"exec_per_s": 5200.0, "exec_per_cpu_s": 6000.0, "out_of_process": 2,
            "seen_total": {"go:valid": 40, "java:string": 40}, "share": share}

    def planted(c080: int | None, trunc: int) -> dict[str, Any]:
        found = {"c080": c080 and {"executions": c080, "seconds": 1.0},
                 "trunc": {"executions": trunc, "seconds": 0.5}}
        return {"atheris": [{"decoders": ["c080", "trunc"], "found": found,
                             "executions": 4000}]}

    result = {
        "trees": {"current": {"runs": [9000.0]}, "baseline": {"runs": [10000.0]}},
        "parts": {
            "all-decoders": {"current": {"runs": [alld]},
                             "baseline": _runs(exec_per_s=1000.0, exec_per_cpu_s=2000.0)},
            "hypothesis": {"current": _runs(exec_per_s=1500.0),
                           "baseline": _runs(exec_per_s=300.0)},
            "plugin": {"error": "part plugin failed in /x (exit 1):\nTraceback\nOSError: no"},
            "planted": {"current": planted(None, 30), "baseline": planted(200, 40)}}}
    rows = {(r["figure"], r["unit"]): r for r in loop_bench.summary(result)}
    short = rows["in-process decoders, short stream", "exec/s (CPU)"]
    assert (short["current"], short["baseline"], short["ratio"]) == (9000.0, 10000.0, 0.9)
    a = rows["(a) all decoders, one core", "exec/s (wall)"]
    assert a["met"] is True and a["ratio"] == 5.2 and "7 interesting" in a["note"]
    assert rows["(a) all decoders, one core", "exec per CPU-s (all processes)"]["ratio"] == 3.0
    assert rows["(b) Hypothesis engine, in-process decoders", "inputs/s (CPU)"]["met"] is False
    assert "error" in rows["(c) pure-Python plug-in in its worker", "inputs/s (wall)"]
    c080 = rows["(d) atheris: c080", "inputs to find (per seed)"]
    trunc = rows["(d) atheris: trunc", "inputs to find (per seed)"]
    assert (c080["current_runs"], c080["current"], c080["met"]) == ([None], 4000, False)
    assert (trunc["current"], trunc["baseline"], trunc["met"]) == (30, 40, True)
    text = "\n".join(loop_bench.format_table(loop_bench.summary(result), True))
    assert "target >= 5,000: met" in text and "target >= 2,000: MISSED" in text
    assert "FAILED: part plugin failed in /x (exit 1): ... OSError: no" in text
    assert "(d) atheris: c080: inputs to find (per seed) none (sum 4,000" in text
    assert text.count("WORSE") == 1 and text.count("no worse") == 1
