#!/bin/bash -eu
# Builds every fuzz/*.py target the OSS-Fuzz way (compile_python_fuzzer packs each
# with PyInstaller); the C fast path is compiled with the sanitizer flags OSS-Fuzz
# exports in $CFLAGS. Seeds and the dictionary travel with each target.
# PyInstaller follows static imports only; profiles and decoder adapters are
# imported by name at run time, and node's worker is a data file: collect them all.
# The corpus's entries are packed too: the divergences known when the target was
# built, which it does not report again (atheris_target.packed_corpus).
# `make oss-fuzz-build` runs this file outside Docker (scripts/oss-fuzz-build.sh).
pip3 install .[fuzz]
cd fuzz
for target in *.py; do
  name=${target%.py}
  compile_python_fuzzer "$target" --collect-submodules utf8fuzz --collect-data utf8fuzz \
    --add-data "$PWD/../corpus/entries:corpus/entries"
  cp utf8.dict "$OUT/$name.dict"
  (cd ../corpus/seeds && zip -q "$OUT/${name}_seed_corpus.zip" *)
done
