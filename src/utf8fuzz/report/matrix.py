"""The agreement matrix: for each pair of decoders, on how many corpus inputs
they disagree.

Two outcomes are compared at the views both show (never at a view one of them
cannot show). A crash or timeout agrees only with the same kind of failure. A pair with
no shared view on an input is *not comparable* there; the matrix counts, per
pair, the inputs compared and the inputs on which they disagree. Decoders that
claim different profiles are compared too: the matrix shows raw behaviour, the
verdicts say who is right.
"""

from __future__ import annotations

from dataclasses import dataclass

from utf8fuzz.outcome import VIEWS, Outcome
from utf8fuzz.report.load import Entry


@dataclass
class Matrix:
    decoders: list[str]
    compared: dict[tuple[str, str], int]
    disagree: dict[tuple[str, str], int]

    def cell(self, a: str, b: str) -> tuple[int, int]:
        """(disagreements, inputs compared) for the pair."""
        return self.disagree.get((a, b), 0), self.compared.get((a, b), 0)


def differ(a: Outcome, b: Outcome) -> bool | None:
    """True/False, or None when the two share no view."""
    if not (a.ok and b.ok):
        # Failure details hold addresses and timings; the status is what is compared.
        return a.status != b.status
    shared = [v for v in VIEWS if v in a.shows and v in b.shows]
    if not shared:
        return None
    return any(a.view(v) != b.view(v) for v in shared)


def agreement_matrix(entries: list[Entry]) -> Matrix:
    names = sorted({n for e in entries for n in e.records})
    compared: dict[tuple[str, str], int] = {}
    disagree: dict[tuple[str, str], int] = {}
    seen: set[tuple[bytes, str, str]] = set()  # an input saved under two signatures counts once
    for e in entries:
        recs = sorted(e.records.items())
        for i, (na, ra) in enumerate(recs):
            for nb, rb in recs[i + 1:]:
                if (e.data, na, nb) in seen:
                    continue
                seen.add((e.data, na, nb))
                d = differ(ra.outcome, rb.outcome)
                if d is None:
                    continue
                for key in ((na, nb), (nb, na)):
                    compared[key] = compared.get(key, 0) + 1
                    if d:
                        disagree[key] = disagree.get(key, 0) + 1
    return Matrix(names, compared, disagree)
