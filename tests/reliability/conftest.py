"""The reliability CI subset: sizes small enough for < 5 minutes on 2 cores (the long runs are
``benchmarks/reliability.py``)."""

from __future__ import annotations

CI_KILLS = {"python": 3, "cli": 2}
"""kill -9 per job kind in CI, by interface (a CLI start costs about a second)."""
CI_WRITES = 60
"""Messages per concurrent Python appender in CI."""
CI_CRASH_PARALLEL = 3
"""Kill series (one per job kind, each on its own database) run at once in CI: a series mostly
waits for its kill points, so three overlap on 2 cores."""
