"""The text formats backgammon players paste: GNU Backgammon's IDs and eXtreme Gammon's XGID.

- **Position ID** (14 characters): the checkers only, from the view of the side on roll.
- **Match ID** (12 characters): cube, dice, score, match length and whose turn it is.
- **XGID** (``XGID=<26 letters>:<9 numbers>``): checkers and match context in one string.

Boards are int8 (2, 25) arrays in the project's layout (row 1 the side on roll, row 0 the
other side, each from its own view; index 24 the bar). Players are numbered as in GNU
Backgammon's Match ID: 0 and 1. In an XGID, player 1 is the bottom player ('X', upper
case letters) and player 0 the top player ('O', lower case), as GNU Backgammon reads it.
Every parser raises ValueError with a one-line message naming what is wrong.

>>> board, state = parse_position("4HPwATDgc/ABMA:cAkAAAAAAAAE")
>>> board.tolist() == [[0] * 5 + [5, 0, 3] + [0] * 4 + [5] + [0] * 10 + [2, 0]] * 2
True
>>> state.dice_owner, state.cube_value, state.match_length
(1, 1, 0)
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from engine.board import CHECKERS, validate_board
from engine.text import quoted

__all__ = [
    "GameState",
    "MatchState",
    "board_from_position_id",
    "gnubg_id",
    "is_xgid",
    "match_id",
    "parse_position",
    "parse_xgid",
    "position_id",
    "position_ids",
    "xgid",
    "xgid_or_none",
]

_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_PID_LEN = 14
_MID_LEN = 12
_KEY_BITS = 80  # Position key: 50 point separators plus at most 30 checkers.
_MAX_CUBE = 1 << 15  # The Match ID stores log2 of the cube in 4 bits.
_MAX_SCORE = (1 << 15) - 1  # Match length and scores have 15 bits each.


# --- Position ID --------------------------------------------------------------------


def _as_board(board: np.ndarray) -> np.ndarray:
    """A validated int8 copy of an integer (2, 25) board."""
    arr = np.asarray(board)
    if arr.dtype.kind not in "iu":
        raise ValueError(f"a board holds integer checker counts, got dtype {arr.dtype}")
    validate_board(arr)
    return arr.astype(np.int8)


def _check_base64(text: str, length: int, what: str) -> None:
    if not isinstance(text, str):
        raise ValueError(f"a {what} is a string, got {type(text).__name__}")
    if len(text) != length:
        raise ValueError(f"a {what} has {length} characters, got {len(text)}: {quoted(text)}")
    bad = next((c for c in text if c not in _BASE64), None)
    if bad is not None:
        raise ValueError(f"{what} {quoted(text)} has {bad!r}, which is not a base64 character")


def position_id(board: np.ndarray) -> str:
    """GNU Backgammon's Position ID of a board (row 1 the side on roll).

    The key lists, for row 0 then row 1 and for each of the 25 places (points 1..24,
    then the bar), one 1-bit per checker followed by a 0-bit; its 80 bits, packed
    least significant bit first, are written in base64 without padding.

    >>> start = board_from_position_id("4HPwATDgc/ABMA")
    >>> position_id(start)
    '4HPwATDgc/ABMA'
    >>> start[1, 23] = 0  # the side on roll has borne off its two back checkers
    >>> position_id(start)
    '4HPwATDgc/ABAA'
    """
    return position_ids(_as_board(board)[None])[0]


def position_ids(boards: np.ndarray) -> list[str]:
    """Position IDs of a batch of boards (N, 2, 25), which are trusted to be valid.

    The batched twin of `position_id` for generator output: no validation, no Python
    loop over checkers.

    >>> position_ids(np.stack([board_from_position_id("4HPwATDgc/ABMA")] * 2))
    ['4HPwATDgc/ABMA', '4HPwATDgc/ABMA']
    """
    counts = np.asarray(boards, dtype=np.int64).reshape(-1, 50)
    n = counts.shape[0]
    # Checker k of place i sits at bit (checkers before place i) + i + k.
    before = np.cumsum(counts, axis=1) - counts + np.arange(50)
    flat = counts.ravel()
    first = np.repeat((before + np.arange(n)[:, None] * _KEY_BITS).ravel(), flat)
    run_start = np.repeat(np.cumsum(flat) - flat, flat)
    bits = np.zeros(n * _KEY_BITS, np.uint8)
    bits[first + np.arange(first.size) - run_start] = 1
    raw = np.packbits(bits.reshape(n, _KEY_BITS), axis=1, bitorder="little").tobytes()
    return [
        base64.b64encode(raw[i : i + 10]).decode("ascii")[:_PID_LEN] for i in range(0, 10 * n, 10)
    ]


def board_from_position_id(pid: str) -> np.ndarray:
    """Decode a Position ID into an int8 (2, 25) board (row 1 the side on roll).

    >>> board_from_position_id("4HPwATDgc/ABMA")[1].tolist()
    [0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0]
    >>> board_from_position_id("4HPwATDgc/ABM")
    Traceback (most recent call last):
    ...
    ValueError: a Position ID has 14 characters, got 13: '4HPwATDgc/ABM'
    """
    _check_base64(pid, _PID_LEN, "Position ID")
    raw = base64.b64decode(pid + "==")
    if base64.b64encode(raw).decode("ascii")[:_PID_LEN] != pid:
        raise ValueError(f"Position ID {quoted(pid)} sets bits beyond the 80-bit key")
    bits = np.unpackbits(np.frombuffer(raw, np.uint8), bitorder="little")
    zeros = np.flatnonzero(bits == 0)
    if zeros.size < 50:
        raise ValueError(f"Position ID {quoted(pid)} holds more than {2 * CHECKERS} checkers")
    if bits[zeros[49] :].any():
        raise ValueError(f"Position ID {quoted(pid)} sets bits after the last place (row 1's bar)")
    counts = np.diff(zeros[:50], prepend=-1) - 1
    board = counts.reshape(2, 25)
    try:
        return _as_board(board)
    except ValueError as err:
        raise ValueError(f"Position ID {quoted(pid)}: {err}") from None


# --- Match ID -----------------------------------------------------------------------


class GameState(IntEnum):
    """The game-state field of a Match ID."""

    NONE = 0
    PLAYING = 1
    OVER = 2
    RESIGNED = 3
    DROPPED = 4


def _is_cube(value: int) -> bool:
    return 1 <= value <= _MAX_CUBE and value & (value - 1) == 0


def _pair(value: tuple[int, int], what: str) -> tuple[int, int]:
    try:
        a, b = (int(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} is a pair of integers, got {quoted(value)}") from None
    return a, b


@dataclass(frozen=True, slots=True)
class MatchState:
    """Everything about a game but the checkers: cube, dice, score, whose turn.

    Players are 0 and 1 as in GNU Backgammon's Match ID; the board that goes with a
    state has `dice_owner` in row 1. Constructing one validates it; ValueError names
    the first inconsistency. Dice are kept higher first (their order does not matter).

    >>> s = MatchState(cube_value=2, cube_owner=0, dice_owner=1, dice=(2, 5),
    ...                match_length=9, score=(2, 4))
    >>> s.dice, s.turn
    ((5, 2), 1)
    >>> MatchState(match_length=5, score=(5, 0))
    Traceback (most recent call last):
    ...
    ValueError: each score is below the match length 5, got (5, 0)
    """

    #: Value of the doubling cube: 1, 2, 4, ... up to 2**15.
    cube_value: int = 1
    #: Who owns the cube: player 0 or 1, or -1 while it is centred.
    cube_owner: int = -1
    #: The player on roll, or who has rolled (row 1 of the board).
    dice_owner: int = 0
    #: Whether this is the Crawford game of a match (no doubling in it).
    crawford: bool = False
    #: Whether a game is going on, over, resigned or ended by a dropped cube.
    game_state: GameState = GameState.PLAYING
    #: The player who must act now: `dice_owner` unless a double or resignation is
    #: offered, when it is the one who must answer. Defaults to that.
    turn: int | None = None
    #: Whether `dice_owner` has offered a double that `turn` must take or pass.
    doubled: bool = False
    #: A resignation offered by the player not on `turn`: 0 none, 1 single game,
    #: 2 gammon, 3 backgammon.
    resign: int = 0
    #: The dice rolled, higher first; (0, 0) before the roll.
    dice: tuple[int, int] = (0, 0)
    #: Points needed to win the match; 0 for money play.
    match_length: int = 0
    #: Points won so far by player 0 and player 1.
    score: tuple[int, int] = (0, 0)
    #: Jacoby rule (money play: gammons count only once the cube has been turned).
    jacoby: bool = False
    #: Beavers allowed (money play; XGID only, the Match ID has no field for it).
    beavers: bool = False
    #: eXtreme Gammon's cube limit, kept for the XGID; GNU Backgammon ignores it.
    max_cube: int = 1024

    def __post_init__(self) -> None:
        def put(name: str, value: object) -> None:
            object.__setattr__(self, name, value)

        dice = _pair(self.dice, "dice")
        score = _pair(self.score, "score")
        if not _is_cube(self.cube_value):
            raise ValueError(f"the cube value is a power of two up to 2**15, got {self.cube_value}")
        if not _is_cube(self.max_cube):
            raise ValueError(f"the cube limit is a power of two up to 2**15, got {self.max_cube}")
        if self.cube_owner not in (-1, 0, 1):
            raise ValueError(f"the cube owner is 0, 1 or -1 (centred), got {self.cube_owner}")
        # The cube starts centred at 1 and every take turns it and gives it to the taker
        # (RULES.md §1), so a centred cube is 1 and a cube of 1 is centred. GNU
        # Backgammon reads either impossible state without a word.
        if self.cube_value == 1 and self.cube_owner != -1:
            raise ValueError(
                "a cube of 1 has never been turned, so it is centred; got cube 1 owned by "
                f"player {self.cube_owner}"
            )
        if self.cube_value > 1 and self.cube_owner == -1:
            raise ValueError(
                "a turned cube is owned by the side that took it; got a centred cube of "
                f"{self.cube_value}"
            )
        if self.dice_owner not in (0, 1):
            raise ValueError(f"the player on roll is 0 or 1, got {self.dice_owner}")
        if self.game_state not in tuple(GameState):
            raise ValueError(f"the game state is 0..4, got {self.game_state}")
        if self.resign not in (0, 1, 2, 3):
            raise ValueError(f"a resignation is 0 (none), 1, 2 or 3 points, got {self.resign}")
        if dice != (0, 0) and not (min(dice) >= 1 and max(dice) <= 6):
            raise ValueError(f"dice are two numbers 1..6, or (0, 0) before the roll, got {dice}")
        if not 0 <= self.match_length <= _MAX_SCORE:
            raise ValueError(
                f"the match length is 0 (money) to {_MAX_SCORE}, got {self.match_length}"
            )
        if min(score) < 0 or max(score) > _MAX_SCORE:
            raise ValueError(f"scores are 0 to {_MAX_SCORE}, got {score}")
        if self.match_length and max(score) >= self.match_length:
            raise ValueError(
                f"each score is below the match length {self.match_length}, got {score}"
            )
        if self.crawford:
            # As in GNU Backgammon, a 1-point match has no Crawford game.
            if self.match_length < 2 or self.match_length - 1 not in score:
                raise ValueError(
                    "the Crawford game needs a player one point from winning a match of 2 or "
                    f"more points, got score {score} to {self.match_length}"
                )
            if self.cube_value != 1 or self.cube_owner != -1:
                raise ValueError(
                    "the cube is not used in the Crawford game, got cube "
                    f"{self.cube_value} owned by {self.cube_owner}"
                )
        if self.doubled and dice != (0, 0):
            raise ValueError(f"a double is offered before rolling, got dice {dice}")
        if self.doubled and self.crawford:
            raise ValueError("a double is offered in the Crawford game, where the cube is not used")
        if self.doubled and self.cube_owner == 1 - self.dice_owner:
            raise ValueError(
                f"player {self.dice_owner} offers a double but player {self.cube_owner} owns "
                "the cube"
            )
        answering = self.doubled or self.resign > 0
        turn = self.turn
        if turn is None:
            turn = 1 - self.dice_owner if answering else self.dice_owner
        if turn not in (0, 1):
            raise ValueError(f"the player to act is 0 or 1, got {turn}")
        if self.doubled and turn == self.dice_owner:
            raise ValueError(f"player {turn} cannot answer its own double")
        if self.game_state == GameState.PLAYING and not answering and turn != self.dice_owner:
            raise ValueError(
                f"player {turn} cannot act while player {self.dice_owner} is on "
                "roll and nothing is offered"
            )
        put("turn", turn)
        put("dice", (max(dice), min(dice)))
        put("score", score)
        put("game_state", GameState(self.game_state))
        put("crawford", bool(self.crawford))
        put("doubled", bool(self.doubled))
        put("jacoby", bool(self.jacoby))
        put("beavers", bool(self.beavers))

    def player_name(self, player: int) -> str:
        """'X' for `dice_owner` (the side on roll, drawn at the bottom), 'O' for the other."""
        return "X" if player == self.dice_owner else "O"

    def describe(self) -> str:
        """The state in words, players named X (on roll) and O: match and score, cube,
        and what happens next (the roll, a pending double or resignation, or the end).

        >>> MatchState.from_id("QYkqASAAIAAA").describe()
        '9-point match, score X 4, O 2; cube 2 owned by O; X has rolled 5-2'
        """
        name = self.player_name
        x, o = self.score[self.dice_owner], self.score[1 - self.dice_owner]
        if self.match_length:
            game = f"{self.match_length}-point match, score X {x}, O {o}"
            if self.crawford:
                game += " (Crawford game)"
            elif self.match_length - 1 in self.score and self.match_length > 1:
                game += " (post-Crawford)"
        else:
            rules = ["Jacoby rule" if self.jacoby else "no Jacoby rule"]
            if self.beavers:
                rules.append("beavers allowed")
            game = f"money game ({', '.join(rules)})"
            if x or o:  # GNU Backgammon writes a money session's score into its Match IDs
                game += f", session score X {x}, O {o}"
        if self.crawford:
            cube = "no cube in the Crawford game"
        elif self.cube_owner < 0:
            cube = f"cube {self.cube_value} centred"
        else:
            cube = f"cube {self.cube_value} owned by {name(self.cube_owner)}"
        assert self.turn is not None  # filled in by __post_init__
        if self.game_state == GameState.NONE:
            action = "no game started"
        elif self.game_state == GameState.OVER:
            action = "the game is over"
        elif self.game_state == GameState.RESIGNED:
            action = "the game is over: resigned"
        elif self.game_state == GameState.DROPPED:
            action = "the game is over: a double was passed"
        elif self.doubled:
            action = (
                f"{name(self.dice_owner)} doubles to {2 * self.cube_value}; "
                f"{name(self.turn)} to take or pass"
            )
        elif self.resign:
            what = ("a single game", "a gammon", "a backgammon")[self.resign - 1]
            action = (
                f"{name(1 - self.turn)} offers to resign {what} ({self.resign * self.cube_value} "
                f"points); {name(self.turn)} to accept or reject"
            )
        elif self.dice != (0, 0):
            action = f"{name(self.dice_owner)} has rolled {self.dice[0]}-{self.dice[1]}"
        else:
            action = f"{name(self.dice_owner)} to roll"
        return f"{game}; {cube}; {action}"

    @classmethod
    def from_id(cls, mid: str) -> MatchState:
        """Decode a GNU Backgammon Match ID (`beavers` and `max_cube` keep their defaults).

        The example from GNU Backgammon's manual ("A technical description of the Match
        ID"): a 9-point match at 2-4, player 0 owns a 2-cube, player 1 has rolled 52.
        The manual predates the Jacoby bit, whose 0 reads as "Jacoby on".

        >>> s = MatchState.from_id("QYkqASAAIAAA")
        >>> s.cube_value, s.cube_owner, s.dice_owner, s.dice, s.match_length, s.score
        (2, 0, 1, (5, 2), 9, (2, 4))
        >>> MatchState.from_id("QYkqASAAIAAA!")
        Traceback (most recent call last):
        ...
        ValueError: a Match ID has 12 characters, got 13: 'QYkqASAAIAAA!'
        """
        _check_base64(mid, _MID_LEN, "Match ID")
        key = int.from_bytes(base64.b64decode(mid), "little")

        def field(start: int, width: int) -> int:
            return (key >> start) & ((1 << width) - 1)

        if key >> 67:
            raise ValueError(f"Match ID {quoted(mid)} sets bits beyond the 67-bit key")
        owner = field(4, 2)
        if owner == 2:
            raise ValueError(f"Match ID {quoted(mid)} has cube owner field 2 (0, 1 or 3 expected)")
        if field(8, 3) > max(GameState):
            raise ValueError(f"Match ID {quoted(mid)} has game state {field(8, 3)} (0..4 expected)")
        try:
            return cls(
                cube_value=1 << field(0, 4),
                cube_owner=-1 if owner == 3 else owner,
                dice_owner=field(6, 1),
                crawford=bool(field(7, 1)),
                game_state=GameState(field(8, 3)),
                turn=field(11, 1),
                doubled=bool(field(12, 1)),
                resign=field(13, 2),
                dice=(field(15, 3), field(18, 3)),
                match_length=field(21, 15),
                score=(field(36, 15), field(51, 15)),
                jacoby=not field(66, 1),
            )
        except ValueError as err:
            raise ValueError(f"Match ID {quoted(mid)}: {err}") from None


def match_id(state: MatchState) -> str:
    """GNU Backgammon's Match ID of a state (it has no field for beavers or the cube limit).

    >>> match_id(MatchState(cube_value=2, cube_owner=0, dice_owner=1, dice=(5, 2),
    ...                     match_length=9, score=(2, 4), jacoby=True))
    'QYkqASAAIAAA'
    >>> match_id(MatchState.from_id("cAkAAAAAAAAE"))
    'cAkAAAAAAAAE'
    """
    s = state
    assert s.turn is not None  # filled in by MatchState.__post_init__
    fields = (
        (0, s.cube_value.bit_length() - 1),
        (4, s.cube_owner & 3),
        (6, s.dice_owner),
        (7, int(s.crawford)),
        (8, int(s.game_state)),
        (11, s.turn),
        (12, int(s.doubled)),
        (13, s.resign),
        (15, s.dice[0]),
        (18, s.dice[1]),
        (21, s.match_length),
        (36, s.score[0]),
        (51, s.score[1]),
        (66, int(not s.jacoby)),
    )
    key = sum(value << start for start, value in fields)
    return base64.b64encode(key.to_bytes(9, "little")).decode("ascii")


def gnubg_id(board: np.ndarray, state: MatchState) -> str:
    """GNU Backgammon's combined ID, ``PositionID:MatchID`` (board row 1 = `dice_owner`).

    >>> gnubg_id(board_from_position_id("4HPwATDgc/ABMA"), MatchState(dice_owner=1))
    '4HPwATDgc/ABMA:cAkAAAAAAAAE'
    """
    return f"{position_id(board)}:{match_id(state)}"


# --- XGID ---------------------------------------------------------------------------

_XGID_PREFIX = "XGID="
_INT = re.compile(r"-?[0-9]+")


def xgid(board: np.ndarray, state: MatchState) -> str:
    """eXtreme Gammon's XGID of a board (row 1 = `state.dice_owner`) and its state.

    Player 1 is XG's bottom player (upper case letters, turn 1), player 0 the top one.
    The position string is from the bottom player's view: character 0 is the top
    player's bar, 1..24 the bottom player's points 1..24, 25 the bottom player's bar.
    In a match the rules field is the Crawford flag, in money play Jacoby + 2 * beavers;
    Jacoby and beavers are dropped in match play, where they do not apply. An XGID has
    no room for a resignation or a game not in play; those raise ValueError.

    >>> start = board_from_position_id("4HPwATDgc/ABMA")
    >>> xgid(start, MatchState(dice_owner=1))
    'XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10'
    """
    arr = _as_board(board)
    if state.resign:
        raise ValueError("an XGID cannot record an offered resignation")
    if state.game_state != GameState.PLAYING:
        raise ValueError(f"an XGID records a game in play, got state {state.game_state.name}")
    bottom, top = (arr[1], arr[0]) if state.dice_owner == 1 else (arr[0], arr[1])
    chars = [_letter(int(top[24]), upper=False)]
    for point in range(1, 25):
        mine, theirs = int(bottom[point - 1]), int(top[24 - point])
        chars.append(_letter(mine, upper=True) if mine else _letter(theirs, upper=False))
    chars.append(_letter(int(bottom[24]), upper=True))
    owner = {1: 1, 0: -1, -1: 0}[state.cube_owner]
    dice = "D" if state.doubled else f"{state.dice[0]}{state.dice[1]}"
    if state.match_length:
        rules = int(state.crawford)
    else:
        rules = int(state.jacoby) + 2 * int(state.beavers)
    fields = (
        "".join(chars),
        state.cube_value.bit_length() - 1,
        owner,
        1 if state.dice_owner == 1 else -1,
        dice,
        state.score[1],
        state.score[0],
        rules,
        state.match_length,
        state.max_cube.bit_length() - 1,
    )
    return _XGID_PREFIX + ":".join(str(f) for f in fields)


def xgid_or_none(board: np.ndarray, state: MatchState | None) -> str | None:
    """The XGID of a board and its state, or None where an XGID cannot hold the state (a
    resignation, a game not in play): what a board drawing prints beside the Position ID
    and Match ID. With no state: money play by GNU Backgammon's defaults (the Jacoby rule,
    beavers), the cube centred, row 1 to roll.

    >>> xgid_or_none(board_from_position_id("4HPwATDgc/ABMA"), None)
    'XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:3:0:10'
    """
    if state is None:
        state = MatchState(dice_owner=1, jacoby=True, beavers=True)
    try:
        return xgid(board, state)
    except ValueError:
        return None


def _letter(count: int, *, upper: bool) -> str:
    if not count:
        return "-"
    return chr((ord("A") if upper else ord("a")) + count - 1)


def parse_xgid(text: str) -> tuple[np.ndarray, MatchState]:
    """Read an XGID (the ``XGID=`` prefix is optional) into a board and its state.

    The board has the player on roll (the XGID's turn field) in row 1, as GNU
    Backgammon reads it; with a double offered (dice field ``D``) that is the doubler.

    >>> board, state = parse_xgid("XGID=-b----E-C---eE---c-e----B-:1:-1:-1:63:2:3:0:7:10")
    >>> state.dice_owner, state.dice, state.cube_value, state.cube_owner, state.score
    (0, (6, 3), 2, 0, (3, 2))
    >>> parse_xgid("-b----E-C---eE---c-e----B-:0:0:1:00:0:0")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: XGID '-b----E-...:0:0': an XGID has 10 fields separated by ':', got 7
    """
    body = text.strip()
    if body[: len(_XGID_PREFIX)].upper() == _XGID_PREFIX:
        body = body[len(_XGID_PREFIX) :]
    fields = body.split(":")
    if len(fields) != 10:
        end = " (it ends with ':')" if len(fields) > 10 and not fields[-1] else ""
        raise ValueError(
            f"XGID {quoted(text.strip(), limit=60)}: an XGID has 10 fields separated by ':', "
            f"got {len(fields)}{end}"
        )
    try:
        return _parse_xgid_fields(fields)
    except ValueError as err:
        raise ValueError(f"XGID {quoted(text.strip(), limit=60)}: {err}") from None


def _xgid_int(value: str, name: str, low: int, high: int) -> int:
    if not _INT.fullmatch(value) or not low <= int(value) <= high:
        raise ValueError(f"the {name} field is a whole number {low}..{high}, got {quoted(value)}")
    return int(value)


def _parse_xgid_fields(fields: list[str]) -> tuple[np.ndarray, MatchState]:
    pos, cube, owner, turn, dice, score_x, score_o, rules, length, max_cube = fields
    if len(pos) != 26:
        raise ValueError(f"the position field has 26 characters, got {len(pos)}")
    bottom = np.zeros(25, np.int8)
    top = np.zeros(25, np.int8)
    for i, c in enumerate(pos):
        if c == "-":
            continue
        if "A" <= c <= "O" and i > 0:
            bottom[24 if i == 25 else i - 1] = ord(c) - ord("A") + 1
        elif "a" <= c <= "o" and i < 25:
            top[24 if i == 0 else 24 - i] = ord(c) - ord("a") + 1
        else:
            raise ValueError(
                f"position character {i} is {c!r}; expected '-', 'A'..'O' "
                "(bottom player; not on the top bar) or 'a'..'o' (top player; "
                "not on the bottom bar)"
            )
    if turn not in ("1", "-1"):
        raise ValueError(f"the turn field is 1 (bottom player) or -1 (top), got {quoted(turn)}")
    on_roll = 1 if turn == "1" else 0
    board = np.stack([top, bottom] if on_roll else [bottom, top])
    board = _as_board(board)

    doubled = dice == "D"
    if dice in ("B", "R"):
        raise ValueError(
            f"dice field {quoted(dice)} (a pending beaver or raccoon) is not supported"
        )
    if not doubled and not re.fullmatch(r"[0-6]{2}", dice):
        raise ValueError(f"the dice field is two digits 0..6 or 'D', got {quoted(dice)}")
    match_length = _xgid_int(length, "match length", 0, _MAX_SCORE)
    rule_bits = _xgid_int(rules, "Crawford/Jacoby", 0, 1 if match_length else 3)
    state = MatchState(
        cube_value=1 << _xgid_int(cube, "cube", 0, 15),
        cube_owner={1: 1, -1: 0, 0: -1}[_xgid_int(owner, "cube position", -1, 1)],
        dice_owner=on_roll,
        crawford=bool(match_length and rule_bits),
        doubled=doubled,
        dice=(0, 0) if doubled else (int(dice[0]), int(dice[1])),
        match_length=match_length,
        score=(
            _xgid_int(score_o, "top score", 0, _MAX_SCORE),
            _xgid_int(score_x, "bottom score", 0, _MAX_SCORE),
        ),
        jacoby=not match_length and bool(rule_bits & 1),
        beavers=not match_length and bool(rule_bits & 2),
        max_cube=1 << _xgid_int(max_cube, "cube limit", 0, 15),
    )
    if state.cube_value > state.max_cube:
        raise ValueError(
            f"the cube {state.cube_value} is above the XGID's own cube limit {state.max_cube}"
        )
    return board, state


# --- One entry for the command line -------------------------------------------------


def is_xgid(text: str) -> bool:
    """Whether `parse_position` reads `text` as an XGID: its prefix, or more than the one
    ':' of ``PositionID:MatchID`` after something other than a Position ID (so that a
    mistyped XGID, with nine or eleven fields, is told what is wrong with it as an XGID).

    >>> is_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"), is_xgid("4HPwATDgc/ABMA")
    (True, False)
    >>> is_xgid("-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0")
    True
    """
    s = text.strip()
    if s[: len(_XGID_PREFIX)].upper() == _XGID_PREFIX:
        return True
    return s.count(":") > 1 and len(s.partition(":")[0].strip()) != _PID_LEN


def parse_position(text: str) -> tuple[np.ndarray, MatchState | None]:
    """Read a Position ID, ``PositionID:MatchID``, or an XGID into a board and a state.

    The state is None for a bare Position ID. Surrounding whitespace is ignored.

    >>> board, state = parse_position("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10")
    >>> position_id(board), match_id(state)
    ('4HPwATDgc/ABMA', 'cAkAAAAAAAAE')
    >>> parse_position("4HPwATDgc/ABMA")[1] is None
    True
    >>> parse_position("start")
    Traceback (most recent call last):
    ...
    ValueError: 'start' is not a Position ID (14 characters), PositionID:MatchID, or XGID
    """
    if not isinstance(text, str):
        raise ValueError(
            "a position is text (a Position ID, PositionID:MatchID, or XGID), "
            f"got {type(text).__name__}"
        )
    s = text.strip()
    if is_xgid(s):
        return parse_xgid(s)
    if s.count(":") == 1:
        pid, mid = s.split(":")
        return board_from_position_id(pid.strip()), MatchState.from_id(mid.strip())
    if len(s) == _PID_LEN:
        return board_from_position_id(s), None
    raise ValueError(
        f"{quoted(text)} is not a Position ID ({_PID_LEN} characters), PositionID:MatchID, or XGID"
    )
