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
- ``contact`` (256 units): ``expert`` plus 19 units per side after GNU Backgammon's contact
  inputs (`contact_features`): breaking contact, timing, anchors, escapes and containment,
  mobility, entering from the bar, backbone and back game.
- ``race`` (228 units): ``tesauro`` plus 15 units per side after GNU Backgammon's race
  inputs (`race_features`): the checkers borne off as 14 separate units and the
  crossovers still to make; the race network of a network set (`vrhcaby.nn.netset`).

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

from vrhcaby.base.jit import in_numpy, lazy_jit

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
    boards: np.ndarray, in_plain_numpy: Callable | None, kernel: Callable, width: int
) -> np.ndarray:
    """Features (N, width) float32 of `boards`: `in_plain_numpy` for a small batch while
    numba is not loaded (`vrhcaby.base.jit.in_numpy`), else (or with no numpy twin) `kernel`,
    which fills its output."""
    boards = _as_boards(boards)
    if in_plain_numpy is not None and in_numpy(boards.shape[0]):
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


_CONTACT_NAMES = (
    "break_contact",
    "free_pips",
    "timing",
    "back_checker",
    "back_anchor",
    "forward_anchor",
    "back_escapes",
    "back_escapes_past",
    "active_containment",
    "active_containment_squared",
    "containment",
    "containment_squared",
    "mobility",
    "second_moment",
    "enter_loss",
    "enter_blocked",
    "backbone",
    "back_game",
    "lone_anchor",
)
CONTACT_FEATURES = tuple(f"{name}_{row}" for row in (0, 1) for name in _CONTACT_NAMES)
"""Names of the units the `contact` encoding adds to `expert`: the 19 of row 0, then row 1."""


def _escape_tables() -> tuple[np.ndarray, np.ndarray]:
    """Rolls (of 36) that move a checker by their total, for each 12-bit mask of made
    points ahead of it (bit k: the point k + 1 pips ahead): the landing point open and at
    least one die's point open. Second table: the same, counting only the rolls whose
    total carries past the nearest made point (0 with none)."""
    masks = np.arange(1 << 12)
    lowest = np.full(1 << 12, 12)  # the lowest set bit; 12 for none
    for bit in range(11, -1, -1):
        lowest[(masks >> bit) & 1 == 1] = bit
    free = np.zeros(1 << 12, np.int64)
    past = np.zeros(1 << 12, np.int64)
    for d1 in range(1, 7):
        for d2 in range(d1, 7):
            weight = 1 if d1 == d2 else 2
            land = (masks >> (d1 + d2 - 1)) & 1 == 0
            passage = ((masks >> (d1 - 1)) & (masks >> (d2 - 1)) & 1) == 0
            moves = land & passage
            free += weight * moves
            past += weight * (moves & (d1 + d2 - 1 > lowest))
    return free, past


_ESCAPES, _ESCAPES_PAST = _escape_tables()


def contact_features(boards: np.ndarray) -> np.ndarray:
    """GNU Backgammon's contact inputs, as this project defines them: (N, 2, 25) -> (N, 38)
    float32, the `CONTACT_FEATURES`, 19 per row.

    Notation, for one row ("we") and the other row ("they"), each in its own view: c[i]
    our checkers and o[i] theirs at index i (0..23 = points 1..24, 24 = the bar). Their
    index j is our index 23 - j. R = the index of their rearmost checker, B = ours (-1 when
    a side has none). made(x) = x >= 2.

    escapes(board, n), for a checker at index n of its own view facing the other side's
    `board` (in that side's view): bit k (k < min(n, 12)) of a mask is set when
    made(board[24 + k - n]), the point k + 1 pips ahead of the checker; the count, out
    of 36, of the rolls d1, d2 (a double once, others twice) whose landing point d1 + d2
    ahead is clear (bit d1 + d2 - 1, bits at or past min(n, 12) always clear) and whose
    points d1 and d2 ahead are not both set; n <= 0 gives 36. escapes_past(board, n)
    counts the same rolls only when d1 + d2 - 1 > the lowest set bit, and is 0 for an
    empty mask: rolls that carry past the nearest block.

    The 19 units of a row, in order:

    - break_contact: sum over i >= 24 - R of c[i] * (i + R - 22), / 167 (1 at the start):
      the pips our checkers need to pass their rearmost one.
    - free_pips: sum over i < 23 - R of c[i] * (i + 1), / 100: our pips already past them.
    - timing: GNU Backgammon's count of the pips we can play before our home board
      breaks, / 100. With m = max(23 - R, 11), t = 24 c[24] and spare = c[24]: for i
      from 23 down to m + 1 with c[i] > 0 and c[i] != 2, k = c[i] - 2 if c[i] > 2 else 1
      checkers are spare (spare += k, t += i k); for i from min(m, 23) down to 6,
      spare += c[i], t += i c[i]; for i from 5 down to 0: c[i] > 2 adds k = c[i] - 2
      (spare += k, t += i k), c[i] < 2 needs k = 2 - c[i] and, if spare >= k, takes them
      (spare -= k, t -= i k). Then max(t, 0) / 100.
    - back_checker: B / 24.
    - back_anchor: A / 24, A the highest i <= min(B, 23) with made(c[i]) (-1 if none).
    - forward_anchor: the smallest j in 18..23 with made(c[j]), (24 - j) / 6; failing
      that the largest j in 12..17 with made(c[j]), (24 - j) / 6; failing that 2.
    - back_escapes: escapes(c, R) / 36: how freely their rearmost checker gets out.
    - back_escapes_past: escapes_past(c, R) / 36.
    - active_containment: (36 - the least escapes(c, n) over n = 15..R) / 36, 0 for an
      empty range; active_containment_squared: its square.
    - containment: (36 - the least escapes(c, n) over n = 15..23) / 36; containment_squared:
      its square.
    - mobility: sum over i = 6..24 of (i - 5) * c[i] * escapes(o, i), / 3600.
    - second_moment: with a = ceil(sum i c[i] / sum c[i]) over i = 0..24 (0 with no
      checkers), ceil(sum c[i] (i - a)^2 / sum c[i]) over i = a + 1..24 (0 with none
      there), / 400: how far our stragglers lag behind our average.
    - enter_loss: 0 unless c[24] > 0; else the pips of dice lost because our bar checkers
      cannot enter, summed over the 36 rolls, / (36 * 49 / 6). A die d is closed when
      made(o[d - 1]). A closed double loses 4 d; a non-double (both orders) with both dice
      closed loses their sum; with one closed, it loses that die when c[24] >= 2.
    - enter_blocked: (36 - (6 - h)^2) / 36, h their made points among o[0..5]: the chance
      that a checker of ours on the bar would find at least one die closed.
    - backbone: P = the highest i in 1..23 with made(c[i]); over the other made points
      i in 1..P - 1, the mean of 11 when P - i <= 6, 13 - (P - i) when it is 7..11, else 0;
      backbone = 1 - mean / 11 (0 when there is no other made point).
    - back_game: with a = our made points among i = 18..23 and s = sum c[18..24]:
      (s - 3) / 4 when a >= 2, else 0.
    - lone_anchor: s / 8 when a == 1, else 0.

    A numba kernel computes them (there is no plain-numpy twin, so this encoding loads
    numba even for one position).
    """
    return _computed(boards, None, _contact_call, len(CONTACT_FEATURES))


def _contact_call(boards: np.ndarray, out: np.ndarray) -> None:
    _contact_kernel(boards, out, _ESCAPES, _ESCAPES_PAST)


@lazy_jit(fastmath=False)
def _contact_kernel(boards, out, escapes, escapes_past):  # pragma: no cover - numba
    """`contact_features` one board and row at a time, into `out` (N, 38)."""

    def blocks(board, n):  # the mask of made points ahead of a checker at index n
        mask = 0
        for k in range(min(n, 12)):
            if board[24 + k - n] >= 2:
                mask |= 1 << k
        return mask

    for r in range(boards.shape[0]):
        for row in range(2):
            c, o = boards[r, row], boards[r, 1 - row]
            their_back = -1
            back = -1
            for i in range(25):
                if o[i] > 0:
                    their_back = i
                if c[i] > 0:
                    back = i
            col = 19 * row
            brk = free = 0
            for i in range(25):
                if i >= 24 - their_back:
                    brk += c[i] * (i + their_back - 22)
                elif i < 23 - their_back:
                    free += c[i] * (i + 1)
            out[r, col] = brk / 167.0
            out[r, col + 1] = free / 100.0
            m = max(23 - their_back, 11)
            spare = np.int64(c[24])
            t = 24 * spare
            i = 23
            while i > m:
                if c[i] > 0 and c[i] != 2:
                    k = c[i] - 2 if c[i] > 2 else 1
                    spare += k
                    t += i * k
                i -= 1
            while i >= 6:
                spare += c[i]
                t += i * c[i]
                i -= 1
            for i in range(5, -1, -1):
                if c[i] > 2:
                    spare += c[i] - 2
                    t += i * (c[i] - 2)
                elif c[i] < 2:
                    k = 2 - c[i]
                    if spare >= k:
                        spare -= k
                        t -= i * k
            out[r, col + 2] = max(t, 0) / 100.0
            out[r, col + 3] = back / 24.0
            anchor = -1
            for i in range(min(back, 23), -1, -1):
                if c[i] >= 2:
                    anchor = i
                    break
            out[r, col + 4] = anchor / 24.0
            forward = 2.0
            for j in range(18, 24):
                if c[j] >= 2:
                    forward = (24 - j) / 6.0
                    break
            if forward == 2.0:
                for j in range(17, 11, -1):
                    if c[j] >= 2:
                        forward = (24 - j) / 6.0
                        break
            out[r, col + 5] = forward
            mask = blocks(c, their_back)
            out[r, col + 6] = escapes[mask] / 36.0
            out[r, col + 7] = escapes_past[mask] / 36.0
            least_active = least = 36
            for n in range(15, 25):
                ways = escapes[blocks(c, n)]
                if n <= their_back:
                    least_active = min(least_active, ways)
                if n <= 23:
                    least = min(least, ways)
            out[r, col + 8] = (36 - least_active) / 36.0
            out[r, col + 9] = out[r, col + 8] ** 2
            out[r, col + 10] = (36 - least) / 36.0
            out[r, col + 11] = out[r, col + 10] ** 2
            mobility = 0
            for i in range(6, 25):
                if c[i] > 0:
                    mobility += (i - 5) * c[i] * escapes[blocks(o, i)]
            out[r, col + 12] = mobility / 3600.0
            total = weighted = 0
            for i in range(25):
                total += c[i]
                weighted += i * c[i]
            mean = (weighted + total - 1) // total if total else 0
            total = spread = 0
            for i in range(mean + 1, 25):
                total += c[i]
                spread += c[i] * (i - mean) ** 2
            out[r, col + 13] = ((spread + total - 1) // total if total else 0) / 400.0
            loss = 0
            if c[24] > 0:
                for d1 in range(1, 7):
                    closed1 = o[d1 - 1] >= 2
                    if closed1:
                        loss += 4 * d1
                    for d2 in range(d1 + 1, 7):
                        closed2 = o[d2 - 1] >= 2
                        if closed1 and closed2:
                            loss += 2 * (d1 + d2)
                        elif closed1 and c[24] >= 2:
                            loss += 2 * d1
                        elif closed2 and c[24] >= 2:
                            loss += 2 * d2
            out[r, col + 14] = loss / (36.0 * 49.0 / 6.0)
            closed = 0
            for i in range(6):
                closed += o[i] >= 2
            out[r, col + 15] = (36 - (6 - closed) ** 2) / 36.0
            top = -1
            for i in range(23, 0, -1):
                if c[i] >= 2:
                    top = i
                    break
            support = points = 0
            for i in range(1, max(top, 0)):
                if c[i] >= 2:
                    d = top - i
                    support += 11 if d <= 6 else (13 - d if d <= 11 else 0)
                    points += 1
            out[r, col + 16] = 1.0 - support / (11.0 * points) if points else 0.0
            anchors = 0
            stack = np.int64(c[24])
            for i in range(18, 24):
                anchors += c[i] >= 2
                stack += c[i]
            out[r, col + 17] = (stack - 3) / 4.0 if anchors >= 2 else 0.0
            out[r, col + 18] = stack / 8.0 if anchors == 1 else 0.0


def expert_features(boards: np.ndarray) -> np.ndarray:
    """The `rich_features` followed by the `shots`: (N, 2, 25) -> (N, 20) float32."""
    return np.concatenate([rich_features(boards), shots(boards)], axis=1)


def encode_expert(boards: np.ndarray) -> np.ndarray:
    """Tesauro's 198 units followed by the 20 `expert_features`: (N, 2, 25) -> (N, 218)."""
    return np.concatenate([encode_tesauro(boards), expert_features(boards)], axis=1)


def contact_all(boards: np.ndarray) -> np.ndarray:
    """The `expert_features` followed by the `contact_features`: (N, 2, 25) -> (N, 58)."""
    return np.concatenate([expert_features(boards), contact_features(boards)], axis=1)


def encode_contact(boards: np.ndarray) -> np.ndarray:
    """Tesauro's 198 units followed by the 58 `contact_all` features: (N, 2, 25) -> (N, 256)."""
    return np.concatenate([encode_tesauro(boards), contact_all(boards)], axis=1)


def encode_rich(boards: np.ndarray) -> np.ndarray:
    """Tesauro's 198 units followed by the 16 `rich_features`: (N, 2, 25) -> (N, 214)."""
    return np.concatenate([encode_tesauro(boards), rich_features(boards)], axis=1)


RACE_FEATURES = (
    *(f"off_{k}_0" for k in range(1, 15)),
    "crossovers_0",
    *(f"off_{k}_1" for k in range(1, 15)),
    "crossovers_1",
)
"""Names of the `race` units after Tesauro's 198, in order (suffix = board row)."""

#: _CROSSINGS[i] = the home-ward quadrant boundaries a checker on index i (0..23 = points
#: 1..24, 24 = the bar) still has to cross: 0 at home, 1 on points 7-12, 2 on 13-18, 3 on
#: 19-24 (and, outside a race, 4 from the bar).
_CROSSINGS = (np.arange(25) // 6).astype(np.int32)
_OFF_THRESHOLDS = np.arange(1, 15, dtype=np.int32)


def race_features(boards: np.ndarray) -> np.ndarray:
    """GNU Backgammon's race inputs beyond the point units, as this project defines them:
    (N, 2, 25) -> (N, 30) float32, the `RACE_FEATURES`, 15 per row.

    Per row, from its own view, with `off` = 15 - its checkers on the board: 14 units,
    unit k (k = 1..14) 1 when at least k checkers are off, else 0 (GNU Backgammon's
    ``RI_OFF``, as a thermometer: a race is often decided by one checker more or less off,
    which one unit of off/15 hardly tells apart); then the crossovers, the sum over its
    checkers of the quadrant boundaries each still has to cross to reach home (points
    7-12 one, 13-18 two, 19-24 three, the bar four), / 10 (``RI_NCROSS``): how many
    checkers still have to come in, which the pip count alone does not say. Tesauro's four
    truncated units per point (1, 2, 3 and (n - 3) / 2 checkers) before them are the point
    inputs, as in GNU Backgammon's race net (whose second unit says "exactly 2", an
    equivalent basis); keeping Tesauro's layout first lets the evaluator's table-driven
    first layer (`vrhcaby.nn.net.Evaluator`) serve race networks unchanged.

    Whole-batch numpy: two table look-ups and a comparison, no numba needed.
    """
    boards = _as_boards(boards)
    counts = boards.astype(np.int32)
    out = np.empty((boards.shape[0], len(RACE_FEATURES)), np.float32)
    off = 15 - counts.sum(axis=2)  # (N, 2)
    crossings = counts @ _CROSSINGS  # (N, 2)
    for row in (0, 1):
        col = 15 * row
        out[:, col : col + 14] = off[:, row, None] >= _OFF_THRESHOLDS
        out[:, col + 14] = crossings[:, row] / 10.0
    return out


def encode_race(boards: np.ndarray) -> np.ndarray:
    """Tesauro's 198 units followed by the 30 `race_features`: (N, 2, 25) -> (N, 228)."""
    return np.concatenate([encode_tesauro(boards), race_features(boards)], axis=1)


ENCODINGS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], int]] = {
    "tesauro": (encode_tesauro, 198),
    "rich": (encode_rich, 214),
    "expert": (encode_expert, 218),
    "contact": (encode_contact, 256),
    "race": (encode_race, 228),
}
"""Encoding name -> (encoder, number of input units)."""

FEATURES: dict[str, Callable[[np.ndarray], np.ndarray] | None] = {
    "tesauro": None,
    "rich": rich_features,
    "expert": expert_features,
    "contact": contact_all,
    "race": race_features,
}
"""Encoding name -> the function of its units after Tesauro's 198 (None: there are none)."""

_GROWS_FROM: dict[str, str | None] = {
    "tesauro": None,
    "rich": "tesauro",
    "expert": "rich",
    "contact": "expert",
    "race": "tesauro",
}
"""Encoding name -> the encoding it is, with units added at the end (None: none)."""


def extends(name: str, base: str) -> bool:
    """Whether encoding `name` is encoding `base` with more units after it (or the same), so
    that a network of `base` can grow into one of `name`
    (`vrhcaby.learn.trainer.Trainer.warm_start`)."""
    step: str | None = name
    while step is not None:
        if step == base:
            return True
        step = _GROWS_FROM[step]
    return False


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
