"""Build hook: setuptools reads metadata from pyproject.toml; this file only
declares the C extensions (the fast path, the reference walk, the differ's
screening loop, the adapters' glue), which pyproject cannot express."""

from setuptools import Extension, setup

# No -march: the fast path's SIMD code carries its own target attributes and is
# chosen at run time, so a wheel built here runs on any x86-64.
CFLAGS = ["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"]
ext_modules: list = [
    # The fast path (src/utf8fuzz/fast/), and its adapter's whole screen (screen.c).
    Extension(
        "utf8fuzz.fast._fast",
        sources=[f"src/utf8fuzz/fast/{f}"
                 for f in ("_fast.c", "scalar.c", "simd.c", "avx512.c", "screen.c")],
        depends=[*(f"src/utf8fuzz/fast/{h}"
                   for h in ("fast.h", "lookup.h", "k128.h", "validate.h", "screen.h")),
                 "src/utf8fuzz/decoders/glue.h", "src/utf8fuzz/profiles/packed_tokens.h",
                 "src/utf8fuzz/small_tuples.h"],
        extra_compile_args=CFLAGS,
    ),
    # The reference walk (src/utf8fuzz/profiles/walk.py): an interpreter of the
    # profiles' compiled tables, held equal to policies.decode_tokens by its tests.
    Extension(
        "utf8fuzz.profiles._walk",
        sources=["src/utf8fuzz/profiles/_walk.c"],
        depends=[*(f"src/utf8fuzz/profiles/{h}" for h in ("walk.h", "packed_tokens.h")),
                 "src/utf8fuzz/small_tuples.h"],
        extra_compile_args=CFLAGS,
    ),
    # The differ's screening loop and judge, reading the walks through _walk's capsule.
    Extension(
        "utf8fuzz.engine._screen",
        sources=["src/utf8fuzz/engine/_screen.c"],
        depends=[f"src/utf8fuzz/profiles/{h}" for h in ("walk.h", "packed_tokens.h")],
        extra_compile_args=CFLAGS,
    ),
    # The adapters' per-call glue, one extension per decoder family (ICU is not
    # linked: see _icu.c).
    *(Extension(
        f"utf8fuzz.decoders._{family}",
        sources=[f"src/utf8fuzz/decoders/_{family}.c"],
        depends=[*(f"src/utf8fuzz/decoders/{h}" for h in ("glue.h", "tiling.h")),
                 "src/utf8fuzz/profiles/packed_tokens.h", "src/utf8fuzz/small_tuples.h"],
        extra_compile_args=CFLAGS,
    ) for family in ("icu", "iconv", "cpython")),
]

setup(ext_modules=ext_modules)
