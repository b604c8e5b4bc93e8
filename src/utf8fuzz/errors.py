"""Exceptions shared across the package."""


class UsageError(Exception):
    """A problem with what the user asked for: the CLI prints one line, exits 2."""
