"""Learning: TD(λ) self-play, distillation from search, and the special networks.

The TD(λ) core: `config` (the run's ``[td]`` and ``[eval]`` settings), `episodes` (a
round's games), `returns` (the λ-return targets), `learner` (optimizer steps on them, the
schedules), `game` (what the trainer needs of a game), `selfplay` (batched greedy
backgammon games), `backgammon` (backgammon as a game, and its evaluation), `trainer` (one
run: rounds and checkpoint state); `sets` (TD of a network set, some class networks
learning) and `starts` (pools of start positions of one class); `ray` (self-play on Ray
workers, the learner in the driver). Distillation: `labels` (decisions valued by the
teacher's search, in shards), `distill` (fitting a network to them, its held-out scores),
`students` (what a distillation run fits: one network or a set's); `calibrate` (a
network's probabilities rescaled to its own self-play outcomes). The special networks:
`onesided` (the one-sided race network by fitted value iteration) and `prune` (the
search's pruning network). A training run as a whole lives above, in `vrhcaby.training`.
"""
