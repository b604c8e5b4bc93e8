"""The fuzz loop, above the engine's stages and triage.

``run`` (both engines: the worker pool, the libFuzzer driver, the run summary) ->
``atheris_target`` (the code inside libFuzzer; ``targets`` the modules it runs as,
``mutator`` and ``coverage`` what steers it) -> ``finder`` (the step every engine
shares: an input through the differ, then minimized, explained and saved), with
``recover`` (re-running inputs that killed the process) and ``migrate`` (a corpus
explained again by the current rules).
"""
