"""Games between agents: `tournament`, `match` (the match flow), `rollout` (with
`rollout_cube`, `rollout_results`, `rollout_trials` and `rollout_variance`), judging
(`judge` for checker play, `cube_judge` for cube decisions, `calibration`), `stats`, and
where the work runs (`pool`: local processes, `ray`: Ray jobs)."""
