"""``utf8fuzz init``: what it writes for a decoder author's repository, that it never
replaces a file without ``--force`` (and then writes nothing at all), and that bad
input is one escaped line with exit 2. The files at work (fuzz, replay, report from
an installed wheel) are tests/test_installed_package.py's."""

from __future__ import annotations

import ast
import os
import shlex
import subprocess
from pathlib import Path

from tests.cli.hostile import HOSTILE, HOSTILE_ESCAPED, assert_no_raw, run, write_plugin
from utf8fuzz.engine.boundaries import seed_files

DECODER = "def decode(data):\n    return data.decode('utf-8')\n"
WRITTEN = ["fuzz-corpus/known.toml", "fuzz-corpus/.gitignore", "utf8fuzz-pytest.ini",
           ".github/workflows/utf8fuzz-nightly.yml", ".github/workflows/utf8fuzz-replay.yml",
           ".clusterfuzzlite/Dockerfile", ".clusterfuzzlite/build.sh",
           ".clusterfuzzlite/project.yaml", ".clusterfuzzlite/utf8fuzz_fuzzer.py",
           ".github/workflows/utf8fuzz-cflite-pr.yml"]


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != "mydec.py"
            and "__pycache__" not in p.parts}


def test_init_writes_the_corpus_replay_workflows_and_clusterfuzzlite(tmp_path: Path) -> None:
    write_plugin(tmp_path, "mydec", DECODER)
    spec = "mydec:decode@unicode"
    p = run("init", "--decoder", spec, "--time", "600", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [*(f"wrote {f}" for f in WRITTEN),
                                     f"wrote {len(seed_files())} seed inputs in fuzz-corpus/seeds"]
    files = _files(tmp_path)
    assert {f"fuzz-corpus/seeds/{n}": d for n, d in seed_files().items()}.items() <= files.items()
    # the plugin's options, as the README gives them
    ini = files["utf8fuzz-pytest.ini"].decode()
    assert "addopts = -ra --utf8fuzz-corpus=fuzz-corpus --utf8fuzz-decoder=mydec:decode@unicode" \
        in ini.splitlines()
    nightly = files[".github/workflows/utf8fuzz-nightly.yml"].decode()
    assert ("utf8fuzz fuzz --decoder mydec:decode@unicode --corpus fuzz-corpus --time 600"
            in nightly)
    assert "gh pr create" in nightly and "actions/upload-artifact" in nightly
    assert "python -m pytest -c utf8fuzz-pytest.ini" in (
        files[".github/workflows/utf8fuzz-replay.yml"].decode())
    build = tmp_path / ".clusterfuzzlite" / "build.sh"
    assert os.access(build, os.X_OK)
    assert subprocess.run(["bash", "-n", str(build)], check=False).returncode == 0
    assert "--hidden-import mydec " in build.read_text()
    # the target names the decoders, and is the packaged one
    target = files[".clusterfuzzlite/utf8fuzz_fuzzer.py"].decode()
    tree = ast.parse(target)
    (call,) = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
               and getattr(n.func, "attr", None) == "setdefault"]
    assert ast.literal_eval(call.args[1].args[0]) == [spec]
    assert "from utf8fuzz.loop.targets.differential import run" in target
    # a second run finds everything in place
    again = run("init", "--decoder", spec, "--time", "600", cwd=tmp_path)
    assert again.returncode == 0
    assert again.stdout == "nothing to write: every file is there already\n"


def test_init_replaces_nothing_without_force(tmp_path: Path) -> None:
    write_plugin(tmp_path, "mydec", DECODER)
    assert run("init", "--decoder", "mydec:decode", cwd=tmp_path).returncode == 0
    (tmp_path / "fuzz-corpus" / "known.toml").write_text("# mine\n")
    (tmp_path / "utf8fuzz-pytest.ini").unlink()
    before = _files(tmp_path)
    p = run("init", "--decoder", "mydec:decode", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == ("utf8fuzz init: fuzz-corpus/known.toml exists; not replaced "
                        "(--force replaces it)\n")
    assert _files(tmp_path) == before  # nothing written, not even the missing file
    p = run("init", "--decoder", "mydec:decode", "--force", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["wrote fuzz-corpus/known.toml", "wrote utf8fuzz-pytest.ini"]
    assert (tmp_path / "fuzz-corpus" / "known.toml").read_text() != "# mine\n"


def test_init_says_what_it_wrote_escaped(tmp_path: Path) -> None:
    where = tmp_path / HOSTILE
    where.mkdir()
    p = run("init", "--decoder", "cpython:strict", "--dir", str(where), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert_no_raw(p)
    assert f"wrote {tmp_path}/{HOSTILE_ESCAPED}/utf8fuzz-pytest.ini\n" in p.stdout
    # utf8fuzz's own decoder: nothing of the project's to pack
    assert "--hidden-import" not in (where / ".clusterfuzzlite" / "build.sh").read_text()


def test_bad_input_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    for args, says in (
            (["--decoder", "nosuchmodule_xyz:decode"], "nosuchmodule_xyz"),
            (["--decoder", "cpython:strict\nrun: rm -rf /"], "cannot go into a workflow"),
            (["--decoder", "cpython:strict", "--corpus", "../elsewhere"], "inside the project"),
            (["--decoder", "cpython:strict", "--pip", "${{ secrets.TOKEN }}"], "'${{'"),
    ):
        p = run("init", *args, cwd=tmp_path)
        assert p.returncode == 2, (args, p.stdout)
        assert_no_raw(p)
        assert p.stderr.startswith("utf8fuzz init: ") and p.stderr.count("\n") == 1, p.stderr
        assert says in p.stderr, (says, p.stderr)
        assert p.stdout == "" and list(tmp_path.iterdir()) == [], shlex.join(args)
