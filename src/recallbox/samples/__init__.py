"""Bundled sample data for ``recallbox demo`` (a realistic agent thread and knowledge notes)."""
