"""The privacy policy: ``policy show|quarantine|unquarantine|exclude|include`` (DESIGN §5)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from recallbox.cli.shared import RecallboxGroup, emit_json, json_option, open_box

if TYPE_CHECKING:
    from recallbox.box import Box
    from recallbox.types import Policy


@click.group(cls=RecallboxGroup)
def policy() -> None:
    """The stored privacy policy every recall path applies: quarantined threads, excluded sources.

    Example: recallbox policy quarantine claude-code:7f3c2a10
    """


def render_policy(p: Policy) -> str:
    """The text form of ``policy show``."""
    quarantined = "\n".join(f"  {c}" for c in p.quarantined) or "  (none)"
    excluded = "\n".join(f"  {s}" for s in p.excluded_sources) or "  (none)"
    return f"quarantined threads:\n{quarantined}\nexcluded sources:\n{excluded}"


def _show(p: Policy, as_json: bool, done: str | None = None) -> None:
    if as_json:
        emit_json(p)
        return
    if done is not None:
        click.echo(done)
    else:
        click.echo(render_policy(p))


@policy.command("show")
@json_option
@click.pass_context
def policy_show(ctx: click.Context, as_json: bool) -> None:
    """Print the quarantined threads and the excluded sources.

    Example: recallbox policy show --json
    """
    with open_box(ctx) as box:
        current = box.policy()
    _show(current, as_json)


def _change(ctx: click.Context, verb: Callable[[Box], None], done: str, as_json: bool) -> None:
    with open_box(ctx) as box:
        verb(box)
        current = box.policy()
    _show(current, as_json, done)


@policy.command("quarantine")
@click.argument("channel")
@json_option
@click.pass_context
def policy_quarantine(ctx: click.Context, channel: str, as_json: bool) -> None:
    """Deny a thread in every recall path (its text stays stored; unquarantine restores it).

    Example: recallbox policy quarantine private:notes
    """
    _change(ctx, lambda box: box.quarantine(channel), f"quarantined {channel}", as_json)


@policy.command("unquarantine")
@click.argument("channel")
@json_option
@click.pass_context
def policy_unquarantine(ctx: click.Context, channel: str, as_json: bool) -> None:
    """Release a quarantined thread.

    Example: recallbox policy unquarantine private:notes
    """
    _change(ctx, lambda box: box.unquarantine(channel), f"released {channel}", as_json)


@policy.command("exclude")
@click.argument("name")
@json_option
@click.pass_context
def policy_exclude(ctx: click.Context, name: str, as_json: bool) -> None:
    """Deny a source (a transcript or document file name or path) in every domain.

    Example: recallbox policy exclude ~/.claude/projects/-home-me-secret/3f1c.jsonl
    """
    _change(ctx, lambda box: box.exclude_source(name), f"excluded {name}", as_json)


@policy.command("include")
@click.argument("name")
@json_option
@click.pass_context
def policy_include(ctx: click.Context, name: str, as_json: bool) -> None:
    """Lift an exclusion made by `policy exclude` (says so when NAME was not excluded).

    Example: recallbox policy include 3f1c.jsonl
    """
    with open_box(ctx) as box:
        lifted = box.include_source(name)
        current = box.policy()
    excluded = ", ".join(current.excluded_sources) or "(none)"
    done = (
        f"included {name}"
        if lifted
        else f"nothing to include: {name} is not excluded; excluded: {excluded}"
    )
    _show(current, as_json, done)


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(policy)
