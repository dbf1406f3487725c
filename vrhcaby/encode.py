"""Network input encodings of afterstate boards, vectorised over a batch.

Every encoder takes int8 boards of shape (N, 2, 25) in the project's layout (row 0 = the
side to roll next, row 1 = the side that just moved, each from its own view, index 24 =
bar) and returns float32 inputs of shape (N, width). No Python loop runs per position, so
a whole ply of afterstates is encoded in one call. Numpy, and numba kernels for the
hand-made features: the command-line evaluator uses it without importing torch.

Encodings, chosen by name (`ENCODINGS`):

- ``tesauro`` (198 units): for each side, four units per point for 1, 2, 3 and (n-3)/2
  checkers beyond three, one for the bar (n/2) and one for checkers borne off (n/15);
  then the two "whose turn" units, which under the afterstate convention always say that
  row 0 rolls next (kept so the layout is Tesauro's 198).
- ``rich`` (214 units): ``tesauro`` plus 16 hand-made features known to help (see
  `rich_features`).
- ``expert`` (218 units): ``rich`` plus, for each side, the fraction of the rolls that
  hit one of its blots and the pips such hits cost it (`shots`), blocked points and the
  bar taken into account.

Acey-deucey boards are int8 (N, 2, 26), column 25 holding each side's checkers waiting to
enter, and an afterstate may let its mover roll again. A network for them has the
*variant inputs* (`encode_variant`): its encoding of the board with the waiting checkers
counted on the bar (they enter as bar checkers do and are as far from home, so pip counts,
borne-off counts and the `rich` features stay right), then three units that tell them apart
and say who rolls next (`VARIANT_INPUTS`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from vrhcaby.jit import in_numpy, lazy_jit

_POINTS = 24
_BAR = 24
_START_PIPS = 167.0

# _POINT_UNITS[n] = Tesauro's four units for n checkers on a point.
_POINT_UNITS = np.zeros((16, 4), dtype=np.float32)
for _n in range(16):
    _POINT_UNITS[_n] = (_n >= 1, _n >= 2, _n >= 3, max(_n - 3, 0) / 2.0)
del _n

RICH_FEATURES = (
    "pips_0",
    "blots_0",
    "direct_shots_0",
    "indirect_shots_0",
    "home_points_0",
    "prime_0",
    "escapes_0",
    "pips_1",
    "blots_1",
    "direct_shots_1",
    "indirect_shots_1",
    "home_points_1",
    "prime_1",
    "escapes_1",
    "pip_difference",
    "race",
)
"""Names of the extra `rich` units, in order (suffix = board row)."""


def _as_boards(boards: np.ndarray) -> np.ndarray:
    boards = np.asarray(boards)
    if boards.ndim != 3 or boards.shape[1:] != (2, 25):
        raise ValueError(f"boards must have shape (N, 2, 25), got {boards.shape}")
    return boards


def encode_tesauro(boards: np.ndarray) -> np.ndarray:
    """Tesauro's 198 raw units for each board: (N, 2, 25) int8 -> (N, 198) float32."""
    boards = _as_boards(boards)
    n = boards.shape[0]
    counts = boards.astype(np.intp)
    out = np.empty((n, 198), dtype=np.float32)
    for row in (0, 1):
        base = 98 * row
        side = counts[:, row]
        out[:, base : base + 96] = _POINT_UNITS[side[:, :_POINTS]].reshape(n, 96)
        out[:, base + 96] = side[:, _BAR] / 2.0
        out[:, base + 97] = (15 - side.sum(axis=1)) / 15.0
    out[:, 196] = 1.0  # row 0 rolls next
    out[:, 197] = 0.0
    return out


def _rearmost(side: np.ndarray) -> np.ndarray:
    """Own-view point (1..25, 25 = bar) of each side's rearmost checker; 0 if none left."""
    occupied = side > 0  # index i = point i + 1, index 24 = bar = point 25
    last = 25 - np.argmax(occupied[:, ::-1], axis=1)  # highest occupied index + 1
    return np.where(occupied.any(axis=1), last, 0)


def rich_features(boards: np.ndarray) -> np.ndarray:
    """The 16 hand-made `rich` features (`RICH_FEATURES`): (N, 2, 25) -> (N, 16) float32.

    Per side, from its own view: pip count (/167); blots (/5); direct and indirect shots,
    the number of (blot, opposing checker) pairs 1-6 and 7-12 pips apart with the opposing
    checker behind the blot in its direction of travel, its bar counting as point 0 (/10);
    home-board points made (/6); longest prime (/6); escapes, the fraction of the 36
    rolls in which at least one die lets the rearmost back checker (on the opponent's home
    board or the bar) land on a point that is not blocked (1 with no back checker). Then
    the pip difference (row 0 minus row 1, /100) and a race flag (1 = no contact left).

    Big batches (or any batch once numba is loaded) go through a numba kernel that gives
    the same floats as the numpy code, about 8 times faster.
    """
    return _computed(boards, _rich_numpy, _rich_kernel, len(RICH_FEATURES))


def _computed(
    boards: np.ndarray, in_plain_numpy: Callable, kernel: Callable, width: int
) -> np.ndarray:
    """Features (N, width) float32 of `boards`: `in_plain_numpy` for a small batch while
    numba is not loaded (`vrhcaby.jit.in_numpy`), else `kernel`, which fills its output."""
    boards = _as_boards(boards)
    if in_numpy(boards.shape[0]):
        return in_plain_numpy(boards)
    out = np.empty((boards.shape[0], width), np.float32)
    kernel(np.ascontiguousarray(boards, dtype=np.int8), out)
    return out


def _rich_numpy(boards: np.ndarray) -> np.ndarray:
    """`rich_features` in whole-batch numpy operations."""
    n = boards.shape[0]
    counts = boards.astype(np.int32)
    out = np.empty((n, 16), dtype=np.float32)
    points = np.arange(1, 26, dtype=np.int32)
    pips = (counts * points).sum(axis=2)  # (N, 2)
    rear = np.stack([_rearmost(counts[:, 0]), _rearmost(counts[:, 1])], axis=1)
    for row in (0, 1):
        own = counts[:, row, :_POINTS]
        other = counts[:, 1 - row]
        # other_here[:, p] = opposing checkers on my point p (p = 0 is their bar).
        other_here = np.concatenate([other[:, _BAR : _BAR + 1], other[:, _POINTS - 1 :: -1]], 1)
        before = np.concatenate([np.zeros((n, 1), np.int32), np.cumsum(other_here, 1)], 1)
        p = np.arange(1, 25)
        direct_window = before[:, p] - before[:, np.maximum(p - 6, 0)]
        indirect_window = before[:, np.maximum(p - 6, 0)] - before[:, np.maximum(p - 12, 0)]
        blot = own == 1
        made = own >= 2
        run = np.zeros(n, np.int32)
        prime = np.zeros(n, np.int32)
        for i in range(_POINTS):
            run = (run + 1) * made[:, i]
            prime = np.maximum(prime, run)
        back = rear[:, row]
        blocked_dice = np.zeros(n, np.int32)
        for die in range(1, 7):
            land = np.clip(back - die, 0, 24)
            blocked_dice += other_here[np.arange(n), land] >= 2
        escapes = np.where(back >= 19, 1.0 - (blocked_dice / 6.0) ** 2, 1.0)
        col = 7 * row
        out[:, col] = pips[:, row] / _START_PIPS
        out[:, col + 1] = blot.sum(1) / 5.0
        out[:, col + 2] = (blot * direct_window).sum(1) / 10.0
        out[:, col + 3] = (blot * indirect_window).sum(1) / 10.0
        out[:, col + 4] = made[:, :6].sum(1) / 6.0
        out[:, col + 5] = prime / 6.0
        out[:, col + 6] = escapes
    out[:, 14] = (pips[:, 0] - pips[:, 1]) / 100.0
    out[:, 15] = rear.sum(axis=1) <= 25
    return out


@lazy_jit(fastmath=False)
def _rich_kernel(boards, out):  # pragma: no cover - numba
    """`rich_features` one board at a time, into `out` (N, 16) float32."""
    for r in range(boards.shape[0]):
        rear0 = rear1 = pips0 = pips1 = 0
        for i in range(25):
            c0, c1 = np.int64(boards[r, 0, i]), np.int64(boards[r, 1, i])
            pips0 += (i + 1) * c0
            pips1 += (i + 1) * c1
            if c0 > 0:
                rear0 = i + 1
            if c1 > 0:
                rear1 = i + 1
        for row in range(2):
            own, other = boards[r, row], boards[r, 1 - row]
            blots = direct = indirect = home = run = prime = 0
            for p in range(1, 25):
                c = own[p - 1]
                if c >= 2:
                    run += 1
                    prime = max(prime, run)
                    home += p <= 6
                else:
                    run = 0
                if c == 1:
                    blots += 1
                    for q in range(max(p - 12, 0), p):  # my point q holds other[24 - q]
                        hitters = np.int64(other[24 - q])
                        if q >= p - 6:
                            direct += hitters
                        else:
                            indirect += hitters
            escapes = 1.0
            back = rear0 if row == 0 else rear1
            if back >= 19:
                blocked = 0
                for die in range(1, 7):
                    blocked += other[24 - (back - die)] >= 2
                escapes = 1.0 - (blocked / 6.0) ** 2
            col = 7 * row
            out[r, col] = (pips0 if row == 0 else pips1) / _START_PIPS
            out[r, col + 1] = blots / 5.0
            out[r, col + 2] = direct / 10.0
            out[r, col + 3] = indirect / 10.0
            out[r, col + 4] = home / 6.0
            out[r, col + 5] = prime / 6.0
            out[r, col + 6] = escapes
        out[r, 14] = (pips0 - pips1) / 100.0
        out[r, 15] = rear0 + rear1 <= 25


SHOT_FEATURES = ("hit_rolls_0", "hit_rolls_1", "hit_pips_0", "hit_pips_1")
"""Names of the units the `expert` encoding adds to `rich` (suffix = the row whose blots)."""


def shots(boards: np.ndarray) -> np.ndarray:
    """How exposed each row's blots are to the other side's next roll: (N, 2, 25) -> (N, 4)
    float32, the `SHOT_FEATURES`.

    Per row: the fraction of the 36 rolls with which the other side can hit one of its
    blots (``hit_rolls``), and the pips that a hit costs it, averaged over the 36 rolls
    (0 for a roll that misses; the costliest blot the roll can hit), divided by 24
    (``hit_pips``). A roll hits when one checker lands on a blot with one die, or with the
    sum of its dice over an open point (both orders tried; doubles move up to four steps,
    each landing open), after the hitter's bar checkers have entered: two or more on the
    bar leave only the entering dice (doubles: the steps left after all have entered), one
    on the bar leaves the other die. The rule that a play must use as many dice as it can
    is not applied, so a rare roll counts although every legal play with it misses.
    """
    return _computed(boards, _shots_numpy, _shots_kernel, len(SHOT_FEATURES))


def _shots_numpy(boards: np.ndarray) -> np.ndarray:
    """`shots` in whole-batch numpy operations on the kernel's bit masks."""
    out = np.empty((boards.shape[0], len(SHOT_FEATURES)), np.float32)
    bits = np.int64(1) << np.arange(24, 0, -1, dtype=np.int64)  # target point p: bit 25 - p
    own_bits = np.int64(1) << np.arange(1, 25, dtype=np.int64)
    for target in (0, 1):
        them, us = boards[:, target, :24], boards[:, 1 - target]
        blots = (bits * (them == 1)).sum(axis=1)
        blocked = (bits * (them >= 2)).sum(axis=1)
        sources = (own_bits * (us[:, :24] > 0)).sum(axis=1)
        on_bar = us[:, 24].astype(np.int64)
        masks = []  # (blots the roll can hit, the roll's weight out of 36)
        for d1 in range(1, 7):
            for d2 in range(d1, 7):
                if d1 == d2:
                    entry = np.int64(1) << (25 - d1)
                    moves = (on_bar == 0) | (blocked & entry == 0)
                    hit = np.where(on_bar > 0, blots & entry, 0)
                    reach = sources | np.where(on_bar > 0, entry, 0)
                    steps = 4 - np.minimum(on_bar, 4)
                    for step in range(4):
                        landed = reach >> d1
                        hit |= np.where(steps > step, landed & blots, 0)
                        reach = landed & ~blocked & ~np.int64(1)
                    masks.append((np.where(moves, hit, 0), 1))
                    continue
                entries = (np.int64(1) << (25 - d1)) | (np.int64(1) << (25 - d2))
                total = d1 + d2
                free = ((sources >> d1) | (sources >> d2)) & blots
                free |= ((sources & ~(blocked << d1)) >> total) & blots
                free |= ((sources & ~(blocked << d2)) >> total) & blots
                one_in = np.zeros(len(boards), np.int64)
                for enter, other in ((d1, d2), (d2, d1)):
                    entry = np.int64(1) << (25 - enter)
                    enters = blocked & entry == 0
                    one_in |= np.where(enters, (entry | ((sources | entry) >> other)) & blots, 0)
                hit = np.where(on_bar >= 2, entries & blots, np.where(on_bar == 1, one_in, free))
                masks.append((hit, 2))
        hits = sum(weight * (hit != 0) for hit, weight in masks)
        # the costliest blot: the highest bit, the hitter's point t (its owner loses t pips)
        pips = sum(
            weight * (np.frexp(hit.astype(np.float64))[1] - 1).clip(0) for hit, weight in masks
        )
        out[:, target] = hits / 36.0
        out[:, 2 + target] = pips / (36.0 * 24.0)
    return out


@lazy_jit(fastmath=False)
def _shots_kernel(boards, out):  # pragma: no cover - numba
    """`shots` into `out` (N, 4), with bit masks of points in the hitter's view (a blot on
    the hitter's point t costs its owner t pips when hit)."""
    one = np.int64(1)

    def highest(bits):  # the index of the highest set bit of bits > 0
        top = 0
        while bits >> (top + 1):
            top += 1
        return top

    for r in range(boards.shape[0]):
        for target in range(2):
            hitter = 1 - target
            blots = blocked = sources = np.int64(0)
            for p in range(1, 25):  # the target's point p is the hitter's 25 - p
                c = boards[r, target, p - 1]
                if c == 1:
                    blots |= one << (25 - p)
                elif c >= 2:
                    blocked |= one << (25 - p)
                if boards[r, hitter, p - 1] > 0:
                    sources |= one << p
            on_bar = np.int64(boards[r, hitter, 24])
            hits = pips = 0
            for d1 in range(1, 7):
                for d2 in range(d1, 7):
                    hit = np.int64(0)
                    if d1 == d2:
                        steps = 4
                        reach = sources
                        if on_bar:
                            entry = one << (25 - d1)
                            if blocked & entry:
                                continue  # nothing moves
                            hit |= blots & entry
                            steps -= min(on_bar, 4)
                            reach |= entry
                        for _ in range(steps):
                            landed = reach >> d1
                            hit |= landed & blots
                            reach = landed & ~blocked & ~one  # bit 0: borne off
                        if hit:
                            hits += 1
                            pips += highest(hit)
                        continue
                    if on_bar >= 2:
                        hit = ((one << (25 - d1)) | (one << (25 - d2))) & blots
                    elif on_bar == 1:
                        for enter, other in ((d1, d2), (d2, d1)):
                            entry = one << (25 - enter)
                            if not blocked & entry:
                                hit |= (entry | ((sources | entry) >> other)) & blots
                    else:
                        total = d1 + d2
                        hit = ((sources >> d1) | (sources >> d2)) & blots
                        hit |= ((sources & ~(blocked << d1)) >> total) & blots
                        hit |= ((sources & ~(blocked << d2)) >> total) & blots
                    if hit:
                        hits += 2
                        pips += 2 * highest(hit)
            out[r, target] = hits / 36.0
            out[r, 2 + target] = pips / (36.0 * 24.0)


def expert_features(boards: np.ndarray) -> np.ndarray:
    """The `rich_features` followed by the `shots`: (N, 2, 25) -> (N, 20) float32."""
    return np.concatenate([rich_features(boards), shots(boards)], axis=1)


def encode_expert(boards: np.ndarray) -> np.ndarray:
    """Tesauro's 198 units followed by the 20 `expert_features`: (N, 2, 25) -> (N, 218)."""
    return np.concatenate([encode_tesauro(boards), expert_features(boards)], axis=1)


def encode_rich(boards: np.ndarray) -> np.ndarray:
    """Tesauro's 198 units followed by the 16 `rich_features`: (N, 2, 25) -> (N, 214)."""
    return np.concatenate([encode_tesauro(boards), rich_features(boards)], axis=1)


ENCODINGS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], int]] = {
    "tesauro": (encode_tesauro, 198),
    "rich": (encode_rich, 214),
    "expert": (encode_expert, 218),
}
"""Encoding name -> (encoder, number of input units)."""

FEATURES: dict[str, Callable[[np.ndarray], np.ndarray] | None] = {
    "tesauro": None,
    "rich": rich_features,
    "expert": expert_features,
}
"""Encoding name -> the function of its units after Tesauro's 198 (None: there are none)."""


def extends(name: str, base: str) -> bool:
    """Whether encoding `name` is encoding `base` with more units after it (or the same), so
    that a network of `base` can grow into one of `name` (`vrhcaby.td.Trainer.warm_start`)."""
    order = list(ENCODINGS)  # each encoding is the one before it plus units at the end
    return order.index(name) >= order.index(base)


VARIANT_INPUTS = ("waiting_0", "waiting_1", "rolls_again")
"""The acey-deucey units after the encoding: waiting checkers of row 0 and row 1 (n/15),
and 1 when the side that just moved (row 1) rolls again, 0 when row 0 rolls next."""

WAITING = 25
"""The column of the waiting checkers in an acey-deucey board (N, 2, 26)."""


def _as_boards_ad(boards: np.ndarray) -> np.ndarray:
    boards = np.asarray(boards)
    if boards.ndim != 3 or boards.shape[1:] != (2, 26):
        raise ValueError(f"acey-deucey boards must have shape (N, 2, 26), got {boards.shape}")
    return boards


def waiting_on_bar(boards: np.ndarray) -> np.ndarray:
    """Acey-deucey boards (N, 2, 26) as (N, 2, 25) boards with the waiting checkers on the bar."""
    boards = _as_boards_ad(boards)
    plain = boards[:, :, :WAITING].copy()
    plain[:, :, 24] += boards[:, :, WAITING]
    return plain


def variant_units(boards: np.ndarray, extra_turn: np.ndarray | None = None) -> np.ndarray:
    """The three `VARIANT_INPUTS` of acey-deucey boards (N, 2, 26) -> (N, 3) float32.

    `extra_turn` (N,) bool says which afterstates let their mover roll again (None: none).
    """
    boards = _as_boards_ad(boards)
    out = np.zeros((boards.shape[0], 3), np.float32)
    out[:, :2] = boards[:, :, WAITING] / 15.0
    if extra_turn is not None:
        extra_turn = np.asarray(extra_turn, bool)
        if extra_turn.shape != (boards.shape[0],):
            raise ValueError(
                f"extra_turn must have shape ({boards.shape[0]},), got {extra_turn.shape}"
            )
        out[:, 2] = extra_turn
    return out


def encode_variant(
    name: str, boards: np.ndarray, extra_turn: np.ndarray | None = None
) -> np.ndarray:
    """Encoding `name` plus the variant inputs: (N, 2, 26) -> (N, width + 3) float32.

    The encoding reads each board with its waiting checkers on the bar (`waiting_on_bar`);
    `variant_units` follow.
    """
    encoder = get_encoding(name)[0]
    return np.concatenate(
        [encoder(waiting_on_bar(boards)), variant_units(boards, extra_turn)], axis=1
    )


def get_encoding(name: str) -> tuple[Callable[[np.ndarray], np.ndarray], int]:
    """The encoder and input width called `name`, or a ValueError listing the names."""
    try:
        return ENCODINGS[name]
    except KeyError:
        raise ValueError(f"unknown encoding {name!r} (known: {', '.join(ENCODINGS)})") from None
