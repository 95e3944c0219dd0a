"""The PostgreSQL backend (issue #16): the only package that imports psycopg.

Phase 1 holds the keyword index's building blocks (``keyword``: documents and queries as
``tsvector``/``tsquery`` literals of FTS5's own tokens; ``keyword_sql``: per-scope term
statistics kept by triggers, and FTS5's ``bm25()`` in SQL). ``docs/postgres.md`` is the design.
"""
