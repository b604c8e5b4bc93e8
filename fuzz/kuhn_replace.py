"""Shim: runs the packaged target ``utf8fuzz.loop.targets.kuhn_replace`` (fuzz/README.md).

    python fuzz/kuhn_replace.py -max_len=64 -dict=fuzz/utf8.dict \
        corpus/work/kuhn_replace corpus/seeds
"""

from utf8fuzz.loop.targets.kuhn_replace import run

if __name__ == "__main__":
    run()
