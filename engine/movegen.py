"""The batched move generator: every distinct position a roll can reach, for many boards.

Boards are in GNU Backgammon's layout, int8 (B, 2, 25): row 1 the side on roll, row 0 the
other side, each from its own view (index 0..23 its points 1..24, index 24 its bar).
The kernel is compiled by numba: per board it walks the dice orders depth-first (doubles
with non-increasing source points, which reaches every distinct play once the max-dice
rule is applied), keeps only the plays that use the most dice (and the larger die when
only one can be played), and removes duplicate resulting positions with a Zobrist hash
table whose hits are confirmed by comparing the boards.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_TABLE_SIZE = 1 << 13
_MASK = _TABLE_SIZE - 1

_ZOBRIST = np.random.default_rng(0x5EED).integers(
    0, np.iinfo(np.uint64).max, size=(2, 25, 16), dtype=np.uint64, endpoint=True
)


@njit(cache=True, nogil=True)
def _hash(board: np.ndarray, zob: np.ndarray) -> np.uint64:
    h = np.uint64(0)
    for side in range(2):
        for i in range(board.shape[1]):
            h ^= zob[side, i, board[side, i]]
    return h


_ILLEGAL = -99


@njit(cache=True, nogil=True, inline="always")
def _target(cur: np.ndarray, s: int, die: int, outside: int) -> int:
    """Where a checker from index `s` lands with `die` (-1 for off), or `_ILLEGAL`."""
    if cur[1, s] == 0:
        return _ILLEGAL
    t = s - die
    if t >= 0:
        return t if cur[0, 23 - t] < 2 else _ILLEGAL
    if outside > 0:
        return _ILLEGAL
    if t < -1:
        for j in range(s + 1, 6):
            if cur[1, j] > 0:
                return _ILLEGAL
    return -1


@njit(cache=True, nogil=True)
def _grow(a: np.ndarray) -> np.ndarray:
    bigger = np.empty((a.shape[0] * 2, *a.shape[1:]), a.dtype)
    bigger[: a.shape[0]] = a
    return bigger


@njit(cache=True, nogil=True)
def _generate(boards, dice, zob, record):
    n_boards = boards.shape[0]
    cap = max(64, n_boards * 32)
    out = np.empty((cap, 2, 25), np.int8)
    parent = np.empty(cap, np.int64)
    steps = np.zeros((cap if record else 1, 4, 3), np.int8)
    die_used = np.empty(cap, np.int8)

    stamp = np.full(_TABLE_SIZE, -1, np.int64)
    slot_row = np.empty(_TABLE_SIZE, np.int64)
    slot_key = np.empty(_TABLE_SIZE, np.uint64)
    gen = 0

    pos = np.empty((2, 25), np.int8)  # moved in place, and moved back on the way up
    keys = np.empty(5, np.uint64)
    outside = np.empty(5, np.int64)
    next_src = np.empty(5, np.int64)
    moved = np.empty(5, np.bool_)
    applied = np.zeros(5, np.bool_)
    path = np.zeros((4, 3), np.int8)  # (source index, target index, hit) per level
    seq = np.empty(4, np.int64)
    first_legal = np.zeros(25, np.bool_)

    n = 0
    for b in range(n_boards):
        d1 = dice[b, 0]
        d2 = dice[b, 1]
        double = d1 == d2
        n_dice = 4 if double else 2
        n_orders = 1 if double else 2
        start = n
        best_depth = 0
        gen += 1
        pos[:] = boards[b]
        # Keys only need to tell apart the positions of one board: start them at 0 (the
        # XOR of the board's own hash into all of them would change nothing).
        key0 = np.uint64(0)
        out0 = 0
        for i in range(6, 25):
            out0 += pos[1, i]
        no_bar = pos[1, 24] == 0
        # Which sources can play the first die at the root: filled in by the first order's
        # root scan, read by the second order.
        first_legal[:] = False
        for order in range(n_orders):
            if double:
                seq[:] = d1
            elif order == 0:
                seq[0] = d1
                seq[1] = d2
            else:
                seq[0] = d2
                seq[1] = d1
            skip_known = order == 1
            keys[0] = key0
            outside[0] = out0
            next_src[0] = 24
            moved[0] = False
            applied[0] = False
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
                        applied[level] = False
                    die = seq[level]
                    found = -1
                    target = 0
                    s = next_src[level]
                    lowest = 24 if pos[1, 24] > 0 else 0
                    if skip_known and level == 1 and no_bar and outside[1] > 0:
                        # Nothing but the moved checker can have become playable: no bar
                        # was entered and bearing off is still not allowed.
                        lowest = max(path[0, 1], 0)
                        if s > path[0, 1]:
                            s = path[0, 1]
                    while s >= lowest:
                        t = _target(pos, s, die, outside[level])
                        if t != _ILLEGAL:
                            moved[level] = True
                            if level == 0 and order == 0:
                                first_legal[s] = True
                            # The second order of a non-double only needs the plays the
                            # first order could not make: the same checker going on, or a
                            # move that was illegal before the first one.
                            if not (skip_known and level == 1 and first_legal[s]
                                    and s != path[0, 1]):
                                found = s
                                target = t
                                break
                        s -= 1
                    if found >= 0:
                        next_src[level] = found - 1
                        key = keys[level]
                        c = pos[1, found]
                        key ^= zob[1, found, c] ^ zob[1, found, c - 1]
                        pos[1, found] = c - 1
                        hit = False
                        if target >= 0:
                            c = pos[1, target]
                            key ^= zob[1, target, c] ^ zob[1, target, c + 1]
                            pos[1, target] = c + 1
                            oi = 23 - target
                            if pos[0, oi] == 1:
                                hit = True
                                c = pos[0, 24]
                                key ^= zob[0, oi, 1] ^ zob[0, oi, 0]
                                key ^= zob[0, 24, c] ^ zob[0, 24, c + 1]
                                pos[0, oi] = 0
                                pos[0, 24] = c + 1
                        path[level, 0] = found
                        path[level, 1] = target
                        path[level, 2] = 1 if hit else 0
                        applied[level] = True
                        level += 1
                        keys[level] = key
                        outside[level] = outside[level - 1] - (
                            1 if found >= 6 and target < 6 else 0
                        )
                        next_src[level] = found if double else 24
                        moved[level] = False
                        applied[level] = False
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
                    slot = np.int64(key & np.uint64(_MASK))
                    fresh = True
                    while stamp[slot] == gen:
                        if slot_key[slot] == key:
                            row = slot_row[slot]
                            same = True
                            for side in range(2):
                                for i in range(25):
                                    if out[row, side, i] != pos[side, i]:
                                        same = False
                                        break
                                if not same:
                                    break
                            if same:
                                fresh = False
                                break
                        slot = (slot + 1) & _MASK
                    if fresh:
                        if n == out.shape[0]:
                            out = _grow(out)
                            parent = _grow(parent)
                            die_used = _grow(die_used)
                            if record:
                                steps = _grow(steps)
                        stamp[slot] = gen
                        slot_key[slot] = key
                        slot_row[slot] = n
                        out[n] = pos
                        parent[n] = b
                        die_used[n] = seq[0]
                        if record:
                            steps[n] = 0
                            for k in range(level):
                                steps[n, k, 0] = path[k, 0] + 1
                                steps[n, k, 1] = path[k, 1] + 1 if path[k, 1] >= 0 else 0
                                steps[n, k, 2] = path[k, 2]
                        n += 1
                level -= 1
        if best_depth == 1 and not double:
            big = max(d1, d2)
            has_big = False
            for r in range(start, n):
                if die_used[r] == big:
                    has_big = True
                    break
            if has_big:
                keep = start
                for r in range(start, n):
                    if die_used[r] == big:
                        out[keep] = out[r]
                        if record:
                            steps[keep] = steps[r]
                        keep += 1
                n = keep
    return out[:n], parent[:n], steps[:n] if record else steps[:0]


def _check(boards: np.ndarray, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    dice = np.ascontiguousarray(dice, dtype=np.int64)
    if boards.ndim != 3 or boards.shape[1:] != (2, 25):
        raise ValueError(f"boards must have shape (B, 2, 25), got {boards.shape}")
    if dice.shape != (boards.shape[0], 2):
        raise ValueError(f"dice must have shape ({boards.shape[0]}, 2), got {dice.shape}")
    if dice.size and (dice.min() < 1 or dice.max() > 6):
        raise ValueError("dice must be in 1..6")
    return boards, dice


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
    out, parent, _ = _generate(boards, dice, _ZOBRIST, False)
    return out, parent


def batch_afterstates_with_steps(
    boards: np.ndarray, dice: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """As `batch_afterstates`, plus one way to reach each position.

    The third array is int8 (M, 4, 3): up to four steps `(from, to, hit)` with points from
    the mover's view (25 the bar, 0 borne off); unused steps are all zero.
    """
    boards, dice = _check(boards, dice)
    return _generate(boards, dice, _ZOBRIST, True)
