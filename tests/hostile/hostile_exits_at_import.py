"""Not a test: a plug-in module that calls ``sys.exit(0)`` as it is imported."""

import sys

sys.exit(0)


def decode(data: bytes) -> str:  # pragma: no cover - never reached
    return data.decode("utf-8")
