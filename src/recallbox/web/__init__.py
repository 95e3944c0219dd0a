"""The local web inspector (DESIGN §8): a small Starlette + Jinja2 app over one Box.

:func:`build_app` makes the ASGI app; :func:`recallbox.web.serve.serve` serves it with uvicorn.
Importing this package imports neither (nothing heavy at import time).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from recallbox.web.app import build_app as build_app


def __getattr__(name: str) -> Any:
    if name == "build_app":
        from recallbox.web.app import build_app

        return build_app
    raise AttributeError(name)


__all__ = ["build_app"]
