"""Shim: runs the packaged target ``utf8fuzz.loop.targets.legacy_replace`` (fuzz/README.md).

    python fuzz/legacy_replace.py -max_len=64 -dict=fuzz/utf8.dict \
        corpus/work/legacy_replace corpus/seeds
"""

from utf8fuzz.loop.targets.legacy_replace import run

if __name__ == "__main__":
    run()
