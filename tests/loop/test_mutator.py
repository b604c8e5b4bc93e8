import random

from utf8fuzz import decode
from utf8fuzz.engine.boundaries import libfuzzer_dict, seed_files
from utf8fuzz.loop.mutator import make_custom_mutator, utf8_mutate


def test_mutations_respect_max_size_and_are_deterministic_by_seed():
    m = make_custom_mutator(None)
    for seed in range(300):
        out = m(b"hello world", 32, seed)
        assert len(out) <= 32 and out == m(b"hello world", 32, seed)


def test_mutations_make_ill_formed_input_from_valid_text():
    rng = random.Random(1)
    bad = sum(not decode(utf8_mutate(b"plain ascii text", 64, rng)).valid for _ in range(200))
    assert bad > 100


def test_dictionary_file_is_current():
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "fuzz" / "utf8.dict"
    assert path.read_text() == libfuzzer_dict()


def test_seeds_cover_table_3_1b_boundaries_and_spec_examples():
    seeds = seed_files()
    vals = set(seeds.values())
    for h in ("e0a080", "efbfbf", "f0908080", "f48fbfbf", "c280", "dfbf", "2fc0ae2e2f", "c080",
              "eda080", "f4908080"):
        assert bytes.fromhex(h) in vals, h
