"""Outcome probabilities and what they are worth: `outcomes` (the five probabilities'
names, equity and the change of view), `met` (match equity tables), `cube` (Janowski's
cubeful equity and cube decisions), `context` (the game context: cube, score, rules) and
`decisions` (cube decisions, play equities and resignations in a context)."""
