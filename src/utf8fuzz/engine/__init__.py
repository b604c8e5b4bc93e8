"""The differential engine, one module per stage, in one direction:

``differ`` (run decoders, compare with references at shared views; ``classify`` the
first difference, ``screening`` the speed operations behind it) -> ``signature``
(class and spec feature) -> ``minimize`` -> ``corpus`` (atomic entries), with
``expect`` (ICU-style expectations), ``replay`` (a corpus entry judged again) and
``boundaries``/``long`` (what generators start from). What a divergence means is
:mod:`utf8fuzz.triage`; the loop that feeds inputs is :mod:`utf8fuzz.loop`.
"""
