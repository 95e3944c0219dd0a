"""The reliability harnesses (issue #15): job kinds, crash and fault injection, canaries.

Shared by the CI subset (``tests/reliability/test_*.py``) and the long runs
(``benchmarks/reliability.py``). Child processes run :mod:`reliability.harness.worker`.
"""
