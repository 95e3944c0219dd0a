"""The one JSON dump of a message's metadata is the text stored (``NewMessage.metadata_json``).

``build_row`` validates metadata by serialising it, with the options of ``dump_json``, and keeps
that text when it is UTF-8, so the importer stores it without serialising it again: it must be
byte-for-byte what ``dump_json`` would store, and absent where ``dump_json`` would fall back.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recallbox.domains.messages import build_row
from recallbox.errors import InvalidArgument
from recallbox.importers._sync_rows import clean_row
from recallbox.storage.codecs import dump_json, is_utf8, stored_metadata

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(st.dictionaries(st.text(), json_values, max_size=5))
def test_the_kept_text_is_what_dump_json_stores(metadata: dict[str, Any]) -> None:
    row = build_row("user", "hi", metadata=metadata)
    assert row.metadata_json == dump_json(metadata)
    assert stored_metadata(row) == dump_json(metadata)


def test_examples_byte_for_byte() -> None:
    metadata = {"名": "値 — ok", "sep": "a\u2028b", 3: [1, 2.5, None], "big": 10**30}
    row = build_row("user", "hi", metadata=metadata)
    assert row.metadata_json == dump_json(metadata)
    assert row.metadata_json is not None and '"名":"値 — ok"' in row.metadata_json


def test_a_lone_surrogate_keeps_no_text_and_the_importer_cleans_it() -> None:
    metadata = {"note": "broken \ud800 half"}
    assert build_row("user", "hi", metadata=metadata).metadata_json is None
    cleaned = clean_row({"role": "user", "content": "hi", "metadata": metadata})
    assert cleaned.metadata_json is not None and is_utf8(cleaned.metadata_json)
    assert "\ud800" not in cleaned.metadata_json


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), {1, 2}])
def test_metadata_that_is_not_json_is_refused_by_name(bad: object) -> None:
    with pytest.raises(InvalidArgument, match="metadata must be JSON-serialisable"):
        build_row("user", "hi", metadata={"x": bad})
