"""The domain registry: every recall domain, in one place (DESIGN §4, §5).

:data:`DOMAINS` is the full list, in the order ``recall()`` renders buckets; :data:`REGISTRY`
maps each domain this version can search to its :class:`~recallbox.domains.base.Domain`.
``box.search`` dispatches through :func:`get_domain`, the embedding passes embed the corpus
of every registered domain with an ``owner``, and ``recall()`` iterates :func:`registered`.
Adding a domain is one module and one entry below (see ``docs/ARCHITECTURE.md``).
"""

from __future__ import annotations

from collections.abc import Mapping

from recallbox.domains.base import Domain
from recallbox.domains.code import CODE
from recallbox.domains.knowledge import KNOWLEDGE
from recallbox.domains.memory import MEMORY
from recallbox.domains.sessions import SESSIONS
from recallbox.domains.transcripts import TRANSCRIPTS
from recallbox.errors import InvalidArgument

#: Every recall domain, in the order buckets are rendered (DESIGN §5).
DOMAINS: tuple[str, ...] = ("memory", "knowledge", "sessions", "transcripts", "code")

#: The domains this version can search, by name.
REGISTRY: Mapping[str, Domain] = {
    domain.name: domain for domain in (MEMORY, KNOWLEDGE, SESSIONS, TRANSCRIPTS, CODE)
}

#: Their names, in :data:`DOMAINS` order.
AVAILABLE_DOMAINS: tuple[str, ...] = tuple(name for name in DOMAINS if name in REGISTRY)


def get_domain(name: object) -> Domain:
    """The registered domain ``name``.

    Raises:
        InvalidArgument: an unknown domain (the message lists them), or one of
            :data:`DOMAINS` not available in this version yet.
    """
    if not isinstance(name, str) or name not in DOMAINS:
        raise InvalidArgument(f"unknown domain {name!r}; expected one of {', '.join(DOMAINS)}")
    domain = REGISTRY.get(name)
    if domain is None:
        raise InvalidArgument(
            f"the {name!r} domain is not available yet in this version of recallbox; "
            f"search one of: {', '.join(AVAILABLE_DOMAINS)}"
        )
    return domain


def registered() -> list[Domain]:
    """The registered domains, in :data:`DOMAINS` order."""
    return [REGISTRY[name] for name in AVAILABLE_DOMAINS]


def vector_owners() -> list[str]:
    """The corpora whose vectors the embedding passes write, in :data:`DOMAINS` order."""
    owners = [domain.owner for domain in registered() if domain.owner is not None]
    return list(dict.fromkeys(owners))
