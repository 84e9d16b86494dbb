"""Runtime: per-chat lanes, leases, outages, rate limits, guard, lifecycle; imports no wiring."""
