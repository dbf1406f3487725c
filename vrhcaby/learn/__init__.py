"""Learning by self-play: the TD(λ) core, the backgammon game, the Ray trainer.

`config` (the run's ``[td]`` and ``[eval]`` settings), `episodes` (a round's games),
`returns` (the λ-return targets), `learner` (optimizer steps on them, the schedules),
`game` (what the trainer needs of a game), `selfplay` (batched greedy backgammon games),
`backgammon` (backgammon as a game, and its evaluation), `trainer` (one run: rounds and
checkpoint state), `ray` (self-play on Ray workers, the learner in the driver).
"""
