"""numpy, imported at its first use.

The vector copies (``vector_cache.py``, ``vector_window.py``) compute with numpy, but opening a
store and a literal search never do: importing numpy costs about 0.13 s of a cold start (a hook,
a CLI call). :data:`np` is ``None`` when numpy is not installed (a hash-only core install: no
copies are kept), else a stand-in that imports numpy when an attribute is first read.
"""

from __future__ import annotations

import importlib.util
from typing import Any


class _LazyNumpy:
    """Forwards every attribute to numpy, importing it the first time."""

    def __getattr__(self, name: str) -> Any:
        import numpy

        return getattr(numpy, name)


np: Any = _LazyNumpy() if importlib.util.find_spec("numpy") is not None else None
