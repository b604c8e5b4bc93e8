"""Property tests that drive every available decoder against the references.

A divergence is raised as an exception class unique to its signature, so Hypothesis
keeps different bugs apart while shrinking. Failures here are real findings (or
adapter bugs): the message gives the signature and the input in hex.
"""

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis.errors import FailedHealthCheck

from tests.engine.planted import Crashes, planted_c080
from utf8fuzz import decoders
from utf8fuzz import strategies as u8
from utf8fuzz.engine.differ import Differ
from utf8fuzz.engine.result import DivergenceError, assert_agree

DIFFER = Differ(d for d in decoders.available() if d.profile == "unicode" and not d.own
                and d.name.startswith(("cpython:", "icu")))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(u8.inputs("unicode"))
def test_cpython_and_icu_agree_with_the_unicode_reference(data):
    assert_agree(DIFFER.run(data))


def test_distinct_bugs_raise_distinct_failures():
    d = Differ([planted_c080(), Crashes()])
    seen: set[type] = set()

    @settings(max_examples=100, deadline=None, database=None, report_multiple_bugs=True,
              suppress_health_check=list(HealthCheck))
    @given(u8.inputs("unicode"))
    @example(b"A\xc0\x80").via("the non-shortest form")
    @example(b"\xfeA").via("the crash")
    def prop(data):
        assert_agree(d.run(data))

    with pytest.raises((DivergenceError, BaseExceptionGroup, FailedHealthCheck)) as e:
        prop()
    errs = e.value.exceptions if isinstance(e.value, BaseExceptionGroup) else (e.value,)
    for x in errs:
        assert isinstance(x, DivergenceError)
        seen.add(type(x))
    assert len(seen) >= 2, [str(x) for x in errs]
