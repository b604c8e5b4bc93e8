import json
import multiprocessing as mp

from tests.engine import handmade
from tests.engine.planted import planted_c080, planted_truncated4
from utf8fuzz.engine import corpus, replay
from utf8fuzz.loop.finder import Finder


def find(tmp_path, decoder, data):
    f = Finder([decoder], tmp_path, "manual", minimize_seconds=5)
    f.consider(data)
    return f


def test_entry_is_saved_with_the_documented_sidecar(tmp_path):
    f = find(tmp_path, planted_c080(), bytes.fromhex("41 C0 80 42"))
    (x,) = f.found
    side = json.loads(x.path.read_text())
    assert side["signature"] == "unicode/accepts-ill-formed/non-shortest-form/planted:accepts-c080"
    assert side["input"] == "c080" and side["found"]["original_size"] == 4
    assert (tmp_path / side["file"]).read_bytes() == b"\xc0\x80"
    assert set(side["outcomes"]) == {"planted:accepts-c080", "ref:unicode:maximal-subpart"}
    assert side["expectation"]["substitute"]["output"] == ["U+FFFD", "U+FFFD"]
    entries, problems, notes = corpus.check(tmp_path)
    assert [e.signature for e in entries] == [side["signature"]] and not problems and not notes


def test_same_signature_is_one_entry_and_only_a_shorter_input_replaces_it(tmp_path):
    f = find(tmp_path, planted_c080(), b"\xc0\x80")
    side = dict(f.found[0].sidecar)
    _path, changed = corpus.save(tmp_path, side, b"A\xc0\x80")
    assert not changed
    assert len(list((tmp_path / "entries").glob("*.json"))) == 1


def test_another_cause_is_its_own_entry_named_by_its_finding(tmp_path):
    # Another cause under a saved signature: entries/<signature id>_<finding id>.json,
    # beside the first; a file whose name claims another finding than its sidecar
    # records does not load (hostile: a renamed sidecar is one named problem).
    f = find(tmp_path, planted_c080(), b"\xc0\x80")
    side = dict(f.found[0].sidecar)
    side["finding"] = {**side["finding"], "id": "0123456789abcdef", "rule": "other"}
    path, changed = corpus.save(tmp_path, side, b"\xc0\x80", cause=True)
    assert changed and path.name == f"{f.found[0].path.stem}_0123456789abcdef.json"
    entries, problems = corpus.load(tmp_path)
    assert len(entries) == 2 and not problems
    assert corpus.signature_ids(tmp_path) == {f.found[0].path.stem}
    wrong = path.with_name(f"{f.found[0].path.stem}_fedcba9876543210.json")
    path.rename(wrong)
    entries, problems = corpus.load(tmp_path)
    assert len(entries) == 1 and [p.path for p in problems] == [wrong]
    assert "does not match its signature" in problems[0].message


def test_corrupt_sidecar_is_reported_by_path_and_others_still_load(tmp_path):
    find(tmp_path, planted_c080(), b"\xc0\x80")
    find(tmp_path, planted_truncated4(), b"\xf0\x9f\x98A")
    bad = tmp_path / "entries" / "0123456789abcdef.json"
    bad.write_text("{not json")
    entries, problems = corpus.load(tmp_path)
    assert len(entries) == 2
    assert [p.path for p in problems] == [bad] and "not valid JSON" in problems[0].message


def test_tampered_input_is_detected(tmp_path):
    f = find(tmp_path, planted_c080(), b"\xc0\x80")
    side = json.loads(f.found[0].path.read_text())
    (tmp_path / side["file"]).write_bytes(b"\xc0\x81")
    _, problems = corpus.load(tmp_path)
    assert "does not match" in problems[0].message


def _writer(root, k, n):
    for i in range(n):
        data = bytes([0x41 + k]) * (i + 1)
        side = {"signature": f"unicode/crash/W{k}x{i}/w", "input": data.hex()}
        corpus.save(root, side, data)
        # and everyone fights over one shared signature, with different lengths
        corpus.save(root, {"signature": "unicode/crash/shared/w"}, bytes([0x61 + k]) * (n - i))


def test_concurrent_writers_lose_nothing_and_corrupt_nothing(tmp_path):
    ctx = mp.get_context("fork")
    ps = [ctx.Process(target=_writer, args=(tmp_path, k, 40)) for k in range(4)]
    for p in ps:
        p.start()
    for p in ps:
        p.join()
        assert p.exitcode == 0
    files = sorted((tmp_path / "entries").glob("*.json"))
    assert len(files) == 4 * 40 + 1
    for p in files:
        side = json.loads(p.read_text())  # every sidecar is whole
        assert (tmp_path / side["file"]).read_bytes() == bytes.fromhex(side["input"])
    shared = json.loads((tmp_path / "entries" / (
        __import__("utf8fuzz.engine.signature", fromlist=["x"]).signature_id(
            "unicode/crash/shared/w") + ".json")).read_text())
    assert len(bytes.fromhex(shared["input"])) == 1  # converged on the shortest
    assert not list(tmp_path.rglob("*.tmp"))


def test_prune_removes_what_no_longer_reproduces_and_keeps_the_rest(tmp_path):
    from utf8fuzz.decoders import plugin

    d = plugin.load("tests.engine.planted:PLANTED_C080+inprocess")
    (x,) = find(tmp_path, d, b"\xc0\x80").found
    find(tmp_path, planted_truncated4(), b"\xf0\x9f\x98A")  # not loadable by name: kept
    assert replay.prune(tmp_path, dry_run=True) == []  # everything still reproduces
    # CPython's codec (external) under a signature it does not give on the input: one
    # entry shares its input file with the planted find, the other has its own
    shared = handmade.save(tmp_path, "ValueError", b"\xc0\x80", decoder="cpython:replace")
    alone = handmade.save(tmp_path, "ValueError", b"\xed\xa0\x80", decoder="cpython:strict")
    files = {p: json.loads(p.read_text())["file"] for p in (shared, alone)}
    assert sorted(e.path for e in replay.prune(tmp_path)) == sorted([shared, alone])
    assert not shared.exists() and not alone.exists()
    assert (tmp_path / files[shared]).exists()  # still named by the planted find
    assert not (tmp_path / files[alone]).exists()
    entries, problems = corpus.load(tmp_path)
    assert len(entries) == 2 and x.path in {e.path for e in entries} and not problems
