"""The batched move generator: every distinct position a roll can reach, for many boards.

Boards are in GNU Backgammon's layout, int8 (B, 2, 25): row 1 the side on roll, row 0 the
other side, each from its own view (index 0..23 its points 1..24, index 24 its bar).
The kernel is compiled by numba: per board it walks the dice orders depth-first (doubles
with non-increasing source points, which reaches every distinct play once the max-dice
rule is applied), keeps only the plays that use the most dice (and the larger die when
only one can be played), and removes duplicate resulting positions with a Zobrist hash
table whose hits are confirmed by comparing the boards.

The legal sources of a die come from bit sets (the mover's occupied points, the points
the other side holds), so a step goes straight to the next playable checker instead of
looking at every point. One board's walk never reallocates: when the output or the hash
table is full it stops, and the caller grows that array and walks the board again.
Arrays that stay put through the hot loop keep it fast (growing them inside it made
numba's code take 1.6 times as long), and the table (1,024 slots unless a board needs
more) stays in the L1 cache. `random_turns` runs the same walk for random self-play and
keeps only the picked position.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from engine.jit import kernel

if TYPE_CHECKING:  # bound by `kernel` when numba compiles `_top`: importing it loads numba
    from numba.cpython.unsafe.numbers import leading_zeros

_TABLE_SIZE = 1 << 10  # dedup table slots at the start, doubled when a board needs more


def _splitmix64(n: int, seed: int) -> np.ndarray:
    """`n` pseudo-random uint64 (splitmix64's stream from `seed`): keys for the table,
    without importing `numpy.random` (tens of milliseconds of a cold command)."""
    x = np.arange(1, n + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(seed)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


# The plays a walk finds do not depend on the keys (table hits are confirmed board
# against board), only where in the table they land.
_ZOBRIST = _splitmix64(2 * 25 * 16, 0x5EED).reshape(2, 25, 16)


@kernel(nogil=True)
def _hash(board: np.ndarray, zob: np.ndarray) -> np.uint64:
    """The Zobrist hash of a whole board (acey-deucey's kernel keys its roots with it)."""
    h = np.uint64(0)
    for side in range(2):
        for i in range(board.shape[1]):
            h ^= zob[side, i, board[side, i]]
    return h


_OUT_FULL = -1
_TABLE_FULL = -2

# `_scratch`'s working arrays: table, row keys, first dice, keys, `w`, path, board.
_Scratch: TypeAlias = tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray
]


@kernel(nogil=True)
def _grow(a: np.ndarray) -> np.ndarray:
    bigger = np.empty((a.shape[0] * 2, *a.shape[1:]), a.dtype)
    bigger[: a.shape[0]] = a
    return bigger


@kernel(
    nogil=True, inline="always", numba_globals={"leading_zeros": "numba.cpython.unsafe.numbers"}
)
def _top(bits: int) -> int:
    """The highest set bit of `bits`, -1 for none."""
    # numba's stub types the intrinsic with its typing context as a first argument.
    return 63 - leading_zeros(np.uint64(bits))  # type: ignore[call-arg]


@kernel(nogil=True)
def _walk(
    board: np.ndarray,
    d1: int,
    d2: int,
    zob: np.ndarray,
    out: np.ndarray,
    start: int,
    steps: np.ndarray,
    record: bool,
    scratch: _Scratch,
    gen: int,
) -> tuple[int, int]:
    """Writes the distinct plays of `board` to `out[start:]`.

    Returns `(end, gen)`, or `(_OUT_FULL, gen)` / `(_TABLE_FULL, gen)` when `out` or the
    scratch table is too small. `scratch` is `_scratch`'s working arrays: the table `tab`
    (entries `gen << 32 | row - start`, with `row_key` and `die_of` per row), `keys`, `w`
    (int64 rows per level: checkers outside home, next source, moved, applied, die,
    occupied points), `path`, and `pos`, the board moved in place.
    """
    tab, row_key, die_of, keys, w, path, pos = scratch
    for side in range(2):
        for i in range(25):
            pos[side, i] = board[side, i]
    mask = tab.shape[0] - 1
    room = min(out.shape[0] - start, row_key.shape[0])
    double = d1 == d2
    n_dice = 4 if double else 2
    n_orders = 1 if double else 2
    n = start
    best_depth = 0
    gen += 1
    # Sets of points as bits: the mover's occupied points (24 the bar), and the targets
    # the other side holds with two or more (never changes: a hit only takes a blot).
    occ0 = 0
    blocked = 0
    out0 = 0
    for i in range(25):
        if pos[1, i] > 0:
            occ0 |= 1 << i
            if i >= 6:
                out0 += pos[1, i]
    for t in range(24):
        if pos[0, 23 - t] >= 2:
            blocked |= 1 << t
    no_bar = pos[1, 24] == 0
    outside = w[0]
    next_src = w[1]
    moved = w[2]
    applied = w[3]
    seq = w[4]
    occ = w[5]
    # The sources that can play the first die at the root: found by the first order's
    # root scan, read by the second order.
    first_legal = 0
    for order in range(n_orders):
        if double:
            seq[:4] = d1
        elif order == 0:
            seq[0] = d1
            seq[1] = d2
        else:
            seq[0] = d2
            seq[1] = d1
        skip_known = order == 1
        # Keys only need to tell apart the positions of one board: they start at 0.
        keys[0] = 0
        outside[0] = out0
        occ[0] = occ0
        next_src[0] = 24
        moved[0] = 0
        applied[0] = 0
        level = 0
        while level >= 0:
            if level < n_dice:
                if applied[level]:  # take back the move tried last at this level
                    s = path[level, 0]
                    t = path[level, 1]
                    pos[1, s] += 1
                    if t >= 0:
                        pos[1, t] -= 1
                        if path[level, 2]:
                            pos[0, 23 - t] = 1
                            pos[0, 24] -= 1
                    applied[level] = 0
                die = seq[level]
                here = occ[level]
                # The sources, at or below the next one to try, that can play `die`.
                if here >> 24 & 1:
                    legal = (1 << 24) & ~(blocked << die)
                else:
                    legal = here & ~(blocked << die) & ~((1 << die) - 1)
                    if outside[level] == 0:  # bearing off
                        legal |= here & (1 << (die - 1))
                        top = _top(here)
                        if top < die - 1:
                            legal |= 1 << top
                    if skip_known and level == 1 and no_bar and outside[1] > 0:
                        # Nothing but the moved checker can have become playable: no bar
                        # was entered and bearing off is still not allowed.
                        legal &= 1 << path[0, 1]
                legal &= (1 << (next_src[level] + 1)) - 1
                if legal:
                    moved[level] = 1
                    if level == 0 and order == 0:
                        first_legal |= legal
                    if skip_known and level == 1:
                        # The second order of a non-double only needs the plays the
                        # first order could not make: the same checker going on, or a
                        # move that was illegal before the first one.
                        legal &= ~first_legal | (1 << max(path[0, 1], 0))
                found = _top(legal)
                if found >= 0:
                    target = max(found - die, -1)
                    next_src[level] = found - 1
                    key = keys[level]
                    c = pos[1, found]
                    key ^= zob[1, found, c] ^ zob[1, found, c - 1]
                    pos[1, found] = c - 1
                    after = here
                    if c == 1:
                        after &= ~(1 << found)
                    hit = 0
                    if target >= 0:
                        after |= 1 << target
                        c = pos[1, target]
                        key ^= zob[1, target, c] ^ zob[1, target, c + 1]
                        pos[1, target] = c + 1
                        oi = 23 - target
                        if pos[0, oi] == 1:
                            hit = 1
                            c = pos[0, 24]
                            key ^= zob[0, oi, 1] ^ zob[0, oi, 0]
                            key ^= zob[0, 24, c] ^ zob[0, 24, c + 1]
                            pos[0, oi] = 0
                            pos[0, 24] = c + 1
                    path[level, 0] = found
                    path[level, 1] = target
                    path[level, 2] = hit
                    applied[level] = 1
                    level += 1
                    keys[level] = key
                    occ[level] = after
                    outside[level] = outside[level - 1] - (1 if found >= 6 and target < 6 else 0)
                    next_src[level] = found if double else 24
                    moved[level] = 0
                    applied[level] = 0
                    continue
                if moved[level]:
                    level -= 1
                    continue
            # A leaf: all dice played, or none of the rest can be.
            if level > best_depth:
                best_depth = level
                n = start
                gen += 1
            if level == best_depth and level > 0:
                key = keys[level]
                slot = np.int64(key) & mask
                fresh = True
                while True:
                    entry = tab[slot]
                    if entry >> 32 != gen:
                        break
                    row = entry & 0xFFFFFFFF
                    if row_key[row] == key:
                        r = start + row
                        same = True
                        for side in range(2):
                            for i in range(25):
                                if out[r, side, i] != pos[side, i]:
                                    same = False
                                    break
                            if not same:
                                break
                        if same:
                            fresh = False
                            break
                    slot = (slot + 1) & mask
                if fresh:
                    row = n - start
                    if row == room:
                        return (_OUT_FULL if room < row_key.shape[0] else _TABLE_FULL), gen
                    tab[slot] = (gen << 32) | row
                    row_key[row] = key
                    die_of[row] = seq[0]
                    for side in range(2):
                        for i in range(25):
                            out[n, side, i] = pos[side, i]
                    if record:
                        for k in range(4):
                            if k < level:
                                steps[n, k, 0] = path[k, 0] + 1
                                steps[n, k, 1] = path[k, 1] + 1 if path[k, 1] >= 0 else 0
                                steps[n, k, 2] = path[k, 2]
                            else:
                                steps[n, k, 0] = 0
                                steps[n, k, 1] = 0
                                steps[n, k, 2] = 0
                    n += 1
            level -= 1
    if best_depth == 1 and not double:
        big = max(d1, d2)
        has_big = False
        for r in range(n - start):
            if die_of[r] == big:
                has_big = True
                break
        if has_big:
            keep = start
            for r in range(start, n):
                if die_of[r - start] == big:
                    out[keep] = out[r]
                    if record:
                        steps[keep] = steps[r]
                    keep += 1
            n = keep
    return n, gen


@kernel(nogil=True)
def _scratch(table_size: int) -> _Scratch:
    """The walk's working arrays: table, row keys, first dice, keys, `w`, path, board."""
    return (
        np.zeros(table_size, np.int64),
        np.empty(table_size // 2, np.uint64),
        np.empty(table_size // 2, np.int8),
        np.empty(5, np.uint64),
        np.zeros((6, 5), np.int64),
        np.zeros((4, 3), np.int8),
        np.empty((2, 25), np.int8),
    )


@kernel(nogil=True)
def _check_dice(dice: np.ndarray) -> None:
    for k in range(dice.shape[0]):
        if not (1 <= dice[k, 0] <= 6 and 1 <= dice[k, 1] <= 6):
            raise ValueError("dice must be in 1..6")


@kernel(nogil=True)
def _generate(
    boards: np.ndarray, dice: np.ndarray, zob: np.ndarray, record: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    _check_dice(dice)
    n_boards = boards.shape[0]
    cap = 64 + n_boards * 32
    out = np.empty((cap, 2, 25), np.int8)
    parent = np.empty(cap, np.int64)
    steps = np.empty((cap if record else 1, 4, 3), np.int8)
    scratch = _scratch(_TABLE_SIZE)
    gen = 0
    n = 0
    b = 0
    while b < n_boards:
        end, gen = _walk(
            boards[b], dice[b, 0], dice[b, 1], zob, out, n, steps, record, scratch, gen
        )
        if end == _OUT_FULL:
            out = _grow(out)
            parent = _grow(parent)
            if record:
                steps = _grow(steps)
            continue
        if end == _TABLE_FULL:
            scratch = _scratch(2 * scratch[0].shape[0])
            continue
        for r in range(n, end):
            parent[r] = b
        n = end
        b += 1
    return out[:n], parent[:n], steps[:n] if record else steps[:0]


# Entry points from Python: each array handed back costs microseconds, so the plain one
# returns two.


@kernel(nogil=True)
def _afterstates(
    boards: np.ndarray, dice: np.ndarray, zob: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    out, parent, _ = _generate(boards, dice, zob, False)
    return out, parent


@kernel(nogil=True)
def _afterstates_with_steps(
    boards: np.ndarray, dice: np.ndarray, zob: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return _generate(boards, dice, zob, True)


@kernel(nogil=True)
def _random_turns(
    boards: np.ndarray, rows: np.ndarray, dice: np.ndarray, uniform: np.ndarray, zob: np.ndarray
) -> np.ndarray:
    _check_dice(dice)
    values = np.zeros(rows.shape[0], np.int8)
    out = np.empty((64, 2, 25), np.int8)
    steps = np.empty((1, 4, 3), np.int8)
    scratch = _scratch(_TABLE_SIZE)
    pos = np.empty((2, 25), np.int8)
    gen = 0
    k = 0
    while k < rows.shape[0]:
        g = rows[k]
        if not 0 <= g < boards.shape[0]:
            raise ValueError("rows must index boards")
        end, gen = _walk(boards[g], dice[k, 0], dice[k, 1], zob, out, 0, steps, False, scratch, gen)
        if end == _OUT_FULL:
            out = _grow(out)
            continue
        if end == _TABLE_FULL:
            scratch = _scratch(2 * scratch[0].shape[0])
            continue
        if end == 0:  # no legal play: the turn passes
            for side in range(2):
                for i in range(25):
                    pos[side, i] = boards[g, side, i]
        else:
            pick = min(int(uniform[k] * end), end - 1)
            for side in range(2):
                for i in range(25):
                    pos[side, i] = out[pick, side, i]
            # What the mover has won: all its checkers off; a gammon when the other side
            # has borne none off, a backgammon when one is also in the winner's home or on
            # the bar.
            mine = 0
            theirs = 0
            for i in range(25):
                mine += pos[1, i]
                theirs += pos[0, i]
            if mine == 0:
                value = 1
                if theirs == 15:
                    value = 2
                    for i in range(18, 25):
                        if pos[0, i] > 0:
                            value = 3
                            break
                values[k] = value
        for side in range(2):
            for i in range(25):
                boards[g, side, i] = pos[1 - side, i]
        k += 1
    return values


def _check(boards: np.ndarray, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Contiguous arrays of the kernel's types; the kernels check the dice are 1..6."""
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    if boards.ndim != 3 or boards.shape[1:] != (2, 25):
        raise ValueError(f"boards must have shape (B, 2, 25), got {boards.shape}")
    return boards, _check_roll(dice, boards.shape[0])


def _check_roll(dice: np.ndarray, n: int) -> np.ndarray:
    dice = np.ascontiguousarray(dice, dtype=np.int64)
    if dice.shape != (n, 2):
        raise ValueError(f"dice must have shape ({n}, 2), got {dice.shape}")
    return dice


def batch_afterstates(boards: np.ndarray, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every distinct legal resulting position of each board for its roll.

    `boards` is int8 (B, 2, 25) in GNU Backgammon's layout (row 1 on roll) and `dice`
    int (B, 2). Returns `(afterstates, parent)`: int8 (M, 2, 25) with the mover still in
    row 1, and int64 (M,) the row of `boards` each came from, grouped in ascending order.
    A board with no legal play contributes no rows.

    >>> import numpy as np, engine
    >>> start = engine.Position.start().board[None]
    >>> after, parent = engine.batch_afterstates(start, np.array([[3, 1]]))
    >>> after.shape, parent.tolist().count(0)
    ((16, 2, 25), 16)
    """
    boards, dice = _check(boards, dice)
    return _afterstates(boards, dice, _ZOBRIST)


def batch_afterstates_with_steps(
    boards: np.ndarray, dice: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """As `batch_afterstates`, plus one way to reach each position.

    The third array is int8 (M, 4, 3): up to four steps `(from, to, hit)` with points from
    the mover's view (25 the bar, 0 borne off); unused steps are all zero.
    """
    boards, dice = _check(boards, dice)
    return _afterstates_with_steps(boards, dice, _ZOBRIST)


def random_turns(
    boards: np.ndarray, rows: np.ndarray, dice: np.ndarray, uniform: np.ndarray
) -> np.ndarray:
    """Plays one uniformly random turn on each listed board, in place; the games' values.

    For `boards[rows[k]]` (int8 (B, 2, 25), changed in place) and roll `dice[k]`, the play
    is the distinct resulting position number `floor(uniform[k] * count)` in
    `batch_afterstates` order (so each is equally likely for uniform draws in [0, 1)), or
    none when no play is legal. The board is then flipped to the next side on roll.
    Returns int8 per listed board: what the mover won by that play (`game_value`), 0 if
    the game goes on.
    """
    if boards.dtype != np.int8 or boards.ndim != 3 or boards.shape[1:] != (2, 25):
        raise ValueError(f"boards must be int8 (B, 2, 25), got {boards.dtype} {boards.shape}")
    if not boards.flags.c_contiguous:
        raise ValueError("boards must be C-contiguous (they are changed in place)")
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if rows.ndim != 1:
        raise ValueError(f"rows must be one-dimensional, got shape {rows.shape}")
    dice = _check_roll(dice, len(rows))
    uniform = np.ascontiguousarray(uniform, dtype=np.float64)
    if uniform.shape != rows.shape:
        raise ValueError(f"uniform must have shape {rows.shape}, got {uniform.shape}")
    return _random_turns(boards, rows, dice, uniform, _ZOBRIST)
