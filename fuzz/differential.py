"""Shim: runs the packaged target ``utf8fuzz.loop.targets.differential`` (fuzz/README.md).

    python fuzz/differential.py -max_len=64 -dict=fuzz/utf8.dict \
        corpus/work/differential corpus/seeds
"""

from utf8fuzz.loop.targets.differential import run

if __name__ == "__main__":
    run()
