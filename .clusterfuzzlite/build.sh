#!/bin/bash -eu
# Builds every fuzz/*.py target the OSS-Fuzz way (compile_python_fuzzer packs each
# with PyInstaller); the C fast path is compiled with the sanitizer flags OSS-Fuzz
# exports in $CFLAGS. Seeds and the dictionary travel with each target.
pip3 install .[fuzz]
cd fuzz
for target in *.py; do
  name=${target%.py}
  compile_python_fuzzer "$target"
  cp utf8.dict "$OUT/$name.dict"
  (cd ../corpus/seeds && zip -q "$OUT/${name}_seed_corpus.zip" *)
done
