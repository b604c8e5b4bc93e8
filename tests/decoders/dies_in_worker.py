"""A plug-in that loads in the harness but whose worker dies as it starts, its last
words hostile (tests/decoders/test_plugin.py): the worker cannot run."""

from __future__ import annotations

import os

from tests.decoders.plugin_fixtures import HOSTILE_STDERR
from utf8fuzz.decoders._subprocess import TAG_ENV

if TAG_ENV in os.environ:  # only in a worker process
    os.write(2, HOSTILE_STDERR.encode())
    os._exit(3)


def decode(data: bytes) -> str:
    return data.decode("utf-8")
