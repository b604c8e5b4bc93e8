"""Shim: runs the packaged target ``utf8fuzz.loop.targets.corrected_replace`` (fuzz/README.md).

    python fuzz/corrected_replace.py -max_len=64 -dict=fuzz/utf8.dict \
        corpus/work/corrected_replace corpus/seeds
"""

from utf8fuzz.loop.targets.corrected_replace import run

if __name__ == "__main__":
    run()
