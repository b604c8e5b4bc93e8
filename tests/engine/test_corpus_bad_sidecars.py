"""Any sidecar, however damaged or hostile, is one bad entry named by its path, and
every other entry still loads: in ``corpus.load``/``check`` (and so the pytest
plugin), the report's loader, replay, prune and ``save`` (docs/corpus.md,
"Untrusted sidecars")."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine import handmade
from utf8fuzz.engine import corpus, replay
from utf8fuzz.report.load import load_corpus


def good_corpus(root: Path) -> list[Path]:
    return [handmade.save(root, "A", b"\xc0\x80"), handmade.save(root, "B", b"\xf0\x9f\x98A")]


Maker = Callable[[dict[str, Any]], bytes]


def raw(b: bytes) -> Maker:
    return lambda good: b


def edited(change: Callable[[dict[str, Any]], object]) -> Maker:
    """The good sidecar with ``change`` applied to it."""
    def make(good: dict[str, Any]) -> bytes:
        change(good)
        return json.dumps(good).encode()
    return make


def outcome(side: dict[str, Any]) -> dict[str, Any]:
    return side["outcomes"][handmade.REFERENCE]["outcome"]  # type: ignore[no-any-return]


def views(side: dict[str, Any], v: dict[str, Any]) -> None:
    del outcome(side)["tokens"]
    outcome(side)["views"] = v


DEEP = 100_000
# case -> (what the sidecar is made of, what the problem says)
CASES: dict[str, tuple[Maker, str]] = {
    "deep list": (raw(b"[" * DEEP), "nested too deeply"),
    "deep object": (raw(b'{"a":' * DEEP + b"1" + b"}" * DEEP), "nested too deeply"),
    "deep value": (raw(b'{"format": 1, "expectation": ' + b"[" * DEEP + b"]" * DEEP + b"}"),
                   "nested too deeply"),
    "invalid UTF-8": (raw(b'{"format": 1, "signature": "\xff\xfe"}'), "not UTF-8"),
    "not an object": (raw(b'"just a string"'), "not a JSON object"),
    "too large": (raw(b'{"x": "' + b"a" * corpus.MAX_SIDECAR_BYTES + b'"}'),
                  "over the 8 MiB limit"),
    "huge int": (raw(b'{"format": ' + b"9" * 5000 + b"}"), "not valid JSON"),
    "huge signature": (edited(lambda s: s.update(signature="u/crash/" + "x" * DEEP + "/w")),
                       "'signature' is not a string of at most"),
    "decoders is 5": (edited(lambda s: s.update(decoders=5)), "'decoders' is not"),
    "format is a string": (edited(lambda s: s.update(format="1")), "'format' is not"),
    "outcomes is a list": (edited(lambda s: s.update(outcomes=[])), "'outcomes' is not"),
    "file is a number": (edited(lambda s: s.update(file=7)), "'file' is not"),
    "file has a NUL": (edited(lambda s: s.update(file="inputs/\x00.bin")),
                       "'file' is not a file name"),
    "input is a list": (edited(lambda s: s.update(input=[1, 2])), "'input' is not"),
    "found.engine is an object": (edited(lambda s: s["found"].update(engine={"x": 1})),
                                  "found.engine is not"),
    "first_difference.offset is text": (
        edited(lambda s: s.update(first_difference={"offset": "0"})),
        "first_difference.offset is not"),
    "record is a list": (edited(lambda s: s["outcomes"].update(w=[])), "outcomes['w'] is not"),
    "shows is text": (edited(lambda s: s["outcomes"][handmade.REFERENCE].update(shows="all")),
                      ".shows is not"),
    "outcome status unknown": (edited(lambda s: outcome(s).update(status="weird")),
                               ".status is not"),
    "outcome length is text": (edited(lambda s: outcome(s).update(length="3")),
                               ".length is not"),
    "token value is text": (edited(lambda s: outcome(s).update(
        tokens=[["char", "x", 0, 1], ["char", 0x41, 1, 2]])), ".tokens is not"),
    "tokens overlap": (edited(lambda s: outcome(s).update(
        tokens=[["error", None, 0, 2], ["error", None, 1, 3]])), "does not parse"),
    "outcome of another length": (edited(lambda s: outcome(s).update(
        tokens=[["char", 0x41, 0, 1]], length=1)), "has length 1"),
    "view of the wrong shape": (edited(lambda s: views(s, {"spans": [[0]]})),
                                ".views.spans is not"),
    "unknown view": (edited(lambda s: views(s, {"shout": [1]})), ".views is not"),
    "expectation is a list": (edited(lambda s: s.update(expectation=[])),
                              "'expectation' is not"),
}


def write_bad(root: Path, case: str) -> Path:
    """A good entry for input E0 80 41, then its sidecar replaced by the case."""
    path = handmade.save(root, "C", b"\xe0\x80A")
    path.write_bytes(CASES[case][0](json.loads(path.read_text())))
    return path


def assert_one_bad_entry(root: Path, bad: Path, good: list[Path], says: str) -> None:
    entries, problems = corpus.load(root)  # what the pytest plugin collects
    assert [e.path for e in entries] == sorted(good)
    assert [p.path for p in problems] == [bad]
    assert says in problems[0].message
    assert str(problems[0]).isascii() and str(problems[0]).isprintable()
    entries, problems, _ = corpus.check(root)
    assert [e.path for e in entries] == sorted(good) and [p.path for p in problems] == [bad]
    report = load_corpus(root)
    assert sorted(e.path for e in report.entries) == sorted(good)
    assert [c.path for c in report.corrupt] == [bad]
    assert replay.prune(root, dry_run=True) == []
    assert replay.prune(root) == []
    assert bad.exists() or bad.is_symlink()


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_sidecar_is_one_named_problem_everywhere(tmp_path: Path, case: str) -> None:
    good = good_corpus(tmp_path)
    bad = write_bad(tmp_path, case)
    assert_one_bad_entry(tmp_path, bad, good, CASES[case][1])


@pytest.mark.parametrize("case", sorted(CASES))
def test_save_replaces_a_bad_sidecar_of_its_signature(tmp_path: Path, case: str) -> None:
    path = handmade.save(tmp_path, "D", b"\xc0\xaf\xc0\xaf")
    path.write_bytes(CASES[case][0](json.loads(path.read_text())))
    assert corpus.save(tmp_path, handmade.sidecar("D", b"\xc0\xaf\xc0\xaf"),
                       b"\xc0\xaf\xc0\xaf") == (path, True)
    (e,), problems = corpus.load(tmp_path)
    assert e.path == path and e.data == b"\xc0\xaf\xc0\xaf" and not problems


def test_a_directory_named_like_a_sidecar(tmp_path: Path) -> None:
    good = good_corpus(tmp_path)
    bad = tmp_path / "entries" / "0123456789abcdef.json"
    bad.mkdir()
    (bad / "inner.json").write_text("{}")
    assert_one_bad_entry(tmp_path, bad, good, "not a regular file")


def check_in_a_child(root: Path) -> subprocess.CompletedProcess[str]:
    """``utf8fuzz corpus check root`` in a child process with bounded memory and time,
    so that a reader which reads forever or waits forever fails this test instead of
    exhausting the machine or hanging the suite."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run([sys.executable, "-m", "utf8fuzz", "corpus", "check", str(root)],
                          capture_output=True, text=True, timeout=120, preexec_fn=limit)


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_a_special_file_named_like_a_sidecar_is_refused_unread(tmp_path: Path,
                                                                special: str) -> None:
    good = good_corpus(tmp_path)
    bad = tmp_path / "entries" / "0123456789abcdef.json"
    if special == "fifo":
        os.mkfifo(bad)  # opened for reading, it waits for a writer that never comes
    else:
        bad.symlink_to(special)  # read whole, it never ends
    p = check_in_a_child(tmp_path)
    assert p.returncode == 1, p.stderr
    says = "not a regular file" if special == "fifo" else "a symlink that leads out"
    assert f"BAD  {bad}: {says}" in p.stdout
    assert "2 good, 1 bad entry" in p.stdout
    assert [e.path for e in corpus.load(tmp_path)[0]] == sorted(good)


def test_the_pytest_plugin_fails_one_item_per_bad_sidecar(tmp_path: Path) -> None:
    good_corpus(tmp_path)
    for i, case in enumerate(["deep list", "decoders is 5", "invalid UTF-8", "too large"]):
        bad = (tmp_path / "entries" / f"{i:016x}.json")
        bad.write_bytes(CASES[case][0]({}))
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir",
         str(tmp_path), f"--utf8fuzz-corpus={tmp_path}", "-k", "corrupt", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr  # tests failed; not an internal error
    assert "4 failed" in p.stdout, p.stdout
    assert "Traceback" not in p.stdout + p.stderr


# Any JSON value in place of any key (or a key's field) of a good sidecar.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                 max_size=3),
    max_leaves=8)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_value_anywhere_is_a_problem_or_an_entry_never_an_exception(
        tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    root = tmp_path_factory.mktemp("c")
    path = handmade.save(root, "E", b"\xe0\x80A")
    side = json.loads(path.read_text())
    where: dict[str, Any] = side
    for _ in range(data.draw(st.integers(0, 3))):
        subs = [k for k, v in where.items() if isinstance(v, dict)]
        if not subs:
            break
        where = where[data.draw(st.sampled_from(sorted(subs)))]
    key = data.draw(st.sampled_from(sorted(where)) | st.text(max_size=4))
    where[key] = data.draw(json_values)
    path.write_text(json.dumps(side))
    entries, problems = corpus.load(root)
    assert len(entries) + len(problems) == 1
    corpus.check(root)
    report = load_corpus(root)
    assert len(report.entries) + len(report.corrupt) == 1
    replay.prune(root, dry_run=True)
