"""Games between agents: tournaments, match flow, rollouts, judging, statistics, and
where the work runs (local processes or Ray)."""
