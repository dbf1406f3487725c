"""The legal plays of one position in plain Python, for a program that asks about one.

A command that answers one question (a hint, an evaluation) would spend most of its time
loading numba for the batched generator (`engine.movegen`); this walk needs nothing but
Python and finds the same plays. It follows the kernel's search order exactly — the dice
in their given order and then swapped (doubles with non-increasing source points),
sources from the bar down, the first way found to each position kept, then the max-dice
and larger-die rules — so that each play comes with the same steps, and so the same
notation, as the kernel gives it.
"""

from __future__ import annotations

import numpy as np

#: A play as found: the resulting board (mover still in row 1), its steps `(from, to)` in
#: the mover's points (25 the bar, 0 off), and which steps hit.
Found = tuple[np.ndarray, tuple[tuple[int, int], ...], tuple[bool, ...]]


def _target(opp: list[int], own: list[int], s: int, die: int, outside: int) -> int | None:
    """Where a checker from index `s` lands with `die` (-1 for off), or None."""
    if own[s] == 0:
        return None
    t = s - die
    if t >= 0:
        return t if opp[23 - t] < 2 else None
    if outside > 0:
        return None
    if t < -1 and any(own[j] > 0 for j in range(s + 1, 6)):
        return None
    return -1


def plays_of(board: np.ndarray, dice: tuple[int, int]) -> list[Found]:
    """Every distinct legal play of `board` (int8 (2, 25), row 1 on roll) for `dice`."""
    d1, d2 = dice
    double = d1 == d2
    n_dice = 4 if double else 2
    orders = [(d1,) * 4] if double else [(d1, d2), (d2, d1)]
    opp = [int(c) for c in board[0]]
    own = [int(c) for c in board[1]]
    found: dict[bytes, tuple[int, Found]] = {}  # key -> (first die, play), first way kept
    best = 0
    path: list[tuple[int, int, bool]] = []

    def leaf(first_die: int) -> None:
        nonlocal best, found
        depth = len(path)
        if depth > best:
            best, found = depth, {}
        if depth == best and depth > 0:
            key = bytes(opp) + bytes(own)
            if key not in found:
                after = np.array([opp, own], dtype=np.int8)
                steps = tuple((s + 1, t + 1 if t >= 0 else 0) for s, t, _ in path)
                hits = tuple(h for _, _, h in path)
                found[key] = (first_die, (after, steps, hits))

    def walk(seq: tuple[int, ...], level: int, top: int, outside: int) -> None:
        if level == n_dice:
            leaf(seq[0])
            return
        die = seq[level]
        lowest = 24 if own[24] > 0 else 0
        moved = False
        for s in range(top, lowest - 1, -1):
            t = _target(opp, own, s, die, outside)
            if t is None:
                continue
            moved = True
            own[s] -= 1
            hit = False
            if t >= 0:
                own[t] += 1
                if opp[23 - t] == 1:
                    hit = True
                    opp[23 - t] = 0
                    opp[24] += 1
            path.append((s, t, hit))
            walk(seq, level + 1, s if double else 24, outside - (s >= 6 and t < 6))
            path.pop()
            own[s] += 1
            if t >= 0:
                own[t] -= 1
                if hit:
                    opp[23 - t] = 1
                    opp[24] -= 1
        if not moved:
            leaf(seq[0])

    outside0 = sum(own[6:25])
    for seq in orders:
        walk(seq, 0, 24, outside0)
    plays = list(found.values())
    if best == 1 and not double:
        big = max(d1, d2)
        if any(die == big for die, _ in plays):
            plays = [p for p in plays if p[0] == big]
    return [play for _, play in plays]
