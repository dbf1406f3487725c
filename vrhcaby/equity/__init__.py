"""Outcome probabilities and what they are worth: equity and the change of view, match
equity, cube decisions, the game context."""
