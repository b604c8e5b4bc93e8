"""The decoder contract is small: an adapter with only ``run()`` (and its
attributes) is fuzzed, found and saved by ``utf8fuzz fuzz`` like any other."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from tests.engine import minimal_adapter
from utf8fuzz.cli import main
from utf8fuzz.decoders.base import Decoder

SPEC = "tests.engine.minimal_adapter:PassesSurrogates"
SIGNATURE = "unicode/accepts-ill-formed/surrogate/minimal:passes-surrogates"


def test_the_adapter_is_short_and_writes_run_only() -> None:
    assert len(Path(inspect.getfile(minimal_adapter)).read_text().splitlines()) <= 40
    cls = minimal_adapter.PassesSurrogates
    assert cls.__bases__ == (Decoder,)
    assert {n for n, v in vars(cls).items() if callable(v)} == {"run", "versions"}


@pytest.mark.parametrize("where", ["+inprocess", ""])
def test_utf8fuzz_fuzz_finds_its_planted_bug(where: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # tests.* importable
    corpus = tmp_path / "corpus"
    # A seed that reaches the bug, so that a loaded machine (the hypothesis engine
    # at 10 inputs a second) cannot miss it: the loop still runs, judges, minimizes
    # (the text around it goes) and saves it.
    (corpus / "seeds").mkdir(parents=True)
    (corpus / "seeds" / "surrogate").write_bytes(bytes.fromhex("41 42 ED A0 80 43"))
    code = main(["fuzz", "--decoder", SPEC + where, "--engine", "hypothesis", "--runs", "100",
                 "--seed", "1", "--time", "120", "--jobs", "1", "--corpus", str(corpus),
                 "--no-report", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1, out
    assert [n["signature"] for n in out["new"]] == [SIGNATURE]
    (entry,) = (corpus / "entries").glob("*.json")
    side = json.loads(entry.read_text())
    assert side["signature"] == SIGNATURE and side["input"] == "eda080"  # minimized
