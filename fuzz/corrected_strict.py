"""Shim: runs the packaged target ``utf8fuzz.loop.targets.corrected_strict`` (fuzz/README.md).

    python fuzz/corrected_strict.py -max_len=64 -dict=fuzz/utf8.dict \
        corpus/work/corrected_strict corpus/seeds
"""

from utf8fuzz.loop.targets.corrected_strict import run

if __name__ == "__main__":
    run()
