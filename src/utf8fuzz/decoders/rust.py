"""Rust's UTF-8 decoding, two calls of the standard library, as real peers.

========================  ===============================  =======  ===============  ==============
name                      call                             mode     policy           shows
========================  ===============================  =======  ===============  ==============
``rust:from-utf8``        ``String::from_utf8``            strict   maximal-subpart  strict, reason
``rust:from-utf8-lossy``  ``String::from_utf8_lossy``      replace  maximal-subpart  replace
========================  ===============================  =======  ===============  ==============

Both claim the ``unicode`` profile ("strings are required to be valid UTF-8",
std::string::String) and maximal subparts, which is what std's documentation
states of the invalid sequence it reports and replaces:

* ``Utf8Error::error_len``: "None: the end of the input was reached unexpectedly
  [...] Some(len): an unexpected byte was encountered. The length provided is
  that of the invalid byte sequence that starts at the index given by
  valid_up_to(). Decoding should resume after that sequence (after inserting a
  U+FFFD REPLACEMENT CHARACTER) in case of lossy decoding." The client reports
  the first error as [valid_up_to, valid_up_to + len) illegal, or
  [valid_up_to, end) truncated for None.
* ``Utf8Chunk::invalid`` (what ``from_utf8_lossy`` replaces): "The returned slice
  will have a maximum length of 3 [...] an unexpected byte was encountered or the
  end of the input was reached unexpectedly. Lossy decoding would replace this
  sequence with U+FFFD REPLACEMENT CHARACTER." At most 3 bytes, ended by the first
  unexpected byte, is the shape of a maximal subpart; the pull request that wrote
  ``from_utf8_lossy`` (rust-lang/rust#12062) states it "follows the guidelines in
  §5.22 Best Practice for U+FFFD Substitution from the Unicode Standard".
  ``from_utf8_lossy`` returns text only.

The client is ``peers/rust/main.rs``, built by ``make setup`` (:mod:`.peers.build`,
with ``rustc`` from PATH or ``~/.cargo/bin``); each decoder is its own process,
started on first use.
"""

from __future__ import annotations

from utf8fuzz.decoders import peers
from utf8fuzz.decoders.base import Decoder, Unavailable

#: variant -> (call, mode, policy, reasons, text only)
VARIANTS: dict[str, peers.Variant] = {
    "from-utf8": ("String::from_utf8", "strict", "maximal-subpart", True, False),
    "from-utf8-lossy": ("String::from_utf8_lossy", "replace", "maximal-subpart", False, True),
}


def discover() -> list[Decoder | Unavailable]:
    return peers.discover("rust", VARIANTS)
