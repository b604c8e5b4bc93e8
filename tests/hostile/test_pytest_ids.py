"""Names from a corpus reach CI escaped: the pytest plugin's node ids are printable
ASCII and unique, ``--junitxml`` writes XML that parses, and an escaped id re-runs
exactly its item (the pytest plugin's docstring, README "Regression tests")."""

from __future__ import annotations

import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.engine import handmade
from tests.test_pytest_plugin import ids, pytest_
from utf8fuzz.engine.corpus import save

# ESC (retitles a terminal), U+202E (reverses what follows), controls that XML 1.0
# forbids, U+FFFE, a byte that is not UTF-8 (a lone surrogate in the name), U+2400
# (the picture of NUL: NUL itself cannot be in a file name), and a name that is
# already the escaped text of the first: escaping must not make two ids one.
HOSTILE = [
    "\x1b]0;owned\x07\x1b[2J.json",
    "a\u202egnp.json",
    "\x01\x0b\x0c\ufffe.json",
    os.fsdecode(b"\xff\xfe.json"),
    "\u2400nul.json",
    "\\x1b]0;owned\\x07\\x1b[2J.json",
]
# a good entry's decoder (and feature) name, from its sidecar, in its items' names
DECODER = "w\x1b[31m\u202e\x00"


def printable(s: str) -> bool:
    return all(" " <= c <= "~" for c in s)


def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    side = handmade.sidecar("F\x1b\u202e", b"\xc0\x80", decoder=DECODER)
    side["outcomes"][DECODER] = side["outcomes"][handmade.REFERENCE]  # checked: an item
    good, _ = save(root, side, b"\xc0\x80")
    for name in HOSTILE:  # a copy of a good sidecar under a name it does not match
        shutil.copyfile(good, root / "entries" / name)
    return root


def test_hostile_names_are_escaped_unique_and_valid_junit_xml(tmp_path: Path) -> None:
    corpus(tmp_path)
    co = pytest_(tmp_path, "--co", "-q", "--utf8fuzz-corpus=corpus")
    assert co.returncode == 0, co.stdout + co.stderr
    found = ids(co)
    assert len(found) == 2 + len(HOSTILE)  # reference + w on the good one; one each corrupt
    assert len(set(found)) == len(found)
    assert all(printable(i) for i in found), [i for i in found if not printable(i)]
    assert printable(co.stdout.replace("\n", ""))

    r = pytest_(tmp_path, "--utf8fuzz-corpus=corpus", "--junitxml=out.xml", "-rA")
    assert r.returncode == 1, r.stdout + r.stderr  # the misnamed copies fail, as corrupt
    assert printable(r.stdout.replace("\n", ""))
    cases = ET.parse(tmp_path / "out.xml").getroot().iter("testcase")
    names = [f"{c.get('classname')}::{c.get('name')}" for c in cases]
    assert len(names) == len(found) and all(printable(n) for n in names)


def test_escaped_ids_rerun_exactly_their_items(tmp_path: Path) -> None:
    corpus(tmp_path)
    found = [i for i in ids(pytest_(tmp_path, "--co", "-q", "--utf8fuzz-corpus=corpus"))
             if i.endswith("::utf8fuzz[corrupt]")]
    assert len(found) == len(HOSTILE)
    # all but one given: those items and nothing else of their directory
    r = pytest_(tmp_path, *found[1:], "--utf8fuzz-corpus=corpus", "--co", "-q")
    assert sorted(ids(r)) == sorted(found[1:]), r.stdout + r.stderr
