from __future__ import annotations

from collections.abc import Iterator

import pytest

from utf8fuzz import fast

# The setting at import (UTF8FUZZ_FAST_PATH may force one): tests restore it.
_INFO = fast.info()
_INITIAL = _INFO["selected"] if _INFO["mode"] == "forced" else "auto"


@pytest.fixture(autouse=True)
def _restore_path() -> Iterator[None]:
    yield
    fast.set_path(_INITIAL)
