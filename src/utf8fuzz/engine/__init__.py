"""The differential engine, one module per stage, in one direction:

``differ`` (run decoders, compare with references at shared views) ->
``signature`` (class and spec feature) -> ``minimize`` -> ``corpus`` (atomic entries),
with ``expect`` (ICU-style expectations), ``finder`` (the step every engine shares),
``boundaries``/``mutator`` (what generators start from) and ``run`` (the fuzz loop).
"""
