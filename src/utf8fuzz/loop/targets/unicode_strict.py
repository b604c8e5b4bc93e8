"""libFuzzer target: unicode profile, strict views.

    python -m utf8fuzz.loop.targets.unicode_strict -max_len=64 -dict=DICT CORPUS SEEDS

(DICT: ``utf8fuzz.loop.targets.dictionary()``; see the package docstring.)
"""

import sys

from utf8fuzz.loop.atheris_target import main


def run() -> None:
    """Run this target on ``sys.argv`` (libFuzzer's flags and directories)."""
    main(sys.argv, profile="unicode", mode="strict")


if __name__ == "__main__":
    run()
