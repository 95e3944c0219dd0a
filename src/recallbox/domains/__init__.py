"""Recall domains: records and rules, no SQL."""
