"""The one public token estimator used by every token budget (DESIGN §4.4)."""

from __future__ import annotations

import math

from recallbox.text.cjk import cjk_count

NON_CJK_CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """``ceil(non_cjk_chars / 4) + cjk_chars``: offline, no tokenizer download."""
    cjk = cjk_count(text)
    return math.ceil((len(text) - cjk) / NON_CJK_CHARS_PER_TOKEN) + cjk
