"""Triage: what a person reads about a divergence, above the engine that finds it.

``explain`` (the simplest rule, in the spec's words, that reproduces a decoder's
outcome, checked on fresh inputs) over ``generalize`` (the byte pattern it holds
over); ``group`` (one finding per decoder family and rule; the findings a corpus
entry records); ``known`` (differences a user has triaged); ``policy_tally`` (which
error-cutting policy each decoder follows, feature by feature); ``clauses`` (the
clause of the spec that decides what an input means at an offset). The fuzz loop calls
it; the report reads it; the corpus stores what it says as data.
"""
