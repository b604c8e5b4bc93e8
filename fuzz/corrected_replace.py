"""libFuzzer target: corrected profile, replace views (see fuzz/README.md).

    python fuzz/corrected_replace.py -max_len=64 -dict=fuzz/utf8.dict \
        fuzz/work/corrected_replace corpus/seeds
"""

import sys

import atheris

# Coverage comes from the reference decoders (policies + profile tables).
with atheris.instrument_imports(include=["utf8fuzz.policies", "utf8fuzz.profiles"]):
    import utf8fuzz.policies  # noqa: F401

from utf8fuzz.engine.atheris_target import main

if __name__ == "__main__":
    main(sys.argv, profile="corrected", mode="replace")
