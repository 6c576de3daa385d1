"""``did_you_mean``: ranking the ids a mistyped or guessed name most likely meant.

Models guess ids from what they have seen: a label, a synonym-free rewording, an acronym, the
same words in another order. Each candidate is scored against every spelling it has (its id,
its label, the aliases its definition declares) by three measures, and the best one counts:

* character similarity of the normalised strings, when both have as many words and each word
  is close to the one in its place: equal, an abbreviation of it, or a typo of it
  (``destinaton``; ``company_reg_number``). ``incident_kind`` is not a typo of
  ``incident_date``, however alike the whole strings look, and a longer name that merely
  contains a field's id, such as ``injury_description`` for ``description``, is not a typo of it;
* word overlap, where words match when equal or when one is a prefix of the other of at least
  four letters (``trading_years`` ~ ``years_trading``; ``received_treatment`` ~
  ``treatment_received``);
* an acronym of the candidate's words (``dob`` ~ ``date of birth``).

One more rule looks at the candidates together: a name whose leading word (three letters or
more) leads one candidate's id, and appears in no other candidate's spellings, is plausible for
it (``trip_kind`` for ``trip_type``, ``police_ref`` for ``police_report_number``), ranked after
anything the measures found. When other fields use the word too (``incident_kind`` with
``incident_type`` and ``incident_date``; ``lawyer`` with ``lawyer_name`` and ``has_lawyer``) it
says nothing.

Only candidates scoring at least ``CUTOFF`` are offered: a wrong suggestion invites a wrong
write, so nothing is better than a poor guess.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence

CUTOFF = 0.7
_TYPO = 0.6
"""Two words this alike (``difflib`` ratio) may be one mistyped as the other."""
_SPLIT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[^A-Za-z0-9]+")
_FILLER = frozenset({"a", "an", "the", "of", "to", "for", "in", "on", "and", "or", "your", "my"})


def words(text: str) -> tuple[str, ...]:
    """Lowercase words of an id or label: camelCase, snake_case, kebab-case and spaces split."""
    parts = (p.lower() for p in _SPLIT.split(text.strip()) if p)
    return tuple(p for p in parts if p not in _FILLER)


def _same_word(a: str, b: str) -> bool:
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 4 and long_.startswith(short)


def _close_word(sent: str, known: str) -> bool:
    """``sent`` may stand for ``known`` in a typo: equal, an abbreviation, or nearly equal."""
    if _same_word(sent, known) or (len(sent) >= 2 and known.startswith(sent)):
        return True
    return difflib.SequenceMatcher(None, sent, known).ratio() >= _TYPO


def _word_score(sent: tuple[str, ...], known: tuple[str, ...]) -> float:
    if not sent or not known:
        return 0.0
    matched = sum(1 for w in sent if any(_same_word(w, k) for k in known))
    covered = sum(1 for k in known if any(_same_word(k, w) for w in sent))
    return (matched + covered) / (len(sent) + len(known))


def _acronym(sent: str, spelling: str) -> bool:
    """``dob`` for ``date of birth`` (filler words may or may not count)."""
    every = [p.lower() for p in _SPLIT.split(spelling.strip()) if p]
    meaningful = [w for w in every if w not in _FILLER]
    return any(len(ws) >= 2 and sent == "".join(w[0] for w in ws) for ws in (every, meaningful))


def score(sent: str, spelling: str) -> float:
    """How likely ``sent`` was meant as ``spelling`` (0 to 1)."""
    sent_words, known_words = words(sent), words(spelling)
    flat_sent, flat_known = "".join(sent_words), "".join(known_words)
    if not flat_sent or not flat_known:
        return 0.0
    if _acronym(flat_sent, spelling):
        return 0.9
    by_words = _word_score(sent_words, known_words)
    if len(sent_words) != len(known_words) or not all(
        _close_word(w, k) for w, k in zip(sent_words, known_words, strict=True)
    ):
        return by_words
    characters = difflib.SequenceMatcher(None, flat_sent, flat_known).ratio()
    return max(characters, by_words)


def _leading_word_match(sent: str, candidates: Mapping[str, Sequence[str]]) -> str | None:
    """The candidate whose id starts with the word ``sent`` starts with, when no other candidate
    uses that word in any of its spellings."""
    sent_words = words(sent)
    if not sent_words or len(sent_words[0]) < 3:
        return None
    lead = sent_words[0]
    using = [
        c
        for c, spellings in candidates.items()
        if any(_same_word(lead, w) for s in (c, *spellings) for w in words(s))
    ]
    if len(using) != 1 or not _same_word(lead, words(using[0])[0]):
        return None
    return using[0]


def rank(sent: str, candidates: Mapping[str, Sequence[str]], limit: int = 3) -> list[str]:
    """Candidate ids (each with its spellings), best first, ties in candidate order."""
    leading = _leading_word_match(sent, candidates)
    scored: list[tuple[float, int, str]] = []
    for order, (candidate, spellings) in enumerate(candidates.items()):
        best = max((score(sent, s) for s in spellings), default=0.0)
        if candidate == leading:
            best = max(best, CUTOFF)
        if best >= CUTOFF:
            scored.append((-best, order, candidate))
    return [candidate for _, _, candidate in sorted(scored)[:limit]]
