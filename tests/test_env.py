"""utf8fuzz.env: integer settings from the environment, one parser for every $UTF8FUZZ_*."""

from __future__ import annotations

import pytest

from utf8fuzz.engine.calls import check_every_default
from utf8fuzz.env import env_int
from utf8fuzz.loop.finder import full_every_default


def test_unset_or_blank_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("UTF8FUZZ_TEST_N", raising=False)
    assert env_int("UTF8FUZZ_TEST_N", 7, least=1, expected="x") == 7
    monkeypatch.setenv("UTF8FUZZ_TEST_N", "  ")
    assert env_int("UTF8FUZZ_TEST_N", 7, least=1, expected="x") == 7
    monkeypatch.setenv("UTF8FUZZ_TEST_N", " 3 ")
    assert env_int("UTF8FUZZ_TEST_N", 7, least=1, expected="x") == 3


@pytest.mark.parametrize("raw", ["0", "-2", "1.5", "many", "\x1b[31m"])
def test_a_bad_value_is_one_message_naming_the_variable(monkeypatch: pytest.MonkeyPatch,
                                                        raw: str) -> None:
    monkeypatch.setenv("UTF8FUZZ_FULL_EVERY", raw)
    with pytest.raises(ValueError, match=r"^UTF8FUZZ_FULL_EVERY=.*: expected a positive integer"):
        full_every_default()


def test_zero_is_allowed_where_it_means_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UTF8FUZZ_CALL_EVERY", "0")
    assert check_every_default() == 0
    monkeypatch.setenv("UTF8FUZZ_CALL_EVERY", "-1")
    with pytest.raises(ValueError, match="non-negative integer"):
        check_every_default()
