"""``/policy``: the privacy policy, and the four changes to it, each behind a confirmation.

``GET /policy`` and ``GET /policy/confirm`` never change anything; the confirmation page's form
POSTs to ``/policy``, which the guard lets through only with a same-origin ``Origin`` and this
app's form token (:mod:`recallbox.web.security`). After the change the browser is sent back to
``/policy`` (303), so a reload does not repeat it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlencode

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from recallbox import Box, InvalidArgument, NotFound
from recallbox.web.params import text_param
from recallbox.web.render import inspector

#: The longest channel or source name the forms accept.
MAX_TARGET_CHARS = 4_096


@dataclass(frozen=True, slots=True)
class Action:
    """One policy change: its confirmation wording and the Box verb that makes it."""

    name: str
    question: str
    done: str
    verb: Callable[[Box, str], object]  # include_source says whether it lifted one


ACTIONS: dict[str, Action] = {
    a.name: a
    for a in (
        Action("quarantine", "Quarantine the thread", "quarantined", Box.quarantine),
        Action("unquarantine", "Release the thread", "released", Box.unquarantine),
        Action("exclude", "Exclude the source", "excluded", Box.exclude_source),
        Action("include", "Include the source again", "included", Box.include_source),
    )
}


def _action(name: str) -> Action:
    found = ACTIONS.get(name)
    if found is None:
        raise InvalidArgument(f"unknown policy action; use one of {', '.join(ACTIONS)}")
    return found


def _target(value: str) -> str:
    if not value.strip():
        raise InvalidArgument("name a thread channel or a source")
    if len(value) > MAX_TARGET_CHARS:
        raise InvalidArgument(f"a name is at most {MAX_TARGET_CHARS} characters")
    return value


def policy_page(request: Request) -> Response:
    """The quarantined threads and the excluded sources, with the forms that change them."""
    app = inspector(request)
    done = request.query_params.get("done")
    return app.page(
        "policy.html",
        policy=app.box.policy(),
        done=ACTIONS[done].done if done in ACTIONS else None,
        done_target=text_param(request, "target", MAX_TARGET_CHARS),
        nav="policy",
    )


def confirm_page(request: Request) -> Response:
    """ "Really?": what the change will do, and the form that makes it."""
    app = inspector(request)
    action = _action(request.query_params.get("action", ""))
    target = _target(text_param(request, "target", MAX_TARGET_CHARS))
    known = True
    if action.name in ("quarantine", "unquarantine"):
        try:
            app.box.thread(target)
        except (NotFound, InvalidArgument):
            known = False
    return app.page("confirm.html", action=action, target=target, known=known, nav="policy")


async def apply_change(request: Request) -> Response:
    """POST /policy: make the confirmed change, then back to ``/policy``."""
    app = inspector(request)
    form = await request.form()
    action = _action(str(form.get("action", "")))
    target = _target(str(form.get("target", "")))
    await run_in_threadpool(action.verb, app.box, target)
    query = urlencode({"done": action.name, "target": target})
    return RedirectResponse(f"/policy?{query}", status_code=303)
