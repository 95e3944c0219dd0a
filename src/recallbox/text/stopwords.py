"""The committed English stop-word list of the keyword leg (DESIGN §4.1).

The query side drops these words (compared case-insensitively, after the surrounding
punctuation of a query word is stripped) unless that would leave nothing. The indexed side keeps
every word, so a query made only of stop words (``"to be or not to be"``) still finds its text.

The list is the usual closed class of English function words: articles, pronouns, auxiliary
and modal verbs, prepositions, conjunctions, question words and their contractions (with both
the ASCII ``'`` and the typographic ``’`` apostrophe). It holds no content words, so it does
not depend on any corpus. Measured on LoCoMo (DESIGN §4.1): without stemming and stop words,
keyword recall is about 8 points lower.
"""

from __future__ import annotations

_WORDS = """
a about above after again against all am an and any are aren't as at
be because been before being below between both but by
can can't cannot could couldn't
did didn't do does doesn't doing don't down during
each
few for from further
had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself
him himself his how how's
i i'd i'll i'm i've if in into is isn't it it's its itself
let's
me more most mustn't my myself
no nor not
of off on once only or other ought our ours ourselves out over own
same shan't she she'd she'll she's should shouldn't so some such
than that that's the their theirs them themselves then there there's these they they'd
they'll they're they've this those through to too
under until up
very
was wasn't we we'd we'll we're we've were weren't what what's when when's where where's
which while who who's whom why why's will with won't would wouldn't
you you'd you'll you're you've your yours yourself yourselves
"""

#: Lower-case English stop words, ASCII and typographic apostrophes both present.
STOPWORDS_EN: frozenset[str] = frozenset(
    word.replace("'", apostrophe) for word in _WORDS.split() for apostrophe in ("'", "\u2019")
)


def is_stopword(word: str) -> bool:
    """True when ``word`` (any case) is in :data:`STOPWORDS_EN`."""
    return word.casefold() in STOPWORDS_EN
