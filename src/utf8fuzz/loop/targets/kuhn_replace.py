"""libFuzzer target: kuhn profile, replace views.

    python -m utf8fuzz.loop.targets.kuhn_replace -max_len=64 -dict=DICT CORPUS SEEDS

(DICT: ``utf8fuzz.loop.targets.dictionary()``; see the package docstring.)
"""

import sys

from utf8fuzz.loop.atheris_target import main


def run() -> None:
    """Run this target on ``sys.argv`` (libFuzzer's flags and directories)."""
    main(sys.argv, profile="kuhn", mode="replace")


if __name__ == "__main__":
    run()
