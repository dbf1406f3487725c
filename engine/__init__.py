"""Backgammon rules, the batched move generator and the formats players use.

Pure numpy (the generator's kernel compiled by numba); no torch, no I/O.

>>> import numpy as np, engine
>>> pos = engine.Position.from_id("4HPwATDgc/ABMA")
>>> [str(p) for p in engine.legal_plays(pos, (6, 5))]
['24/13']
"""

from engine.game import (
    GameRecord,
    SelfPlayResult,
    Turn,
    game_value,
    opening_roll,
    play_game,
    random_chooser,
    random_selfplay,
    roll_dice,
)
from engine.movegen import batch_afterstates, batch_afterstates_with_steps
from engine.play import IllegalPlayError, InvalidPlayError, Play, check_dice, legal_plays
from engine.position import CHECKERS, Position, has_contact, pips, validate_board
from engine.variants import VARIANTS, Variant, get_variant

__all__ = [
    "CHECKERS",
    "VARIANTS",
    "GameRecord",
    "IllegalPlayError",
    "InvalidPlayError",
    "Play",
    "Position",
    "SelfPlayResult",
    "Turn",
    "Variant",
    "batch_afterstates",
    "batch_afterstates_with_steps",
    "check_dice",
    "game_value",
    "get_variant",
    "has_contact",
    "legal_plays",
    "opening_roll",
    "pips",
    "play_game",
    "random_chooser",
    "random_selfplay",
    "roll_dice",
    "validate_board",
]
