"""A tiny sample repository: the billing service of the demo thread (``recallbox demo`` indexes it
with the code domain; it is never imported by recallbox itself)."""
