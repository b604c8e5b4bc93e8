"""Shim: runs the packaged target ``utf8fuzz.loop.targets.rfc2279_replace`` (fuzz/README.md).

    python fuzz/rfc2279_replace.py -max_len=64 -dict=fuzz/utf8.dict \
        corpus/work/rfc2279_replace corpus/seeds
"""

from utf8fuzz.loop.targets.rfc2279_replace import run

if __name__ == "__main__":
    run()
