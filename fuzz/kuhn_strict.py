"""Shim: runs the packaged target ``utf8fuzz.loop.targets.kuhn_strict`` (fuzz/README.md).

    python fuzz/kuhn_strict.py -max_len=64 -dict=fuzz/utf8.dict \
        corpus/work/kuhn_strict corpus/seeds
"""

from utf8fuzz.loop.targets.kuhn_strict import run

if __name__ == "__main__":
    run()
