"""A plain, one-position-at-a-time move generator written straight from RULES.md §1.

It shares no code with `engine`: lists of ints, every order of the dice, every checker,
recursion, and a set of resulting boards. Slow on purpose; the tests compare the batched
generator with it.
"""

from __future__ import annotations

from itertools import permutations

Board = tuple[tuple[int, ...], tuple[int, ...]]  # (not on roll, on roll), 25 each


def _single_moves(board: Board, die: int):
    """Boards after moving one checker `die` pips, as (board, from, to, hit)."""
    opp, me = list(board[0]), list(board[1])
    results = []
    sources = [25] if me[24] > 0 else [p for p in range(1, 25) if me[p - 1] > 0]
    all_home = sum(me[6:25]) == 0
    for src in sources:
        dst = src - die
        if dst >= 1:
            opp_index = 25 - dst - 1  # my point dst is the opponent's point 25 - dst
            if opp[opp_index] >= 2:
                continue
            new_me, new_opp = me[:], opp[:]
            new_me[src - 1] -= 1
            new_me[dst - 1] += 1
            hit = new_opp[opp_index] == 1
            if hit:
                new_opp[opp_index] = 0
                new_opp[24] += 1
            results.append(((tuple(new_opp), tuple(new_me)), src, dst, hit))
        elif all_home:
            if dst < 0 and any(me[p - 1] for p in range(src + 1, 7)):
                continue  # a higher point still holds a checker
            new_me = me[:]
            new_me[src - 1] -= 1
            results.append(((tuple(opp), tuple(new_me)), src, 0, False))
    return results


def reference_afterstates(board: Board, dice: tuple[int, int]) -> set[Board]:
    """The set of distinct boards the roll can legally reach (empty if none)."""
    d1, d2 = dice
    orders = [(d1,) * 4] if d1 == d2 else list(permutations((d1, d2)))
    finals: dict[Board, tuple[int, int]] = {}  # board -> (dice used, first die)

    def walk(b: Board, remaining: tuple[int, ...], used: int, first: int) -> None:
        moves = _single_moves(b, remaining[0]) if remaining else []
        if not moves:
            if used:
                best = finals.get(b)
                if best is None or used > best[0]:
                    finals[b] = (used, first)
            return
        for nb, *_ in moves:
            walk(nb, remaining[1:], used + 1, first or remaining[0])

    for order in orders:
        walk(board, order, 0, 0)
    if not finals:
        return set()
    most = max(u for u, _ in finals.values())
    kept = {b: f for b, (u, f) in finals.items() if u == most}
    if most == 1 and d1 != d2 and any(f == max(dice) for f in kept.values()):
        kept = {b: f for b, f in kept.items() if f == max(dice)}
    return set(kept)
