"""The six-dice scoring game (vrhcaby, RULES.md section 3): `players` (random, greedy,
the exact optimum), `learner` (its network and game for the trainer), `specs` (agents by
spec string)."""
