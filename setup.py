"""Build hook: setuptools reads metadata from pyproject.toml; this file only
declares the C extensions (the fast path, the reference walk, the ICU/iconv glue),
which pyproject cannot express."""

from setuptools import Extension, setup

# No -march: the fast path's SIMD code carries its own target attributes and is
# chosen at run time, so a wheel built here runs on any x86-64.
CFLAGS = ["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"]
ext_modules: list = [
    # The fast path (src/utf8fuzz/fast/).
    Extension(
        "utf8fuzz.fast._fast",
        sources=[f"src/utf8fuzz/fast/{f}" for f in ("_fast.c", "scalar.c", "simd.c", "avx512.c")],
        depends=[*(f"src/utf8fuzz/fast/{h}" for h in ("fast.h", "lookup.h", "k128.h")),
                 "src/utf8fuzz/small_tuples.h"],
        extra_compile_args=CFLAGS,
    ),
    # The reference walk (src/utf8fuzz/profiles/walk.py): an interpreter of the
    # profiles' compiled tables, held equal to policies.decode_tokens by its tests.
    Extension(
        "utf8fuzz.profiles._walk",
        sources=["src/utf8fuzz/profiles/_walk.c"],
        depends=["src/utf8fuzz/profiles/packed_tokens.h", "src/utf8fuzz/small_tuples.h"],
        extra_compile_args=CFLAGS,
    ),
    # The ICU and iconv adapters' per-call glue (ICU is not linked: see the file).
    Extension(
        "utf8fuzz.decoders._native",
        sources=["src/utf8fuzz/decoders/_native.c"],
        depends=["src/utf8fuzz/profiles/packed_tokens.h", "src/utf8fuzz/small_tuples.h"],
        extra_compile_args=CFLAGS,
    ),
]

setup(ext_modules=ext_modules)
