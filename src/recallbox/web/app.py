"""``build_app``: the inspector as one Starlette app over one Box (DESIGN §8, STYLE §10a).

The route table below is the whole surface. Each route parses its request, calls the Box
(audit verbs for metadata, gated verbs for text and search) and renders an autoescaped
template; no route reads the store. :class:`~recallbox.web.security.GuardMiddleware` sits in
front of all of them.
"""

from __future__ import annotations

from collections.abc import Collection

from starlette.applications import Starlette
from starlette.convertors import PathConvertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

import recallbox.web.inventory as inventory
import recallbox.web.pages as pages
import recallbox.web.policy as policy
import recallbox.web.search as search
from recallbox import Box, InvalidArgument, NotFound, RecallError
from recallbox.web.render import Inspector, environment, inspector
from recallbox.web.security import LOOPBACK_NAMES, Guard, GuardMiddleware

CHANNEL_CONVERTOR = "channel"


class ChannelConvertor(PathConvertor):
    """The rest of the path, newlines included (a channel is any non-blank string)."""

    regex = "(?s:.+)"


def build_app(
    box: Box, *, token: str | None = None, allowed_hosts: Collection[str] | None = None
) -> Starlette:
    """The inspector over ``box``.

    Args:
        box: the open Box every page reads (the caller owns and closes it).
        token: when set, every request must carry it (bearer header, or the cookie a
            ``?token=`` link sets); otherwise 401.
        allowed_hosts: the ``Host`` values served (``name`` for any port, or ``name:port``);
            default: ``127.0.0.1``, ``localhost`` and ``[::1]`` on any port.
    """
    register_url_convertor(CHANNEL_CONVERTOR, ChannelConvertor())
    guard = Guard(
        allowed_hosts=tuple(allowed_hosts) if allowed_hosts is not None else LOOPBACK_NAMES,
        token=token,
    )
    routes = [
        Route("/healthz", pages.healthz, methods=["GET"]),
        Route("/", pages.index, methods=["GET"]),
        Route("/threads/{channel:" + CHANNEL_CONVERTOR + "}", pages.thread, methods=["GET"]),
        Route("/messages/{message_id}", pages.message, methods=["GET"]),
        Route("/search", search.search, methods=["GET"]),
        Route("/memory", inventory.memory, methods=["GET"]),
        Route("/knowledge", inventory.knowledge, methods=["GET"]),
        Route("/code", inventory.code, methods=["GET"]),
        Route("/hits", inventory.hits, methods=["GET"]),
        Route("/policy", policy.policy_page, methods=["GET"]),
        Route("/policy", policy.apply_change, methods=["POST"]),
        Route("/policy/confirm", policy.confirm_page, methods=["GET"]),
        Mount("/static", StaticFiles(packages=[("recallbox.web", "static")]), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(GuardMiddleware, guard=guard)],
        exception_handlers={
            NotFound: _not_found,
            InvalidArgument: _bad_request,
            RecallError: _unavailable,
            HTTPException: _http_error,
        },
    )
    app.state.inspector = Inspector(box=box, env=environment(), csrf_token=guard.csrf_token)
    return app


def _error(request: Request, status: int, title: str, detail: str) -> Response:
    return inspector(request).page("error.html", status, title=title, detail=detail, nav="")


async def _not_found(request: Request, exc: Exception) -> Response:
    return _error(request, 404, "Not found", str(exc).strip("'\""))


async def _bad_request(request: Request, exc: Exception) -> Response:
    return _error(request, 400, "Bad request", str(exc))


async def _unavailable(request: Request, exc: Exception) -> Response:
    return _error(request, 503, "The store could not answer", str(exc))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return _error(request, exc.status_code, exc.detail, "")
