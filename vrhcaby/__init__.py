"""vrhcaby: a toolkit for training and judging backgammon bots the TD-Gammon way.

Its floors, from the bottom (docs/architecture.md): `base` (infrastructure), `equity`
(what probabilities are worth), `nn` (networks), `play` (games between agents), `learn`
(TD(λ) and distillation), `analysis` (hints, cube analysis, evaluations) and `sixdice`
(the six-dice game's players), `io` (files and wires), `review` (whole games judged),
`serve` (the HTTP service), `training` (training runs as library calls), `cli` (the
command line); `net` and `rollout` keep the network and rollout API under their first
names for users' scripts.
"""
