"""The storage contract suite: written against ``recallbox.storage.base`` only (see conftest)."""
