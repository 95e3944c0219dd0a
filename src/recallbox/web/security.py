"""The inspector's guard: one ASGI layer in front of every route (DESIGN §8, STYLE §10a).

In this order, each check refusing before anything after it runs:

1. **Host** — the ``Host`` header must name an allowed host (the bound address, ``localhost``
   or ``127.0.0.1``, with the port): anything else is a DNS-rebinding attempt → 403.
2. **Token** (when the app has one) — ``Authorization: Bearer <token>`` or the signed cookie
   that opening a ``?token=<token>`` link sets (that link then redirects to itself without the
   token, so it leaves no trace in history or a ``Referer``) → else 401.
3. **CSRF** (every method but GET and HEAD) — ``Sec-Fetch-Site``, when sent, must be
   ``same-origin``, and ``Origin`` must be sent and equal this server's origin (Datasette's
   ``csrf.py`` order); then the body — an urlencoded form of at most
   :data:`MAX_FORM_BYTES` — must carry this app's form token in :data:`CSRF_FIELD` → else 403.
   Only then is the request handed on (its body replayed), so a refused POST changes nothing.

Every response, refusals included, carries :data:`SECURITY_HEADERS`: a Content-Security-Policy
with no script source at all (stored text is escaped by the templates; the CSP is the second
wall), no framing, no referrer to another site, no caching.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, urlencode

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: The form field and the cookie names.
CSRF_FIELD = "csrf_token"
AUTH_COOKIE = "recallbox_ui_auth"
TOKEN_PARAM = "token"
#: The largest POST body read (the policy forms are a few hundred bytes).
MAX_FORM_BYTES = 64 * 1024
#: Host names allowed on any port when the app is built without an explicit list.
LOOPBACK_NAMES: tuple[str, ...] = ("127.0.0.1", "localhost", "[::1]")
SAFE_METHODS = frozenset({"GET", "HEAD"})
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS: tuple[tuple[str, str], ...] = (
    ("content-security-policy", CONTENT_SECURITY_POLICY),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    # same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" on a POST
    ("referrer-policy", "same-origin"),
    ("cache-control", "no-store"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-resource-policy", "same-origin"),
)


def split_host(value: str) -> tuple[str, str | None]:
    """``"127.0.0.1:8765"`` → ``("127.0.0.1", "8765")``; ``"[::1]:80"`` → ``("[::1]", "80")``."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return value, None
        rest = value[end + 1 :]
        return value[: end + 1], rest[1:] if rest.startswith(":") else None
    name, sep, port = value.rpartition(":")
    return (name, port) if sep and name else (value, None)


@dataclass(frozen=True)
class Guard:
    """What the guard lets through: allowed hosts, the optional token, this app's secrets.

    ``allowed_hosts`` holds ``name`` (any port) or ``name:port`` entries.
    """

    allowed_hosts: Collection[str] = LOOPBACK_NAMES
    token: str | None = None
    key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)

    @property
    def csrf_token(self) -> str:
        """The form token every POST must carry (per app: a restart invalidates old forms)."""
        return hmac.new(self.key, b"recallbox-ui-csrf", hashlib.sha256).hexdigest()

    def _auth_cookie_value(self) -> str:
        assert self.token is not None
        return hmac.new(self.key, b"auth:" + self.token.encode(), hashlib.sha256).hexdigest()

    def host_allowed(self, host: str | None) -> bool:
        """True when the ``Host`` header names an allowed host (and port)."""
        if not host:
            return False
        name, port = split_host(host)
        for entry in self.allowed_hosts:
            allowed_name, allowed_port = split_host(entry)
            if name == allowed_name and (allowed_port is None or allowed_port == port):
                return True
        return False

    def token_matches(self, given: str) -> bool:
        """Constant-time comparison with the app's token."""
        return self.token is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def authorized(self, headers: Headers) -> bool:
        """True without a token, or with the bearer token or a valid auth cookie."""
        if self.token is None:
            return True
        scheme, _, credential = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and self.token_matches(credential.strip()):
            return True
        cookie = _cookies(headers).get(AUTH_COOKIE)
        return cookie is not None and hmac.compare_digest(cookie, self._auth_cookie_value())

    def auth_cookie(self) -> str:
        """The ``Set-Cookie`` value a ``?token=`` link answers with."""
        return f"{AUTH_COOKIE}={self._auth_cookie_value()}; Path=/; HttpOnly; SameSite=Strict"


def _cookies(headers: Headers) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except Exception:  # a malformed Cookie header is no credential
        return {}
    return {name: morsel.value for name, morsel in jar.items()}


def same_origin(scope: Scope, headers: Headers) -> bool:
    """``Sec-Fetch-Site`` (when sent) is ``same-origin`` and ``Origin`` names this server."""
    site = headers.get("sec-fetch-site")
    if site is not None and site != "same-origin":
        return False
    origin = headers.get("origin")
    expected = f"{scope.get('scheme', 'http')}://{headers.get('host', '')}".lower()
    return origin is not None and origin.lower() == expected


async def _plain(send: Send, status: int, text: str, extra: Iterable[tuple[str, str]] = ()) -> None:
    body = (text + "\n").encode()
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
    ]
    headers += [(k.encode(), v.encode()) for k, v in (*SECURITY_HEADERS, *extra)]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass


async def _read_body(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _TooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


class GuardMiddleware:
    """The ASGI layer that applies a :class:`Guard` (see the module docstring)."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if not self.guard.host_allowed(headers.get("host")):
            await _plain(send, 403, "403 forbidden: this Host is not served here")
            return
        if not self.guard.authorized(headers):
            await self._token_link_or_401(scope, send)
            return
        if scope["method"] not in SAFE_METHODS:
            checked = await self._check_form(scope, headers, receive, send)
            if checked is None:
                return
            receive = _replay(checked)
        await self.app(scope, receive, _with_headers(send))

    async def _token_link_or_401(self, scope: Scope, send: Send) -> None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        given = query.pop(TOKEN_PARAM, [""])[-1]
        if scope["method"] in SAFE_METHODS and self.guard.token_matches(given):
            rest = urlencode(query, doseq=True)
            raw = scope.get("raw_path") or scope.get("path", "/").encode()
            # the path as sent (percent-encoded), never "//host" (an open redirect)
            location = "/" + raw.decode("latin-1").lstrip("/") + ("?" + rest if rest else "")
            extra = (("location", location), ("set-cookie", self.guard.auth_cookie()))
            await _plain(send, 303, "signed in; redirecting", extra)
            return
        await _plain(
            send,
            401,
            "401 unauthorized: open the inspector's link with ?token=<token> once, "
            "or send Authorization: Bearer <token>",
            (("www-authenticate", 'Bearer realm="recallbox"'),),
        )

    async def _check_form(
        self, scope: Scope, headers: Headers, receive: Receive, send: Send
    ) -> bytes | None:
        """The body of an allowed POST, or ``None`` after sending the refusal."""
        if not same_origin(scope, headers):
            await _plain(send, 403, "403 forbidden: cross-origin request refused")
            return None
        try:
            body = await _read_body(receive, MAX_FORM_BYTES)
        except _TooLarge:
            await _plain(send, 413, "413 request body too large")
            return None
        form = parse_qs(body.decode("utf-8", errors="replace"))
        given = form.get(CSRF_FIELD, [""])[-1]
        if not hmac.compare_digest(given.encode(), self.guard.csrf_token.encode()):
            await _plain(send, 403, "403 forbidden: missing or stale form token; reload the page")
            return None
        return body


def _with_headers(send: Send) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            present = {name.lower() for name, _ in message.get("headers", [])}
            extra = [
                (k.encode(), v.encode()) for k, v in SECURITY_HEADERS if k.encode() not in present
            ]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return wrapped
