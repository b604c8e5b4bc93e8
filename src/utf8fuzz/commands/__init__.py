"""One module per ``utf8fuzz`` subcommand; see :mod:`utf8fuzz.cli`."""
