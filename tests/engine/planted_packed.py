"""A planted bug for tests/loop/test_oss_fuzz_build.py, packed into a fuzz target by
PyInstaller (``--hidden-import tests.engine.planted_packed``) and named to it with
``UTF8FUZZ_DECODERS``.

Its own module, importing nothing, so that PyInstaller follows no test imports into
the bundle; the bug is one that the packed seed corpus (``corpus/seeds``) shows at
once, so libFuzzer finds it while it reads the seeds, whatever its random seed.
"""


def passes_surrogates(data: bytes) -> str:
    """CPython's UTF-8 codec with the ``surrogatepass`` handler: an encoded UTF-16
    surrogate (ED A0 80..ED BF BF) decodes to U+D800..U+DFFF instead of being
    ill-formed, as in a decoder that forgot ED's narrower second-byte range."""
    return data.decode("utf-8", "surrogatepass")
