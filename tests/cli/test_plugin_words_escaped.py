"""A plug-in's words - its name (``module:attr``, anything a file system and Python
allow), what it raises, the versions and reasons it gives - reach ``utf8fuzz diff``
and ``utf8fuzz decoders`` escaped in text, and as ASCII-only JSON."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.cli.hostile import (
    HOSTILE,
    HOSTILE_ESCAPED,
    SAID,
    SAID_ESCAPED,
    assert_no_raw,
    run,
    write_plugin,
)

MODULE, ATTR = HOSTILE + "mod", HOSTILE + "fn"
SPEC = f"{MODULE}:{ATTR}"
# the module defines its hostile attribute through globals(): no `def` can name it
RAISES = f"""
def _decode(data):
    raise RuntimeError({SAID!r})


globals()[{ATTR!r}] = _decode
"""


def test_diff_text_escapes_a_hostile_name_and_crash_message(tmp_path: Path) -> None:
    write_plugin(tmp_path, MODULE, RAISES)
    p = run("diff", "41", "--decoder", SPEC, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert_no_raw(p)
    assert f"plugin:{HOSTILE_ESCAPED}mod:{HOSTILE_ESCAPED}fn  [unicode]" in p.stdout
    assert f"crash: RuntimeError: {SAID_ESCAPED}" in p.stdout


def test_diff_json_is_ascii_and_keeps_the_exact_words(tmp_path: Path) -> None:
    write_plugin(tmp_path, MODULE, RAISES)
    p = run("diff", "41", "--decoder", SPEC, "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert_no_raw(p)
    assert p.stdout.isascii()
    assert "\\u001b[2J\\u202e" in p.stdout and "\\u0000" in p.stdout
    # JSON is data: escaped on the wire, exact once parsed
    obj = json.loads(p.stdout)
    assert obj["decoders"][f"plugin:{SPEC}"]["detail"] == f"RuntimeError: {SAID}"


def _installed_plugins(tmp_path: Path) -> dict[str, str]:
    """Two entry points of group utf8fuzz.decoders, found through PYTHONPATH: one
    that fails to load (its name and its error hostile), one whose version is."""
    dist = tmp_path / "hostile_plugins-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: hostile-plugins\n"
                                   "Version: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        f"[utf8fuzz.decoders]\nbroken{HOSTILE} = hostile_broken:decode\n"
        "versioned = hostile_versioned:decode\n", encoding="utf-8")
    write_plugin(tmp_path, "hostile_broken", f"raise RuntimeError({SAID!r})\n")
    write_plugin(tmp_path, "hostile_versioned",
                 f"__version__ = {SAID!r}\n\n\ndef decode(data):\n    return data.decode()\n")
    path = os.pathsep.join(x for x in (str(tmp_path), os.environ.get("PYTHONPATH")) if x)
    return {"PYTHONPATH": path}


def test_decoders_listing_escapes_plugin_reasons_and_versions(tmp_path: Path) -> None:
    p = run("decoders", env=_installed_plugins(tmp_path))
    assert p.returncode == 0, p.stderr
    assert_no_raw(p)
    assert (f"unavailable: plugin:broken{HOSTILE_ESCAPED}: cannot load hostile_broken:decode: "
            f"RuntimeError: {SAID_ESCAPED}") in p.stdout.splitlines()
    row = next(ln for ln in p.stdout.splitlines() if "plugin:versioned" in ln)
    assert f"version {SAID_ESCAPED}" in row


def test_decoders_json_is_ascii_and_keeps_the_exact_words(tmp_path: Path) -> None:
    p = run("decoders", "--json", env=_installed_plugins(tmp_path))
    assert p.returncode == 0, p.stderr
    assert_no_raw(p)
    assert p.stdout.isascii()
    obj = json.loads(p.stdout)
    versioned = next(d for d in obj["available"] if d["name"] == "plugin:versioned")
    assert versioned["versions"]["version"] == SAID
    broken = next(u for u in obj["unavailable"] if u["name"] == f"plugin:broken{HOSTILE}")
    assert broken["reason"].endswith(SAID)
