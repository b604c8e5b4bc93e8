"""Paths a user names (convert's output, report's --out, bench --loop's --tree) and
what a tree's failing run printed come back to the terminal escaped."""

from __future__ import annotations

import shutil
from pathlib import Path

import utf8fuzz
from tests.cli.hostile import HOSTILE, HOSTILE_ESCAPED, SAID, SAID_ESCAPED, assert_no_raw, run


def test_convert_names_a_hostile_output_escaped(tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_bytes(b"hi\n")
    p = run("convert", "--to", "corrected", str(src), str(tmp_path / HOSTILE))
    assert p.returncode == 0, p.stderr
    assert_no_raw(p)
    assert p.stdout == f"wrote 3 bytes to {tmp_path}/{HOSTILE_ESCAPED}\n"
    assert (tmp_path / HOSTILE).read_bytes() == b"hi\n"


def test_report_names_a_hostile_out_dir_escaped(tmp_path: Path) -> None:
    (tmp_path / "corpus").mkdir()
    out = tmp_path / HOSTILE
    p = run("report", "--corpus", str(tmp_path / "corpus"), "--out", str(out),
            "--date", "2024-01-02")
    assert p.returncode == 0, p.stderr
    assert_no_raw(p)
    assert p.stdout == (f"report for 0 corpus entries: {tmp_path}/{HOSTILE_ESCAPED}/"
                        "2024-01-02/report.html\n")


def _loop(tree: Path) -> list[str]:
    return ["bench", "--loop", "--tree", str(tree), "--inputs", "2", "--warmup", "0",
            "--runs", "1"]


def test_bench_loop_names_a_hostile_tree_escaped(tmp_path: Path) -> None:
    tree = tmp_path / HOSTILE
    shutil.copytree(Path(utf8fuzz.__file__).parent, tree / "utf8fuzz")
    p = run(*_loop(tree))
    assert p.returncode == 0, p.stderr
    assert_no_raw(p)
    assert f"current: {tmp_path}/{HOSTILE_ESCAPED}\n" in p.stdout


def test_bench_loop_failing_tree_output_is_escaped(tmp_path: Path) -> None:
    # the tree's loop dies and its traceback, quoting the message, becomes ours
    (tmp_path / "utf8fuzz").mkdir()
    (tmp_path / "utf8fuzz" / "__init__.py").write_text(f"raise RuntimeError({SAID!r})\n",
                                                      encoding="utf-8")
    p = run(*_loop(tmp_path))
    assert p.returncode == 1
    assert_no_raw(p)
    assert p.stderr.startswith(f"utf8fuzz bench --loop: the loop failed in {tmp_path}")
    assert f"RuntimeError: {SAID_ESCAPED}\n" in p.stderr
