"""Build hook: setuptools reads metadata from pyproject.toml; this file only
declares the C extension (the fast path), which pyproject cannot express."""

from setuptools import Extension, setup

# The fast path (src/utf8fuzz/fast/). No -march: the SIMD paths carry their own
# target attributes and are chosen at run time, so a wheel built here runs on any x86-64.
ext_modules: list = [
    Extension(
        "utf8fuzz.fast._fast",
        sources=[f"src/utf8fuzz/fast/{f}" for f in ("_fast.c", "scalar.c", "simd.c", "avx512.c")],
        depends=[f"src/utf8fuzz/fast/{h}" for h in ("fast.h", "lookup.h", "k128.h")],
        extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"],
    ),
    # The reference walk (src/utf8fuzz/profiles/walk.py): an interpreter of the
    # profiles' compiled tables, held equal to policies.decode_tokens by its tests.
    Extension(
        "utf8fuzz.profiles._walk",
        sources=["src/utf8fuzz/profiles/_walk.c"],
        extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"],
    ),
    # The ICU and iconv adapters' per-call glue (ICU is not linked: see the file).
    Extension(
        "utf8fuzz.decoders._native",
        sources=["src/utf8fuzz/decoders/_native.c"],
        extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"],
    ),
]

setup(ext_modules=ext_modules)
