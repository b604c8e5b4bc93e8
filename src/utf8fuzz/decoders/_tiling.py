"""Turning a library's output and its recorded error spans into tokens.

Recording adapters (CPython's error handlers, ICU's to-Unicode callback) learn
each error's absolute byte span, and get the decoded characters as text with
nothing in place of the errors. Between two errors the library decoded every
byte, so the characters there must re-encode to exactly those bytes: each
character's span is the length of its encoding. :func:`tile` walks both and
checks that they agree; when they do not - a library that drops or invents
characters - it raises :class:`TilingError`, which the caller's
``Decoder.decode`` turns into a ``crash`` outcome naming the byte. Nothing is
guessed: a token is only made when the library's own output accounts for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from utf8fuzz.outcome import Reason, Token


class TilingError(RuntimeError):
    """The library's output does not account for its input."""


def utf8_bytes(cp: int) -> bytes:
    """UTF-8 (surrogates allowed, as CPython's surrogatepass writes them)."""
    return chr(cp).encode("utf-8", "surrogatepass")


Event = tuple[int, int, Reason]


def tile(
    data: bytes,
    cps: Sequence[int],
    errors: Iterable[Event],
    *,
    encode: Callable[[int], bytes] = utf8_bytes,
    offset: int = 0,
) -> list[Token]:
    """Tokens for ``data[offset:]``, spans absolute (``offset`` added).

    ``cps`` are the decoded code points in order, errors contributing none;
    ``errors`` are ``(start, end, reason)`` with absolute offsets.
    """
    out: list[Token] = []
    pos, ci, n = offset, 0, len(data)

    def chars_until(stop: int) -> None:
        nonlocal pos, ci
        while pos < stop:
            if ci >= len(cps):
                raise TilingError(f"output ends but input bytes {pos}..{stop} were not reported")
            cp = cps[ci]
            enc = encode(cp)
            if data[pos : pos + len(enc)] != enc:
                raise TilingError(
                    f"output U+{cp:04X} does not encode the input at byte {pos}"
                )
            out.append(Token("char", cp, pos, pos + len(enc)))
            pos += len(enc)
            ci += 1
        if pos != stop:
            raise TilingError(f"a character spans the error starting at byte {stop}")

    for start, end, reason in sorted(errors):
        if start < pos or end <= start or end > n:
            raise TilingError(f"error span [{start},{end}) overlaps or leaves the input")
        chars_until(start)
        out.append(Token("error", None, start, end, reason))
        pos = end
    chars_until(n)
    if ci != len(cps):
        raise TilingError(f"{len(cps) - ci} output code point(s) left after the input ended")
    return out


def utf16_codepoints(units: bytes) -> list[int]:
    """UTF-16LE code units to code points: pairs combined, lone surrogates kept."""
    return [ord(c) for c in units.decode("utf-16-le", "surrogatepass")]
