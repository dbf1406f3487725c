"""Acey-deucey: checkers entering from off the board, and the 1-2 roll's bonus.

The rules are RULES.md §2 on top of §1, with these decisions where the rule book is open:

- All 15 checkers start *waiting* off the board. A waiting checker enters like a checker
  from the bar (die d on the mover's point 25 - d). Waiting checkers do not hold up other
  moves: a side may move entered checkers while others still wait.
- A *hit* checker goes to the bar as usual and must re-enter before anything else moves,
  waiting checkers included.
- Bearing off needs all 15 checkers in the home board, so none waiting or on the bar.
- The 1-2 roll: the 1 and the 2 are played under the usual rule (both if possible, else
  the larger). Only if both were played does the bonus follow: the player chooses any
  double, 1-1 to 6-6, and plays it as many times as possible, up to four. Only a double
  played all four times earns another roll. If the 1 and the 2 cannot both be played, the
  bonus is forfeited (no double, no extra roll); a chosen double that can be played fewer
  than four times (even none) is played as far as it goes and then there is no extra roll.
  The choice is free, so a double that goes less far is a legal choice too. A turn that
  bears off the last checker earns no extra roll: the game is over. The same position
  reached with and without the extra roll is two outcomes, the player picks either.
- The opening follows §1: the side with the higher die plays both dice, so an opening
  2 against 1 is an acey-deucey.
- Value at the end: a loser with checkers still waiting has borne off none (a gammon at
  least), and waiting checkers count like bar checkers for a backgammon.

Layouts. The batched functions use int8 (B, 2, 26): GNU Backgammon's 25 columns (index
0..23 points 1..24, index 24 the bar) plus column 25, that side's waiting checkers; row 1 is
the side on roll; borne off = 15 - row sum. A `Position` holds the same as a (2, 25) board
plus `waiting`. In plays and notation points are the mover's: 25 the bar, 26 the waiting
checkers (written `start`), 0 off: `start/20 start/19`, `bar/22 13/10`. A 1-2 turn's text
puts the chosen double between the parts: `start/24 start/23, 6-6: start/19(4)`.

Cost. A 1-2 as whole turns (every 1-2 play times every double) reaches about a thousand
positions early in a game and tens of thousands in open middle games; `bonus=False` and
`batch_bonus_ad` let a player choose the 1-2 play first and the double second instead.

>>> import numpy as np
>>> after, parent, extra = batch_afterstates_ad(start_boards_ad(1), np.array([[6, 5]]))
>>> len(after), bool(extra.any())
(2, False)
>>> sorted(str(p) for p in legal_plays_ad(Position.start("acey-deucey"), (6, 5)))
['start/14', 'start/20 start/19']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

import numpy as np

from engine.game import SelfPlayResult, opening_roll, roll_dice
from engine.jit import kernel
from engine.movegen import _grow, _hash
from engine.play import check_dice, format_steps
from engine.position import CHECKERS, Position

START = 26
"""The point number of the waiting checkers in plays (the bar is 25, off is 0)."""

WAITING = 25
"""The column of the waiting checkers in a (2, 26) board."""

_ILLEGAL = -99
_SMALL_TABLE = 1 << 15
_BIG_TABLE = 1 << 14

_rng = np.random.default_rng(0xACE2)
_ZOBRIST = _rng.integers(
    0, np.iinfo(np.uint64).max, size=(2, 26, 16), dtype=np.uint64, endpoint=True
)
_EXTRA_KEY = _rng.integers(0, np.iinfo(np.uint64).max, dtype=np.uint64, endpoint=True)
# Sources in the order a double visits them: the bar, the waiting checkers, points 24..1.
_ORDER = np.array([24, 25, *range(23, -1, -1)], np.int64)


@kernel(nogil=True, inline="always")
def _same(a: np.ndarray, b: np.ndarray) -> bool:
    for side in range(2):
        for i in range(26):
            if a[side, i] != b[side, i]:
                return False
    return True


@kernel(nogil=True, inline="always")
def _target(cur: np.ndarray, s: int, die: int, outside: int) -> int:
    """Where a checker from column `s` lands with `die` (-1 for off), or `_ILLEGAL`."""
    if cur[1, s] == 0:
        return _ILLEGAL
    t = 24 - die if s >= 24 else s - die
    if t >= 0:
        return t if cur[0, 23 - t] < 2 else _ILLEGAL
    if outside > 0:
        return _ILLEGAL
    if t < -1:
        for j in range(s + 1, 6):
            if cur[1, j] > 0:
                return _ILLEGAL
    return -1


@kernel(nogil=True)
def _expand(
    board: np.ndarray,
    d1: int,
    d2: int,
    zob: np.ndarray,
    order: np.ndarray,
    table: tuple[np.ndarray, np.ndarray, np.ndarray],
    gen: np.ndarray,
    buf: np.ndarray,
    used: np.ndarray,
    stp: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """Distinct positions one roll reaches under the max-dice rules, into `buf`.

    `table` is (stamp, row, key) of a hash table cleared by bumping `gen[0]`. Returns the
    (possibly grown) buffers, the row count and how many dice were played.
    """
    stamp, slot_row, slot_key = table
    mask = stamp.shape[0] - 1
    double = d1 == d2
    n_dice = 4 if double else 2
    stack = np.empty((5, 2, 26), np.int8)
    keys = np.empty(5, np.uint64)
    outside = np.empty(5, np.int64)
    next_rank = np.empty(5, np.int64)
    moved = np.empty(5, np.bool_)
    path = np.zeros((4, 3), np.int8)
    seq = np.empty(4, np.int64)
    n = 0
    best = 0
    gen[0] += 1
    stack[0] = board
    keys[0] = _hash(board, zob)
    out_count = 0
    for i in range(6, 26):
        out_count += board[1, i]
    outside[0] = out_count
    for o in range(1 if double else 2):
        for k in range(n_dice):
            seq[k] = d1 if double or (k == 0) == (o == 0) else d2
        next_rank[0] = 0
        moved[0] = False
        level = 0
        while level >= 0:
            leaf = level == n_dice
            if not leaf:
                die = seq[level]
                cur = stack[level]
                last = 0 if cur[1, 24] > 0 else 25
                r = next_rank[level]
                found = -1
                target = 0
                while r <= last:
                    t = _target(cur, order[r], die, outside[level])
                    if t != _ILLEGAL:
                        found = order[r]
                        target = t
                        break
                    r += 1
                if found < 0:
                    if moved[level]:
                        level -= 1
                        continue
                    leaf = True
                else:
                    moved[level] = True
                    next_rank[level] = r + 1
                    nxt = stack[level + 1]
                    nxt[:] = cur
                    key = keys[level]
                    c = nxt[1, found]
                    key ^= zob[1, found, c] ^ zob[1, found, c - 1]
                    nxt[1, found] = c - 1
                    hit = False
                    if target >= 0:
                        c = nxt[1, target]
                        key ^= zob[1, target, c] ^ zob[1, target, c + 1]
                        nxt[1, target] = c + 1
                        oi = 23 - target
                        if nxt[0, oi] == 1:
                            hit = True
                            key ^= zob[0, oi, 1] ^ zob[0, oi, 0]
                            nxt[0, oi] = 0
                            c = nxt[0, 24]
                            key ^= zob[0, 24, c] ^ zob[0, 24, c + 1]
                            nxt[0, 24] = c + 1
                    keys[level + 1] = key
                    outside[level + 1] = outside[level] - (1 if found >= 6 and target < 6 else 0)
                    path[level, 0] = found + 1
                    path[level, 1] = target + 1
                    path[level, 2] = 1 if hit else 0
                    next_rank[level + 1] = r if double else 0
                    moved[level + 1] = False
                    level += 1
                    continue
            if level > best:
                best = level
                n = 0
                gen[0] += 1
            if level == best and level > 0:
                pos = stack[level]
                key = keys[level]
                slot = np.int64(key & np.uint64(mask))
                fresh = True
                while stamp[slot] == gen[0]:
                    if slot_key[slot] == key and _same(buf[slot_row[slot]], pos):
                        fresh = False
                        break
                    slot = (slot + 1) & mask
                if fresh:
                    if n > mask // 2:
                        raise ValueError("too many distinct plays for one roll")
                    if n == buf.shape[0]:
                        buf = _grow(buf)
                        used = _grow(used)
                        stp = _grow(stp)
                    stamp[slot] = gen[0]
                    slot_key[slot] = key
                    slot_row[slot] = n
                    buf[n] = pos
                    used[n] = seq[0]
                    stp[n] = 0
                    for k in range(level):
                        stp[n, k] = path[k]
                    n += 1
            level -= 1
    if best == 1 and not double:
        big = max(d1, d2)
        keep = 0
        for r in range(n):
            if used[r] == big:
                buf[keep] = buf[r]
                stp[keep] = stp[r]
                keep += 1
        if keep > 0:
            n = keep
    return buf, used, stp, n, best


@kernel(nogil=True)
def _generate(
    boards: np.ndarray,
    dice: np.ndarray,
    zob: np.ndarray,
    extra_key: np.uint64,
    order: np.ndarray,
    record: bool,
    mode: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Mode 0: whole turns; 1: a 1-2 stops after its first part (flag: bonus due);
    2: each board plays only the bonus double of its choice (dice ignored)."""
    n_boards = boards.shape[0]
    cap = max(64, n_boards * 32)
    out = np.empty((cap, 2, 26), np.int8)
    parent = np.empty(cap, np.int64)
    extra = np.empty(cap, np.bool_)
    steps = np.zeros((cap if record else 1, 6, 3), np.int8)
    doubles = np.zeros(cap if record else 1, np.int8)

    small = (
        np.full(_SMALL_TABLE, -1, np.int64),
        np.empty(_SMALL_TABLE, np.int64),
        np.empty(_SMALL_TABLE, np.uint64),
    )
    gen = np.zeros(1, np.int64)
    stamp = np.full(_BIG_TABLE, -1, np.int64)
    slot_row = np.empty(_BIG_TABLE, np.int64)
    slot_key = np.empty(_BIG_TABLE, np.uint64)
    row_key = np.empty(cap, np.uint64)
    a_buf = np.empty((64, 2, 26), np.int8)
    a_used = np.empty(64, np.int8)
    a_stp = np.empty((64, 4, 3), np.int8)
    b_buf = np.empty((256, 2, 26), np.int8)
    b_used = np.empty(256, np.int8)
    b_stp = np.empty((256, 4, 3), np.int8)
    no_steps = np.zeros((4, 3), np.int8)

    n = 0
    for b in range(n_boards):
        d1 = dice[b, 0]
        d2 = dice[b, 1]
        start = n
        if mode == 2:
            a_buf[0] = boards[b]
            a_stp[0] = 0
            na = 1
            depth = 2
        else:
            a_buf, a_used, a_stp, na, depth = _expand(
                boards[b], d1, d2, zob, order, small, gen, a_buf, a_used, a_stp
            )
        bonus = mode == 2 or (min(d1, d2) == 1 and max(d1, d2) == 2 and depth == 2)
        doubles_now = bonus and mode != 1
        for i in range(na):
            for k in range(1, 7 if doubles_now else 2):
                if doubles_now:
                    b_buf, b_used, b_stp, nb, dd = _expand(
                        a_buf[i], k, k, zob, order, small, gen, b_buf, b_used, b_stp
                    )
                else:
                    nb = 0
                    dd = 0
                for j in range(max(nb, 1)):
                    pos = b_buf[j] if dd > 0 else a_buf[i]
                    more = dd == 4 or (bonus and mode == 1)
                    if more:
                        left = 0
                        for c in range(26):
                            left += pos[1, c]
                        more = left > 0
                    key = _hash(pos, zob)
                    if more:
                        key ^= extra_key
                    mask = stamp.shape[0] - 1
                    slot = np.int64(key & np.uint64(mask))
                    fresh = True
                    while stamp[slot] == b:
                        row = slot_row[slot]
                        if slot_key[slot] == key and extra[row] == more and _same(out[row], pos):
                            fresh = False
                            break
                        slot = (slot + 1) & mask
                    if not fresh:
                        continue
                    if n - start > mask // 2:
                        # Double the table and insert this board's rows again.
                        mask = 2 * mask + 1
                        stamp = np.full(mask + 1, -1, np.int64)
                        slot_row = np.empty(mask + 1, np.int64)
                        slot_key = np.empty(mask + 1, np.uint64)
                        for row in range(start, n):
                            s = np.int64(row_key[row] & np.uint64(mask))
                            while stamp[s] == b:
                                s = (s + 1) & mask
                            stamp[s] = b
                            slot_key[s] = row_key[row]
                            slot_row[s] = row
                        slot = np.int64(key & np.uint64(mask))
                        while stamp[slot] == b:
                            slot = (slot + 1) & mask
                    if n == out.shape[0]:
                        out = _grow(out)
                        parent = _grow(parent)
                        extra = _grow(extra)
                        row_key = _grow(row_key)
                        if record:
                            steps = _grow(steps)
                            doubles = _grow(doubles)
                    stamp[slot] = b
                    slot_key[slot] = key
                    slot_row[slot] = n
                    row_key[n] = key
                    out[n] = pos
                    parent[n] = b
                    extra[n] = more
                    if record:
                        if doubles_now:
                            steps[n, :2] = a_stp[i, :2]
                            steps[n, 2:] = b_stp[j] if dd > 0 else no_steps
                            doubles[n] = k
                        else:
                            steps[n, :4] = a_stp[i]
                            steps[n, 4:] = 0
                            doubles[n] = 0
                    n += 1
    return out[:n], parent[:n], extra[:n], steps[:n], doubles[:n]


def _check(boards: np.ndarray, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    dice = np.ascontiguousarray(dice, dtype=np.int64)
    if boards.ndim != 3 or boards.shape[1:] != (2, 26):
        raise ValueError(f"acey-deucey boards must have shape (B, 2, 26), got {boards.shape}")
    if dice.shape != (boards.shape[0], 2):
        raise ValueError(f"dice must have shape ({boards.shape[0]}, 2), got {dice.shape}")
    if dice.size and (dice.min() < 1 or dice.max() > 6):
        raise ValueError("dice must be in 1..6")
    return boards, dice


def batch_afterstates_ad(
    boards: np.ndarray, dice: np.ndarray, *, bonus: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every distinct legal outcome of each acey-deucey board's roll.

    `boards` is int8 (B, 2, 26) (row 1 on roll, column 25 the waiting checkers) and `dice`
    int (B, 2). Returns `(afterstates, parent, flag)`: int8 (M, 2, 26) with the mover still
    in row 1, int64 (M,) the board each came from (grouped in ascending order), and bool
    (M,). Rows are distinct by (position, flag); a board with no legal play contributes no
    rows (the turn passes).

    With `bonus=True` a 1-2 roll's rows are whole turns, the 1 and 2 and then every double
    the player may choose, and `flag` is the extra turn: the mover rolls again (the chosen
    double went all four times and the game is not over). A 1-2 can reach thousands of
    positions this way (tens of thousands in open middle games).

    With `bonus=False` a 1-2 roll stops after the 1 and the 2, and `flag` marks the rows
    where both were played, so the bonus double is still due: pass those rows to
    `batch_bonus_ad` to choose it. This lets a player choose in two stages, at a fraction
    of the cost.

    >>> import numpy as np
    >>> after, parent, extra = batch_afterstates_ad(start_boards_ad(1), np.array([[1, 2]]))
    >>> bool(extra.all()), int(after[:, 1, WAITING].min())
    (True, 9)
    >>> after, parent, due = batch_afterstates_ad(start_boards_ad(1), np.array([[1, 2]]),
    ...                                           bonus=False)
    >>> len(after), bool(due.all())
    (2, True)
    """
    boards, dice = _check(boards, dice)
    out, parent, flag, _, _ = _generate(
        boards, dice, _ZOBRIST, _EXTRA_KEY, _ORDER, False, 0 if bonus else 1
    )
    return out, parent, flag


def batch_bonus_ad(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The acey-deucey bonus: each board (the 1 and 2 already played) plays a double of its
    choice as far as it goes.

    Returns `(afterstates, parent, extra_turn)` as `batch_afterstates_ad` does: the union
    over the six doubles, distinct by (position, extra_turn); a double that cannot be
    played at all leaves the board as it is, without an extra turn.
    """
    boards, dice = _check(boards, np.ones((len(boards), 2), np.int64))
    out, parent, extra, _, _ = _generate(boards, dice, _ZOBRIST, _EXTRA_KEY, _ORDER, False, 2)
    return out, parent, extra


def start_boards_ad(n: int) -> np.ndarray:
    """`n` acey-deucey starting boards, int8 (n, 2, 26): all 15 checkers of each side waiting."""
    boards = np.zeros((n, 2, 26), np.int8)
    boards[:, :, WAITING] = CHECKERS
    return boards


def to_board_ad(position: Position) -> np.ndarray:
    """A position as an int8 (2, 26) board, its waiting checkers in column 25."""
    board = np.zeros((2, 26), np.int8)
    board[:, :25] = position.board
    board[:, WAITING] = position.waiting
    return board


def position_from_board_ad(board: np.ndarray) -> Position:
    """The `Position` of an int8 (2, 26) board."""
    board = np.asarray(board)
    if board.shape != (2, 26):
        raise ValueError(f"an acey-deucey board has shape (2, 26), got {board.shape}")
    return Position(board[:, :25], (int(board[0, WAITING]), int(board[1, WAITING])))


def game_value_ad(afterstates: np.ndarray) -> np.ndarray:
    """What the mover (row 1) has won: 0 not over, 1 single, 2 gammon, 3 backgammon.

    A loser with checkers still waiting has borne off none, and its waiting checkers count
    like bar checkers towards a backgammon.

    >>> b = np.zeros((1, 2, 26), np.int8); b[0, 0, WAITING] = 15
    >>> game_value_ad(b).tolist()
    [3]
    """
    a = np.asarray(afterstates)
    won = a[..., 1, :].sum(axis=-1) == 0
    gammon = a[..., 0, :].sum(axis=-1) == CHECKERS
    # The winner's home board is the loser's points 19..24, then its bar and waiting.
    backgammon = gammon & (a[..., 0, 18:].sum(axis=-1) > 0)
    value = np.where(won, 1 + gammon.astype(np.int8) + backgammon.astype(np.int8), 0)
    return value.astype(np.int8)


def _format(steps: tuple[tuple[int, int], ...], hits: tuple[bool, ...]) -> str:
    """GNU Backgammon's notation, with the waiting checkers as `start`, after the bar."""
    # Swap the bar and start for the formatter, which writes higher sources first.
    swapped = tuple(({START: 25, 25: START}.get(a, a), b) for a, b in steps)
    text = format_steps(swapped, hits)
    return " ".join(
        "start" + t[3:] if t.startswith("bar/") else "bar" + t[2:] if t.startswith("26/") else t
        for t in text.split()
    )


@dataclass(frozen=True)
class PlayAD:
    """One acey-deucey turn: steps `(from, to)` in the order played (26 the waiting
    checkers, 25 the bar, 0 off), which of them hit, the resulting position (the mover still
    on roll), the double chosen after a 1-2 (None otherwise or when the 1-2 was not played in
    full), and whether the mover rolls again.

    `double_steps` is how many of the steps (the last ones) belong to the double.
    """

    steps: tuple[tuple[int, int], ...]
    hits: tuple[bool, ...]
    position: Position
    double: int | None = None
    double_steps: int = 0
    extra_turn: bool = False

    def __str__(self) -> str:
        cut = len(self.steps) - self.double_steps
        first = _format(self.steps[:cut], self.hits[:cut])
        if self.double is None:
            return first
        rest = _format(self.steps[cut:], self.hits[cut:]) or "no move"
        double = f"{self.double}-{self.double}: {rest}"
        return f"{first}, {double}" if first else double  # a bonus alone has no first part


def legal_plays_ad(
    position: Position, dice: tuple[int, int] | list[int], *, bonus: bool = True
) -> list[PlayAD]:
    """Every distinct legal acey-deucey turn (distinct by resulting position and extra roll).

    With `bonus=False` a 1-2 stops after the 1 and the 2, and `extra_turn` then marks the
    plays after which the bonus double is due (`bonus_plays_ad` lists its plays): the turn
    in the two steps a person types it in.

    >>> plays = legal_plays_ad(Position.start("acey-deucey"), (2, 1))
    >>> any(str(p) == "start/24 start/23, 6-6: start/19(4)" and p.extra_turn for p in plays)
    True
    >>> sorted(str(p) for p in legal_plays_ad(Position.start("acey-deucey"), (2, 1), bonus=False))
    ['start/22', 'start/24 start/23']
    """
    return _plays(position, check_dice(dice), 0 if bonus else 1)


def bonus_plays_ad(position: Position) -> list[PlayAD]:
    """The bonus of a 1-2 whose 1 and 2 are played (`position`, the mover on roll): for each
    double the player may choose, every distinct play of it as far as it goes (`double`
    set, the steps all the double's; none when it cannot move at all), `extra_turn` when
    it went all four times.

    >>> plays = bonus_plays_ad(Position.start("acey-deucey"))
    >>> [str(p) for p in plays if p.double == 6][:2]
    ['6-6: start/19(4)', '6-6: start/13 start/19(2)']
    """
    return _plays(position, (1, 1), 2)


def reaching_play_ad(
    position: Position, dice: tuple[int, int] | list[int], board: np.ndarray, extra: bool
) -> PlayAD | None:
    """The legal whole turn of `position` for `dice` that ends on `board` (2, 26), rolling
    again or not as `extra` says; None if there is none. Cheaper than searching
    `legal_plays_ad`, which builds every play of a 1-2 (thousands)."""
    rows = _generate_rows(position, check_dice(dice), 0)
    after, flags = rows[0], rows[1]
    hit = np.flatnonzero((after == np.asarray(board)).all(axis=(1, 2)) & (flags == extra))
    return _play_of(rows, int(hit[0])) if len(hit) else None


# `_generate`'s rows for one position: afterstates, extra-roll flags, steps, doubles.
_Rows: TypeAlias = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _generate_rows(position: Position, dice: tuple[int, int], mode: int) -> _Rows:
    """`_generate`'s rows with their steps for one position."""
    board, dice_arr = _check(to_board_ad(position)[None], np.array([dice], np.int64))
    after, _, extra, steps, doubles = _generate(
        board, dice_arr, _ZOBRIST, _EXTRA_KEY, _ORDER, True, mode
    )
    return after, extra, steps, doubles


def _play_of(rows: _Rows, i: int) -> PlayAD:
    """The `PlayAD` of row `i` of `_generate_rows`."""
    after, extra, steps, doubles = rows
    path, k = steps[i], int(doubles[i])
    used = [(int(a), int(t), bool(h)) for a, t, h in path if a > 0]
    return PlayAD(
        steps=tuple((a, t) for a, t, _ in used),
        hits=tuple(h for _, _, h in used),
        position=position_from_board_ad(after[i]),
        double=k or None,
        double_steps=int((path[2:, 0] > 0).sum()) if k else 0,
        extra_turn=bool(extra[i]),
    )


def _plays(position: Position, dice: tuple[int, int], mode: int) -> list[PlayAD]:
    """The `PlayAD`s of `_generate` in `mode` for one position."""
    rows = _generate_rows(position, dice, mode)
    return [_play_of(rows, i) for i in range(len(rows[0]))]


#: Chooses one of the legal plays (never empty) for the position and roll.
ChooserAD = Callable[[Position, tuple[int, int], Sequence[PlayAD]], PlayAD]


@dataclass(frozen=True)
class TurnAD:
    """One roll: who rolled (0 or 1), the dice, and the play (None when none was legal).

    After a play with `extra_turn` the same player rolls again.
    """

    player: int
    dice: tuple[int, int]
    play: PlayAD | None


@dataclass
class GameRecordAD:
    """A finished acey-deucey game: its rolls and result, enough to replay it."""

    seed: int | None
    turns: list[TurnAD] = field(default_factory=list)
    winner: int = -1
    value: int = 0
    variant: str = "acey-deucey"

    def positions(self) -> list[Position]:
        """The position before each roll (from the roller's view), then the final one."""
        pos = Position.start(self.variant)
        out = [pos]
        for turn in self.turns:
            after = pos if turn.play is None else turn.play.position
            pos = after if turn.play is not None and turn.play.extra_turn else after.flip()
            out.append(pos)
        return out


def play_game_ad(
    choosers: tuple[ChooserAD, ChooserAD],
    rng: np.random.Generator,
    seed: int | None = None,
    max_turns: int = 10_000,
) -> GameRecordAD:
    """Play one acey-deucey game between two choosers with dice from `rng`.

    `seed` is only recorded. `choosers[0]` is the side that wins the opening roll's first
    die; the record's `player` numbers index `choosers`.
    """
    record = GameRecordAD(seed=seed)
    player, dice = opening_roll(rng)
    pos = Position.start("acey-deucey")
    for _ in range(max_turns):
        plays = legal_plays_ad(pos, dice)
        play = choosers[player](pos, dice, plays) if plays else None
        record.turns.append(TurnAD(player, dice, play))
        after = pos if play is None else play.position
        value = int(game_value_ad(to_board_ad(after)[None])[0])
        if value:
            record.winner, record.value = player, value
            return record
        if play is None or not play.extra_turn:
            after, player = after.flip(), 1 - player
        pos = after
        d1, d2 = roll_dice(rng, 1)[0]
        dice = int(d1), int(d2)
    raise RuntimeError(f"game did not end within {max_turns} turns")


def _pick(counts: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Which groups have rows, and one row drawn uniformly from each of them."""
    moved = counts > 0
    first = np.cumsum(counts) - counts
    return moved, first[moved] + (rng.random(int(moved.sum())) * counts[moved]).astype(np.int64)


def random_selfplay_ad(
    n_games: int, rng: np.random.Generator, max_plies: int = 5000
) -> SelfPlayResult:
    """Play `n_games` acey-deucey games of random plays in lockstep.

    A 1-2 is chosen in two stages, each uniform: the play of the 1 and the 2, then one of
    the outcomes of the doubles (`batch_bonus_ad`). Winners count from the side that
    opened (0); `plies` counts rolls, extra ones included.
    """
    boards = start_boards_ad(n_games)
    side = np.zeros(n_games, np.int8)
    winner = np.full(n_games, -1, np.int8)
    value = np.zeros(n_games, np.int8)
    plies = np.zeros(n_games, np.int32)
    dice = rng.integers(1, 7, size=(n_games, 2))
    while (tie := dice[:, 0] == dice[:, 1]).any():
        dice[tie] = rng.integers(1, 7, size=(int(tie.sum()), 2))
    active = np.arange(n_games)
    for ply in range(max_plies):
        after, parent, due = batch_afterstates_ad(boards[active], dice, bonus=False)
        moved, pick = _pick(np.bincount(parent, minlength=active.size), rng)
        new = boards[active]
        new[moved] = after[pick]
        again = np.zeros(active.size, bool)
        owed = np.flatnonzero(moved)[due[pick]]
        if owed.size:
            after, parent, extra = batch_bonus_ad(new[owed])
            _, pick = _pick(np.bincount(parent, minlength=owed.size), rng)
            new[owed] = after[pick]
            again[owed] = extra[pick]
        val = game_value_ad(new)
        done = val > 0
        ended = active[done]
        winner[ended] = side[ended]
        value[ended] = val[done]
        plies[ended] = ply + 1
        boards[active] = np.where(again[:, None, None], new, new[:, ::-1])
        side[active[~again]] ^= 1
        active = active[~done]
        if active.size == 0:
            break
        dice = roll_dice(rng, active.size)
    return SelfPlayResult(winner, value, plies)
