"""Backgammon rules, the batched move generator and the formats players use.

Pure numpy (the generator's kernel compiled by numba, or ahead of time: `engine.aot`); no
torch, no I/O. Compiled code is loaded on the first use of the batched generator
(`batch_afterstates*`, `engine.jit`): until then `legal_plays` walks one position in plain
Python, so that a one-off question starts fast.

The modules, from the bottom: `board` (facts of a bare board: checker counts, legality,
pips, contact), `dice` (the 21 rolls and their weights), `text` (numbers read from text,
a user's input quoted), `position` (the `Position` value), `play` (a turn as a value, its
notation both ways, the legal plays of a roll), `plain` (one position's plays in plain
Python), `movegen` (the batched move generator), `classify` (GNU Backgammon's position
classes), `bearoff` and `bearoff_build` (the bear-off tables and their dynamic
programs), `formats` (Position ID, Match ID, XGID), `variants` (starting layouts and
their rules), `acey_deucey` (its entering checkers and the 1-2 bonus), `waiting` (position
strings with `start` and waiting checkers), `game` (whole games from an injected
generator), `svg` (the board as a picture), `sixdice` (the six-dice scoring game's
rules), and `jit` and `aot` (kernels on first use, or from the ahead-of-time module).

>>> import numpy as np, engine
>>> pos = engine.Position.from_id("4HPwATDgc/ABMA")
>>> sorted(str(p) for p in engine.legal_plays(pos, (6, 5)))[:3]
['13/2', '13/7 8/3', '13/8 13/7']
"""

from typing import TYPE_CHECKING

from engine.board import CHECKERS, has_contact, pips, validate_board
from engine.classify import classify_boards
from engine.formats import (
    GameState,
    MatchState,
    board_from_position_id,
    gnubg_id,
    match_id,
    parse_position,
    parse_xgid,
    position_id,
    xgid,
)
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
from engine.play import (
    IllegalPlayError,
    InvalidPlayError,
    Play,
    check_dice,
    legal_plays,
    parse_dice,
)
from engine.position import Position
from engine.variants import VARIANTS, Variant, get_variant

if TYPE_CHECKING:  # the lazily imported names below, typed for checkers
    from engine.acey_deucey import (
        PlayAD,
        batch_afterstates_ad,
        batch_bonus_ad,
        game_value_ad,
        legal_plays_ad,
        play_game_ad,
        random_selfplay_ad,
        start_boards_ad,
    )
    from engine.movegen import batch_afterstates, batch_afterstates_with_steps, random_turns

# The batched generator and acey-deucey's kernels are compiled by numba: imported on first
# use, so that a program that does not need them does not pay for loading numba.
_BATCHED = ("batch_afterstates", "batch_afterstates_with_steps", "random_turns")
_ACEY_DEUCEY = (
    "PlayAD",
    "batch_afterstates_ad",
    "batch_bonus_ad",
    "game_value_ad",
    "legal_plays_ad",
    "play_game_ad",
    "random_selfplay_ad",
    "start_boards_ad",
)


def __getattr__(name: str) -> object:
    if name in _BATCHED:
        from engine import movegen

        value = getattr(movegen, name)
        globals()[name] = value  # later look-ups find it without coming here
        return value
    if name in _ACEY_DEUCEY:
        from engine import acey_deucey

        return getattr(acey_deucey, name)
    raise AttributeError(f"module 'engine' has no attribute {name!r}")


__all__ = [
    "CHECKERS",
    "VARIANTS",
    "GameRecord",
    "GameState",
    "IllegalPlayError",
    "InvalidPlayError",
    "MatchState",
    "Play",
    "PlayAD",
    "Position",
    "SelfPlayResult",
    "Turn",
    "Variant",
    "batch_afterstates",
    "batch_afterstates_ad",
    "batch_afterstates_with_steps",
    "batch_bonus_ad",
    "board_from_position_id",
    "check_dice",
    "classify_boards",
    "game_value",
    "game_value_ad",
    "get_variant",
    "gnubg_id",
    "has_contact",
    "legal_plays",
    "legal_plays_ad",
    "match_id",
    "opening_roll",
    "parse_dice",
    "parse_position",
    "parse_xgid",
    "pips",
    "play_game",
    "play_game_ad",
    "position_id",
    "random_chooser",
    "random_selfplay",
    "random_selfplay_ad",
    "random_turns",
    "roll_dice",
    "start_boards_ad",
    "validate_board",
    "xgid",
]
