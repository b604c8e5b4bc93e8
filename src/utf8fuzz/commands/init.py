"""``utf8fuzz init``: set up a decoder author's repository in one command.

For the decoders named with ``--decoder`` (checked: each must load here), writes
into the project directory (``--dir``, default ``.``):

* ``CORPUS/known.toml`` (a commented template: docs/corpus.md), ``CORPUS/.gitignore``
  (the work directory and lock are not committed) and ``CORPUS/seeds/`` (the boundary
  inputs both engines replay first, :func:`utf8fuzz.engine.boundaries.seed_files`);
* ``utf8fuzz-pytest.ini``: ``pytest -c utf8fuzz-pytest.ini`` replays the corpus
  against the decoders (the pytest plugin's options), apart from the project's own
  test suite;
* ``.github/workflows/utf8fuzz-nightly.yml``: fuzz every night, upload the report and
  summary, and open a pull request with the corpus when the run saved new entries;
* ``.github/workflows/utf8fuzz-replay.yml``: replay the corpus on every push;
* ``.clusterfuzzlite/`` (Dockerfile, build.sh, project.yaml, ``utf8fuzz_fuzzer.py``:
  the packaged differential target on these decoders) and
  ``.github/workflows/utf8fuzz-cflite-pr.yml``: ClusterFuzzLite on pull requests.

A file that exists with other contents is never replaced without ``--force``: the
command checks every file first and writes nothing if one is in the way (one line,
exit 2). It says what it wrote (paths escaped by :func:`utf8fuzz.safe.text`).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from utf8fuzz import safe
from utf8fuzz.errors import UsageError

HELP = ("set up your repository for your decoders: corpus, known.toml, pytest replay, "
        "GitHub workflows (nightly fuzz, replay) and ClusterFuzzLite")

#: the nightly job's fuzzing time (seconds): GitHub's hosted runners allow 6 hours
NIGHTLY_SECONDS = 1800


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--decoder", action="append", default=[], metavar="SPEC", required=True,
                   help="your decoder, as --decoder takes it on any command "
                        "(module:attr[@profile[/policy]][+shape...], exec:'CMD'); repeatable")
    p.add_argument("--dir", default=".", metavar="DIR",
                   help="the project directory to write into (default: the current one)")
    p.add_argument("--corpus", default="fuzz-corpus", metavar="DIR",
                   help="the corpus directory, relative to --dir (default fuzz-corpus)")
    p.add_argument("--time", type=int, default=NIGHTLY_SECONDS, metavar="SECONDS",
                   help=f"the nightly job's fuzzing time (default {NIGHTLY_SECONDS})")
    p.add_argument("--pip", default=None, metavar="REQUIREMENT",
                   help="how the workflows install utf8fuzz (default utf8fuzz==THIS_VERSION; "
                        "a wheel URL or git+https://... works too)")
    p.add_argument("--force", action="store_true", help="replace files that exist")


def _check_word(what: str, value: str) -> str:
    """``value`` as it may go into YAML, shell and Python: no control characters
    (a newline would end a YAML scalar), no ``${{`` (a GitHub Actions expression)."""
    if not value or any(ord(c) < 0x20 or ord(c) == 0x7F for c in value) or "${{" in value:
        raise UsageError(f"{what} {safe.text(value)!s} cannot go into a workflow "
                         "(empty, a control character or '${{')")
    return value


def _check_corpus(value: str) -> str:
    _check_word("--corpus", value)
    p = Path(value)
    if p.is_absolute() or ".." in p.parts or value.startswith("-"):
        raise UsageError(f"--corpus {safe.text(value)} must be a path inside the project")
    return p.as_posix()


def _modules(plugins: list[str]) -> list[str]:
    """The Python modules the plug-in specs import (PyInstaller must pack them)."""
    out = [s.split(":", 1)[0] for s in plugins]
    return list(dict.fromkeys(m for m in out if m.replace(".", "").replace("_", "").isalnum()))


def render(specs: list[str], corpus: str, seconds: int, pip: str,
           plugins: list[str] | None = None) -> dict[str, str]:
    """Every file ``init`` writes but the seeds: path (POSIX, relative) -> contents.
    ``plugins``: those of ``specs`` that are the user's ``module:attr`` plug-ins."""
    dec_args = " ".join(f"--decoder {shlex.quote(s)}" for s in specs)
    pytest_args = " ".join(f"--utf8fuzz-decoder={shlex.quote(s)}" for s in specs)
    q_corpus = shlex.quote(corpus)
    q_pip = shlex.quote(pip)
    install = (f"python -m pip install {q_pip}\n"
               "          if [ -f pyproject.toml ] || [ -f setup.py ]; then "
               "python -m pip install -e .; fi")
    files: dict[str, str] = {}
    files[f"{corpus}/known.toml"] = """\
# Known differences: divergences of your decoders that you accept, each with the
# reason. `utf8fuzz fuzz` still saves them, but lists them as known, not new (they
# do not make it exit 1). Format: utf8fuzz's docs/corpus.md, "Known differences".
#
# [[known]]
# decoder = "mydecoder:decode"
# profile = "unicode"
# class = "different-replacement"
# reason = "we substitute one U+FFFD per bad sequence, by design"
"""
    files[f"{corpus}/.gitignore"] = ("# utf8fuzz's work directory and lock: not part of "
                                     "the corpus\nwork/\n.lock\n")
    files["utf8fuzz-pytest.ini"] = f"""\
# Replays the utf8fuzz corpus as tests: pytest -c utf8fuzz-pytest.ini
# An open finding is an xfail naming its signature; once fixed it passes, and
# `utf8fuzz corpus refresh {corpus} {dec_args}` records it as fixed; a fixed bug
# that comes back fails ("regressed").
[pytest]
pythonpath = .
testpaths = {corpus}
addopts = -ra --utf8fuzz-corpus={q_corpus} {pytest_args}
"""
    files[".github/workflows/utf8fuzz-nightly.yml"] = f"""\
# utf8fuzz nightly: fuzz the decoders (Atheris and Hypothesis), upload the triage
# report, and open a pull request with the corpus when the run saved new entries.
# Exit status of utf8fuzz fuzz: 0 nothing new, 1 new findings saved (the job
# succeeds and opens the PR), 2 usage error, 3 the run failed.
name: utf8fuzz nightly
on:
  schedule:
    - cron: '23 3 * * *'
  workflow_dispatch:
permissions:
  contents: write
  pull-requests: write
jobs:
  fuzz:
    runs-on: ubuntu-latest
    timeout-minutes: {seconds // 60 + 30}
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: '3.11'
      - name: Install
        run: |
          {install}
      - name: Fuzz
        id: fuzz
        run: |
          set +e
          utf8fuzz fuzz {dec_args} --corpus {q_corpus} --time {seconds} \\
            --report utf8fuzz-report --json > utf8fuzz-summary.json
          status=$?
          echo "status=$status" >> "$GITHUB_OUTPUT"
          [ "$status" -le 1 ]
      - name: Upload the report
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: utf8fuzz-report
          path: |
            utf8fuzz-report
            utf8fuzz-summary.json
          if-no-files-found: ignore
      - name: Open a pull request with the corpus
        if: steps.fuzz.outputs.status == '0' || steps.fuzz.outputs.status == '1'
        env:
          GH_TOKEN: ${{{{ github.token }}}}
        run: |
          git add -- {q_corpus}
          # fingerprints.json changes every night; a PR is worth it for new entries
          if git diff --cached --quiet -- {q_corpus}/entries; then
            echo "no new corpus entries"; exit 0
          fi
          branch="utf8fuzz/nightly-${{{{ github.run_id }}}}"
          git config user.name "utf8fuzz nightly"
          git config user.email "utf8fuzz-nightly@users.noreply.github.com"
          git checkout -b "$branch"
          git commit -q -m "utf8fuzz: corpus from the nightly run"
          git push -q origin "$branch"
          gh pr create --head "$branch" --title "utf8fuzz: corpus from the nightly run" \\
            --body "New corpus entries from run ${{{{ github.run_id }}}} (exit status \\
          ${{{{ steps.fuzz.outputs.status }}}}); the triage report is the run's artifact."
"""
    files[".github/workflows/utf8fuzz-replay.yml"] = f"""\
# utf8fuzz replay: the corpus is a test suite; replay it on every push.
name: utf8fuzz replay
on:
  push:
  pull_request:
permissions: read-all
jobs:
  replay:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: '3.11'
      - name: Install
        run: |
          {install}
          python -m pip install pytest
      - name: Replay the corpus
        run: python -m pytest -c utf8fuzz-pytest.ini
"""
    hidden = "".join(f" \\\n  --hidden-import {shlex.quote(m)}" for m in _modules(plugins or []))
    files[".clusterfuzzlite/Dockerfile"] = """\
# ClusterFuzzLite build image: utf8fuzz's differential target on your decoders.
FROM gcr.io/oss-fuzz-base/base-builder-python
COPY . $SRC/project
WORKDIR $SRC/project
COPY .clusterfuzzlite/build.sh $SRC/
"""
    files[".clusterfuzzlite/build.sh"] = f"""\
#!/bin/bash -eu
# Packs .clusterfuzzlite/utf8fuzz_fuzzer.py (PyInstaller, as OSS-Fuzz does) with
# utf8fuzz, your decoders and the corpus's entries (known divergences are not
# reported again); its dictionary and seeds come from the utf8fuzz package.
pip3 install {q_pip}
if [ -f pyproject.toml ] || [ -f setup.py ]; then pip3 install .; fi
extra=()
if [ -d {q_corpus}/entries ]; then
  extra+=(--add-data "$PWD/{corpus}/entries:corpus/entries")
fi
compile_python_fuzzer .clusterfuzzlite/utf8fuzz_fuzzer.py --paths "$PWD" \\
  --collect-submodules utf8fuzz --collect-data utf8fuzz{hidden} ${{extra[@]+"${{extra[@]}}"}}
python3 -c 'import shutil, sys, utf8fuzz.loop.targets as t
shutil.copy(t.dictionary(), sys.argv[1])' "$OUT/utf8fuzz_fuzzer.dict"
(cd {q_corpus}/seeds && zip -q "$OUT/utf8fuzz_fuzzer_seed_corpus.zip" *)
"""
    files[".clusterfuzzlite/project.yaml"] = "language: python\n"
    files[".clusterfuzzlite/utf8fuzz_fuzzer.py"] = f'''\
"""libFuzzer target: utf8fuzz's differential target on this project's decoders.

    python .clusterfuzzlite/utf8fuzz_fuzzer.py -max_len=64 {corpus}/seeds

A divergence ends the run as a crash whose input is the minimized one; ``utf8fuzz
diff --decoder SPEC HEX`` shows it.
"""

import json
import os

# The decoders it compares (utf8fuzz.loop.atheris_target: UTF8FUZZ_DECODERS).
os.environ.setdefault("UTF8FUZZ_DECODERS", json.dumps({specs!r}))

from utf8fuzz.loop.targets.differential import run  # noqa: E402

if __name__ == "__main__":
    run()
'''
    files[".github/workflows/utf8fuzz-cflite-pr.yml"] = """\
# ClusterFuzzLite on pull requests: build .clusterfuzzlite/ and fuzz for 10 minutes;
# a divergence fails the job with the minimized input as its artifact.
name: utf8fuzz ClusterFuzzLite
on:
  pull_request:
permissions: read-all
jobs:
  PR:
    runs-on: ubuntu-latest
    concurrency:
      group: ${{ github.workflow }}-${{ github.ref }}
      cancel-in-progress: true
    steps:
      - name: Build Fuzzers
        id: build
        uses: google/clusterfuzzlite/actions/build_fuzzers@v1
        with:
          language: python
          github-token: ${{ secrets.GITHUB_TOKEN }}
          sanitizer: address
      - name: Run Fuzzers
        id: run
        uses: google/clusterfuzzlite/actions/run_fuzzers@v1
        with:
          github-token: ${{ secrets.GITHUB_TOKEN }}
          fuzz-seconds: 600
          mode: 'code-change'
          sanitizer: address
"""
    return files


def run(args: argparse.Namespace) -> int:
    from utf8fuzz import __version__
    from utf8fuzz.engine.boundaries import seed_files
    from utf8fuzz.engine.corpus import atomic_write

    specs = [_check_word("--decoder", s) for s in dict.fromkeys(args.decoder)]
    corpus = _check_corpus(args.corpus)
    if args.time < 1:
        raise UsageError("--time must be at least 1 second")
    pip = _check_word("--pip", args.pip or f"utf8fuzz=={__version__}")
    root = Path(args.dir)
    if not root.is_dir():
        raise UsageError(f"--dir {safe.text(root)} is not a directory")
    plugins = _check_decoders(specs, root)

    files = {root / rel: text.encode() for rel, text in render(
        specs, corpus, args.time, pip, plugins).items()}
    seeds = {root / corpus / "seeds" / name: data for name, data in seed_files().items()}
    plan: list[tuple[Path, bytes]] = []
    for path, data in [*files.items(), *seeds.items()]:
        try:
            same = path.read_bytes() == data if path.is_file() else None
        except OSError:
            same = False
        if same:
            continue
        if (same is False or path.exists() or path.is_symlink()) and not args.force:
            raise UsageError(f"{safe.text(path)} exists; not replaced (--force replaces it)")
        plan.append((path, data))
    wrote_seeds = 0
    for path, data in plan:
        if path.is_symlink() or path.is_dir():
            raise UsageError(f"{safe.text(path)} is a directory or a symlink; not replaced")
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data)
        if path.name == "build.sh":
            os.chmod(path, 0o755)
        if path in seeds:
            wrote_seeds += 1
        else:
            print(f"wrote {safe.text(path)}")
    if wrote_seeds:
        print(f"wrote {wrote_seeds} seed inputs in {safe.text(root / corpus / 'seeds')}")
    if not plan:
        print("nothing to write: every file is there already")
    shown = " ".join(f"--decoder {shlex.quote(s)}" for s in specs)
    print(safe.text(f"next: utf8fuzz fuzz {shown} --corpus {shlex.quote(corpus)} --time 60; "
                    f"pytest -c utf8fuzz-pytest.ini", None), file=sys.stderr)
    return 0


def _check_decoders(specs: list[str], root: Path) -> list[str]:
    """Each spec names a decoder that loads, as the workflows will run it: from the
    project directory (a plug-in's module is imported from there). Returns the specs
    that are plug-ins (``module:attr``), not utf8fuzz's own decoders."""
    from utf8fuzz import decoders

    here = os.getcwd()
    plugins = []
    try:
        os.chdir(root)
        for s in specs:
            try:
                found = decoders.resolve(s)
            except decoders.UnknownDecoder as e:
                raise UsageError(str(e)) from None
            if any(d.name.startswith("plugin:") for d in found):
                plugins.append(s)
            for d in found:
                d.close()
    finally:
        os.chdir(here)
    return plugins

