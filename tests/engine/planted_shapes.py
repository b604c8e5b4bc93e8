"""Plug-ins of each declared shape, with one planted bug each (tied to one spec
feature, so a fuzz run saves it under exactly one signature) and correct ones.

The triggers (:data:`TRIGGERS`) are the seeds the fuzz tests give, so a run meets
each bug on its first inputs, whatever it generates after.
"""

from __future__ import annotations

import re

# A 3-byte sequence cut short at the end of the input after its first
# continuation byte (leads whose second byte may be any of 80..BF).
_TRUNC3_AT_END = re.compile(rb"[\xe1-\xec\xee\xef][\x80-\xbf]\Z")
# An encoded surrogate: ED A0..BF 80..BF.
_SURROGATE = re.compile(rb"\xed[\xa0-\xbf][\x80-\xbf]")

#: An input that shows each planted bug.
TRIGGERS = {
    "replace_splits_truncated3": bytes.fromhex("41 E2 82"),
    "text_decodes_surrogates": bytes.fromhex("41 ED A0 80 42"),
    "validator_accepts_surrogates": bytes.fromhex("41 ED A0 80 42"),
}


def replace_splits_truncated3(data: bytes, errors: str = "strict") -> str:
    """The codec shape, CPython's codec but for one bug in replace mode alone: a
    3-byte sequence truncated at the end of the input (E2 82) gives one U+FFFD per
    byte instead of one for its maximal subpart (truncated-3-byte-at-end)."""
    if errors == "replace" and _TRUNC3_AT_END.search(data):
        return data[:-2].decode("utf-8", "replace") + "\ufffd\ufffd"
    return data.decode("utf-8", errors)


def text_decodes_surrogates(data: bytes) -> str:
    """The text shape, CPython's errors="replace" but for one bug: an encoded
    surrogate (ED A0 80) decodes to the surrogate, as surrogatepass does (a
    different value where the reference has U+FFFD: accepts-ill-formed)."""
    out, pos = [], 0
    for m in _SURROGATE.finditer(data):
        out.append(data[pos : m.start()].decode("utf-8", "replace"))
        out.append(m.group().decode("utf-8", "surrogatepass"))
        pos = m.end()
    out.append(data[pos:].decode("utf-8", "replace"))
    return "".join(out)


def validator_accepts_surrogates(data: bytes) -> bool:
    """The validator shape with one bug: it accepts encoded surrogates, being
    CPython's surrogatepass, so an input whose only errors are surrogates passes."""
    try:
        data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return False
    return True


def cpython_replace(data: bytes) -> str:
    """CPython's own errors="replace": a correct replacement function."""
    return data.decode("utf-8", "replace")


def cpython_valid(data: bytes) -> bool:
    """A correct validator: CPython's strict codec."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
