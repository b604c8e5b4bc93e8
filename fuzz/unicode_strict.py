"""Shim: runs the packaged target ``utf8fuzz.loop.targets.unicode_strict`` (fuzz/README.md).

    python fuzz/unicode_strict.py -max_len=64 -dict=fuzz/utf8.dict \
        corpus/work/unicode_strict corpus/seeds
"""

from utf8fuzz.loop.targets.unicode_strict import run

if __name__ == "__main__":
    run()
