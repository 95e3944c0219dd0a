"""A deterministic feature-hashing embedder with no dependency and no model.

:class:`HashingEmbedder` is not a semantic model: it maps the words of a text (and, for CJK
scripts, single characters and overlapping character bigrams) to signed buckets of a fixed-size
vector. Texts that share words therefore get a positive cosine (unless two different features
happen to collide in one bucket with opposite signs, which becomes rarer as ``dim`` grows),
identical texts get cosine 1.0, and texts with no words in common get about 0. It serves unit
tests and latency runs, and is a usable keyword-ish fallback.

Buckets come from BLAKE2b, never from Python's per-process salted ``hash()``, so a vector is the
same in every process and on every machine; ``model_id`` (``hash-v1-<dim>``) names the scheme.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from recallbox.embeddings.base import Embedding, as_text_list
from recallbox.errors import InvalidArgument

__all__ = [
    "HASH_DEFAULT_DIM",
    "HASH_MAX_DIM",
    "HASH_MIN_DIM",
    "HASH_MODEL_VERSION",
    "HashingEmbedder",
    "hash_features",
]

#: Version of the hashing scheme; part of ``model_id``. Bump it whenever a vector would change.
HASH_MODEL_VERSION = "v1"
#: Default vector length.
HASH_DEFAULT_DIM = 256
#: Smallest accepted vector length.
HASH_MIN_DIM = 2
#: Largest accepted vector length.
HASH_MAX_DIM = 65_536
#: Bytes of BLAKE2b digest per feature (64 bits: bucket from the low bits, sign from the top one).
_DIGEST_BYTES = 8
#: The top bit of the digest, read as a little-endian integer, decides the sign.
_SIGN_BIT = _DIGEST_BYTES * 8 - 1
#: BLAKE2b personalisation string, so these digests never coincide with another use of BLAKE2b.
_PERSON = b"recallbox-hash1"
#: How many (feature, dim) -> (bucket, sign) results are kept in memory.
_FEATURE_CACHE_SIZE = 65_536
#: Prefix that keeps CJK character features apart from a word spelled the same way.
_CJK_PREFIX = "\x01"

# Hiragana, Katakana, CJK Extension A, CJK Unified Ideographs, Hangul syllables, CJK
# Compatibility Ideographs, and the supplementary-plane ideographs (Extensions B to H).
_CJK_RANGES = (
    "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f"
)
_TOKEN_RE = re.compile(rf"(?P<cjk>[{_CJK_RANGES}]+)|(?P<word>[^\W{_CJK_RANGES}]+)")


def hash_features(text: str) -> list[str]:
    """The features of ``text``: casefolded words, then CJK characters and bigrams.

    A word is a run of Unicode letters, digits and underscores; a run of CJK characters yields
    each character and each pair of neighbouring characters instead (``压缩摘要`` gives ``压``,
    ``缩``, ``摘``, ``要``, ``压缩``, ``缩摘``, ``摘要``).
    """
    features: list[str] = []
    for match in _TOKEN_RE.finditer(text.casefold()):
        run = match.group("cjk")
        if run is None:
            features.append(match.group("word"))
            continue
        features.extend(_CJK_PREFIX + char for char in run)
        features.extend(_CJK_PREFIX + run[i : i + 2] for i in range(len(run) - 1))
    return features


@lru_cache(maxsize=_FEATURE_CACHE_SIZE)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    """(bucket index, +1.0 or -1.0) of one feature."""
    digest = hashlib.blake2b(
        feature.encode("utf-8"), digest_size=_DIGEST_BYTES, person=_PERSON
    ).digest()
    value = int.from_bytes(digest, "little")
    sign = -1.0 if (value >> _SIGN_BIT) & 1 else 1.0
    return value % dim, sign


class HashingEmbedder:
    """Signed feature hashing of words and CJK characters/bigrams into ``dim`` buckets.

    Empty or whitespace-only text, and text without a single word character (only punctuation),
    embeds to ``None``. Vectors are L2-normalised.
    """

    def __init__(self, dim: int = HASH_DEFAULT_DIM) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise InvalidArgument(f"dim must be an int, got {type(dim).__name__}")
        if not HASH_MIN_DIM <= dim <= HASH_MAX_DIM:
            raise InvalidArgument(
                f"dim must be between {HASH_MIN_DIM} and {HASH_MAX_DIM}, got {dim}"
            )
        self._dim = dim
        self._model_id = f"hash-{HASH_MODEL_VERSION}-{dim}"

    @property
    def model_id(self) -> str:
        """``hash-v1-<dim>``."""
        return self._model_id

    @property
    def dim(self) -> int:
        """The vector length given to the constructor."""
        return self._dim

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self._dim})"

    def embed(self, texts: Sequence[str]) -> list[Embedding]:
        """One vector per text (``None`` for a text without features)."""
        return [self._embed_one(text) for text in as_text_list(texts)]

    def _embed_one(self, text: str) -> Embedding:
        counts = Counter(hash_features(text))
        if not counts:
            return None
        vector = [0.0] * self._dim
        for feature, count in counts.items():
            index, sign = _bucket(feature, self._dim)
            vector[index] += sign * count
        norm = math.sqrt(math.fsum(x * x for x in vector))
        if norm == 0.0:
            # Every feature cancelled out in colliding buckets: no direction is left.
            return None
        return [x / norm for x in vector]
