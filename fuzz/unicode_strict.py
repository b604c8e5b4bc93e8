"""libFuzzer target: unicode profile, strict views (see fuzz/README.md).

    python fuzz/unicode_strict.py -max_len=64 -dict=fuzz/utf8.dict \
        corpus/work/unicode_strict corpus/seeds
"""

import sys

# Coverage comes from the spec tables the references walk (utf8fuzz.engine.coverage);
# UTF8FUZZ_INSTRUMENT=1 also instruments the references' bytecode.
from utf8fuzz.engine.atheris_target import main

if __name__ == "__main__":
    main(sys.argv, profile="unicode", mode="strict")
