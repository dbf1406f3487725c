"""The six-dice scoring game that shares the Czech name *vrhcáby* (RULES.md §3).

Six dice, a throw and up to two re-throws per turn, twelve categories on a score
sheet, bonus throws (*body k dobru*) earned by unused re-throws and spent as extra
re-throws, 2 or more players; and the harsh variant (category announced after the
first throw, no bonus throws).

Scoring and dice probabilities are lookup tables over the 462 sorted outcomes of six
dice (and the 46,656 ordered ones), built once at import, so agents can evaluate every
outcome at once. Dice are a 6-tuple of faces 1..6 and are kept sorted; a *keep* is the
multiset of dice set aside before a re-throw (any sub-multiset of the current dice,
since dice set aside earlier may be taken back).

Interpretations where RULES.md leaves room (documented for users):
- a pair is two equal dice, so four or six of one face count as two or three pairs
  (3,3,3,3,5,5 and 2,2,2,2,2,2 score as *Pairs*), and six of a kind counts as *Poker*;
- a player may write any open category at any stop; one the dice do not show scores 0;
- the game ends when every player has filled all twelve categories.

>>> score((4, 4, 4, 3, 3, 1), "pyramid")
19
>>> score((1, 1, 1, 5, 5, 6), "pyramid")
0
>>> int(score_table((3, 3, 3, 3, 5, 5))[CATEGORIES.index("pairs")])
22
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.text import ascii_int

CATEGORIES: tuple[str, ...] = (
    "ones",
    "twos",
    "threes",
    "fours",
    "fives",
    "sixes",
    "straight",
    "pairs",
    "pyramid",
    "vrchcab",
    "poker",
    "general",
)
"""Category names in score-sheet order; the index into this tuple is the category id."""

CZECH_NAMES: tuple[str, ...] = (
    "jedničky",
    "dvojky",
    "trojky",
    "čtyřky",
    "pětky",
    "šestky",
    "řada",
    "páry",
    "pyramida",
    "vrchcáb",
    "poker",
    "generál",
)
"""The seed's Czech names, in the same order (accepted by `parse_category`)."""

N_CATEGORIES = len(CATEGORIES)
N_DICE = 6
FREE_RETHROWS = 2
"""Re-throws each turn grants; each one not used becomes a bonus point."""

ALL_OPEN = (1 << N_CATEGORIES) - 1
"""Bit mask of the open categories on a fresh sheet (bit i = category i open)."""


class DiceError(ValueError):
    """Dice that are not six faces 1..6 (or a keep that is not among the dice)."""


class RuleError(ValueError):
    """An action the rules forbid: a used category, a re-throw one does not have, ..."""


# --- lookup tables -------------------------------------------------------------------

_FACES = np.arange(1, 7)
_KEY_WEIGHTS = 7 ** np.arange(6)


def _count_key(counts: np.ndarray) -> np.ndarray:
    return np.asarray(counts, dtype=np.int64) @ _KEY_WEIGHTS


def score_counts(counts: np.ndarray) -> np.ndarray:
    """Score of every category for dice given as face counts, shape (..., 6) -> (..., 12)."""
    c = np.asarray(counts, dtype=np.int64)
    total = c @ _FACES
    n1, n2, n3 = ((c == k).sum(-1) for k in (1, 2, 3))
    full = (n1 == 1) & (n2 == 1) & (n3 == 1)
    f1, f2, f3 = (np.argmax(c == k, axis=-1) for k in (1, 2, 3))
    six = (c == 6).any(-1)
    shown = np.stack(
        [
            (c == 1).all(-1),
            (c % 2 == 0).all(-1),
            full & (f3 > f2) & (f2 > f1),
            full & (f3 < f2) & (f2 < f1),
            ((c == 4).any(-1) & (c == 2).any(-1)) | six,
            six,
        ],
        axis=-1,
    )
    out = np.empty((*c.shape[:-1], N_CATEGORIES), dtype=np.int16)
    out[..., :6] = c * _FACES
    out[..., 6:] = shown * total[..., None]
    return out


def _build_tables() -> dict[str, np.ndarray]:
    ordered = np.stack(np.meshgrid(*[_FACES] * N_DICE, indexing="ij"), -1).reshape(-1, N_DICE)
    ordered_counts = (ordered[:, :, None] == _FACES).sum(1)
    keys = _count_key(ordered_counts)
    uniq, ordered_to_sorted, freq = np.unique(keys, return_inverse=True, return_counts=True)
    sorted_counts = ordered_counts[np.unique(ordered_to_sorted, return_index=True)[1]]
    sorted_dice = np.repeat(np.tile(_FACES, (len(uniq), 1)).ravel(), sorted_counts.ravel())
    keeps = np.array(
        [k for k in itertools.product(range(N_DICE + 1), repeat=6) if sum(k) <= N_DICE]
    )
    keeps = keeps[np.lexsort((-_count_key(keeps), keeps.sum(1)))]
    rest = sorted_counts[None, :, :] - keeps[:, None, :]
    thrown = N_DICE - keeps.sum(1)
    fact = np.array([math.factorial(i) for i in range(N_DICE + 1)], dtype=np.float64)
    valid = (rest >= 0).all(-1)
    ways = fact[thrown][:, None] / fact[np.clip(rest, 0, None)].prod(-1)
    key_to_keep = np.full(7**6, -1, dtype=np.int64)
    key_to_keep[_count_key(keeps)] = np.arange(len(keeps))
    return {
        "ordered": ordered.astype(np.int8),
        "ordered_to_sorted": ordered_to_sorted.astype(np.int64),
        "sorted_dice": sorted_dice.reshape(-1, N_DICE).astype(np.int8),
        "sorted_counts": sorted_counts.astype(np.int8),
        "sorted_prob": freq / float(6**N_DICE),
        "keeps": keeps.astype(np.int8),
        "keep_prob": np.where(valid, ways / (6.0**thrown)[:, None], 0.0),
        "key_to_keep": key_to_keep,
        "outcome_key": uniq,
    }


_T = _build_tables()
ORDERED: np.ndarray = _T["ordered"]
"""All 46,656 ordered throws of six dice, int8 (46656, 6)."""
ORDERED_TO_SORTED: np.ndarray = _T["ordered_to_sorted"]
"""Index into the sorted outcomes of each ordered throw, (46656,)."""
OUTCOMES: np.ndarray = _T["sorted_dice"]
"""The 462 sorted outcomes of six dice, int8 (462, 6), ascending faces in each row."""
OUTCOME_COUNTS: np.ndarray = _T["sorted_counts"]
"""Face counts of each sorted outcome, int8 (462, 6)."""
OUTCOME_PROB: np.ndarray = _T["sorted_prob"]
"""Probability of each sorted outcome when all six dice are thrown, (462,)."""
SCORES: np.ndarray = score_counts(OUTCOME_COUNTS)
"""Score of each category for each sorted outcome, int16 (462, 12)."""
KEEPS: np.ndarray = _T["keeps"]
"""The 924 keeps (multisets of 0..6 dice) as face counts, int8 (924, 6), by size."""
KEEP_PROB: np.ndarray = _T["keep_prob"]
"""P(sorted outcome | keep, re-throw the rest), (924, 462); rows sum to 1."""
OUTCOME_AS_KEEP: np.ndarray = _T["key_to_keep"][_T["outcome_key"]]
"""Index in KEEPS of each sorted outcome kept whole, (462,)."""
_KEY_TO_KEEP: np.ndarray = _T["key_to_keep"]
POSSIBLE_SCORES: tuple[frozenset[int], ...] = tuple(
    frozenset({0, *map(int, SCORES[:, c])}) for c in range(N_CATEGORIES)
)
"""The scores each category can hold: what some six dice give it, or 0 (ones: 0, 1, ...
6; straight: 0 or 21; general: 0, 6, 12, ... 36)."""
_OUTCOME_BY_KEY = {int(k): i for i, k in enumerate(_T["outcome_key"])}
del _T


def _sub_keep_children() -> np.ndarray:
    """For each keep, the keeps with one die fewer (itself where the face is absent)."""
    kids = np.repeat(np.arange(len(KEEPS))[:, None], 6, axis=1)
    for f in range(6):
        has = KEEPS[:, f] > 0
        smaller = KEEPS[has].astype(np.int64)
        smaller[:, f] -= 1
        kids[has, f] = _KEY_TO_KEEP[_count_key(smaller)]
    return kids


def _outcome_subkeeps() -> np.ndarray:
    rows = []
    for counts in OUTCOME_COUNTS:
        subs = np.array(list(itertools.product(*[range(c + 1) for c in counts])))
        idx = _KEY_TO_KEEP[_count_key(subs)]
        rows.append(np.pad(idx, (0, 2**N_DICE - len(idx)), mode="edge"))
    return np.array(rows)


SUBKEEPS: np.ndarray = _outcome_subkeeps()
"""(462, 64): the keeps that can be set aside from each outcome (padded by repeats)."""
KEEP_CHILDREN: np.ndarray = _sub_keep_children()
"""(924, 6): keep minus one die of each face (the keep itself if it has none)."""
KEEP_SIZE: np.ndarray = KEEPS.sum(1).astype(np.int64)
"""Number of dice in each keep, (924,)."""


def best_over_subkeeps(values: np.ndarray) -> np.ndarray:
    """Max of `values` (924, ...) over all sub-multisets of each keep, same shape.

    Keeps are ordered by size, so one pass over sizes 1..6 closes the max downward.
    """
    best = np.array(values, dtype=np.float64, copy=True)
    for size in range(1, N_DICE + 1):
        rows = np.flatnonzero(size == KEEP_SIZE)
        best[rows] = np.maximum(best[rows], best[KEEP_CHILDREN[rows]].max(axis=1))
    return best


# --- dice and categories -------------------------------------------------------------


def parse_dice(dice: str | Iterable[int], count: int | None = N_DICE) -> tuple[int, ...]:
    """Dice as a sorted tuple; text like "113456" or "1,1,3,4,5,6"; `count=None` for a keep.

    >>> parse_dice("6 5 4 3 2 1")
    (1, 2, 3, 4, 5, 6)
    """
    if isinstance(dice, str):
        parts = dice.replace(",", " ").split()
        if len(parts) == 1 and len(parts[0]) > 1:
            parts = list(parts[0])
        try:
            faces = [ascii_int(p) for p in parts]
        except ValueError:
            raise DiceError(f"dice must be digits 1-6, got {dice!r}") from None
    else:
        faces = [int(d) for d in dice]
    if count is not None and len(faces) != count:
        raise DiceError(f"expected {count} dice, got {len(faces)}")
    if len(faces) > N_DICE:
        raise DiceError(f"at most {N_DICE} dice, got {len(faces)}")
    bad = [f for f in faces if not 1 <= f <= 6]
    if bad:
        raise DiceError(f"a die shows 1-6, got {bad[0]}")
    return tuple(sorted(faces))


def parse_category(name: str | int) -> int:
    """Category id from an English or Czech name (accents optional) or a number 1..12."""
    if isinstance(name, int | np.integer):
        if 0 <= name < N_CATEGORIES:
            return int(name)
        raise RuleError(f"no category {name}")
    text = name.strip().lower()
    if text.isascii() and text.isdigit() and 1 <= int(text) <= N_CATEGORIES:
        return int(text) - 1
    plain = _strip_accents(text)
    for i, (en, cz) in enumerate(zip(CATEGORIES, CZECH_NAMES, strict=True)):
        if plain in (en, _strip_accents(cz)):
            return i
    raise RuleError(f"unknown category {name!r} (one of: {', '.join(CATEGORIES)})")


def _strip_accents(text: str) -> str:
    return text.translate(str.maketrans("áčďéěíňóřšťúůýž", "acdeeinorstuuyz"))


def outcome_index(dice: Sequence[int]) -> int:
    """Index into OUTCOMES of six dice (any order)."""
    return _OUTCOME_BY_KEY[int(_count_key(_counts(parse_dice(dice))))]


def keep_index(keep: Sequence[int]) -> int:
    """Index into KEEPS of a multiset of up to six dice."""
    return int(_KEY_TO_KEEP[int(_count_key(_counts(parse_dice(keep, count=None))))])


def _counts(dice: Sequence[int]) -> np.ndarray:
    return np.bincount(np.asarray(dice, dtype=np.int64) - 1, minlength=6)


def score_table(dice: Sequence[int]) -> np.ndarray:
    """Score of every category for six dice, int16 (12,)."""
    table: np.ndarray = SCORES[outcome_index(dice)]
    return table


def score(dice: Sequence[int], category: str | int) -> int:
    """Points the dice give in one category (0 when the dice do not show it)."""
    return int(score_table(dice)[parse_category(category)])


def check_score(category: int, points: int) -> None:
    """RuleError unless category `category` can hold `points` (`POSSIBLE_SCORES`): what a
    score sheet given by hand may say.

    >>> try:
    ...     check_score(CATEGORIES.index("ones"), 7)
    ... except RuleError as err:
    ...     print(err)
    ones scores one of 0, 1, 2, 3, 4, 5, 6; got 7
    """
    if points not in POSSIBLE_SCORES[category]:
        allowed = ", ".join(map(str, sorted(POSSIBLE_SCORES[category])))
        raise RuleError(f"{CATEGORIES[category]} scores one of {allowed}; got {points}")


def open_mask(open_categories: Iterable[int]) -> int:
    """Bit mask of a set of category ids."""
    return sum(1 << c for c in set(open_categories))


def mask_categories(mask: int) -> tuple[int, ...]:
    """Category ids in a bit mask, ascending."""
    return tuple(c for c in range(N_CATEGORIES) if mask >> c & 1)


# --- the game ------------------------------------------------------------------------


@dataclass
class Sheet:
    """One player's score sheet: a score per category (None while open) and bonus points."""

    scores: list[int | None] = field(default_factory=lambda: [None] * N_CATEGORIES)
    bonus: int = 0

    @property
    def open(self) -> int:
        """Bit mask of the open categories."""
        return open_mask(c for c, s in enumerate(self.scores) if s is None)

    @property
    def full(self) -> bool:
        return all(s is not None for s in self.scores)

    @property
    def total(self) -> int:
        """Points written plus unspent bonus points (the final total once the sheet is full)."""
        return sum(s for s in self.scores if s is not None) + self.bonus


@dataclass(frozen=True)
class TurnView:
    """What a player sees when deciding: its dice, sheet and re-throws, and the others."""

    dice: tuple[int, ...]
    open: int
    bonus: int
    free_rethrows: int
    throw: int
    harsh: bool
    announced: int | None
    player: int
    totals: tuple[int, ...]

    @property
    def rethrows_left(self) -> int:
        """Re-throws available now: the free ones left plus, outside the harsh game, bonus."""
        return self.free_rethrows + (0 if self.harsh else self.bonus)


class Game:
    """A game for `n_players` taking turns; dice come from the injected generator.

    The current player's first throw is made when its turn begins, so a game always
    has dice on the table until it is over. Actions: `rethrow(keep)`, `score(category)`
    and, in the harsh variant, `announce(category)` right after the first throw.
    """

    def __init__(self, n_players: int, rng: np.random.Generator, harsh: bool = False) -> None:
        if n_players < 1:
            raise RuleError("a game needs at least one player")
        self.rng = rng
        self.harsh = harsh
        self.sheets = [Sheet() for _ in range(n_players)]
        self.player = 0
        self.turns = 0
        self.dice: tuple[int, ...] = ()
        self.free_rethrows = FREE_RETHROWS
        self.throw = 0
        self.announced: int | None = None
        self._start_turn()

    @property
    def over(self) -> bool:
        return all(s.full for s in self.sheets)

    @property
    def sheet(self) -> Sheet:
        """The sheet of the player on turn."""
        return self.sheets[self.player]

    def view(self) -> TurnView:
        return TurnView(
            dice=self.dice,
            open=self.sheet.open,
            bonus=self.sheet.bonus,
            free_rethrows=self.free_rethrows,
            throw=self.throw,
            harsh=self.harsh,
            announced=self.announced,
            player=self.player,
            totals=tuple(s.total for s in self.sheets),
        )

    def winners(self) -> list[int]:
        """Players with the highest total (several on a tie)."""
        best = max(s.total for s in self.sheets)
        return [i for i, s in enumerate(self.sheets) if s.total == best]

    def _roll(self, n: int) -> tuple[int, ...]:
        return tuple(int(x) for x in self.rng.integers(1, 7, size=n))

    def _start_turn(self) -> None:
        self.dice = tuple(sorted(self._roll(N_DICE)))
        self.free_rethrows = FREE_RETHROWS
        self.throw = 1
        self.announced = None

    def _check_live(self) -> None:
        if self.over:
            raise RuleError("the game is over")

    def announce(self, category: str | int) -> None:
        """Harsh variant: name the category this turn plays for (after the first throw)."""
        self._check_live()
        if not self.harsh:
            raise RuleError("categories are announced only in the harsh variant")
        if self.announced is not None:
            raise RuleError("a category is already announced this turn")
        c = parse_category(category)
        if self.sheet.scores[c] is not None:
            raise RuleError(f"category {CATEGORIES[c]} is already used")
        self.announced = c

    def rethrow(self, keep: str | Iterable[int]) -> tuple[int, ...]:
        """Set `keep` aside (a sub-multiset of the dice) and throw the others; new dice."""
        self._check_live()
        kept = parse_dice(keep, count=None)
        if self.harsh and self.announced is None:
            raise RuleError("announce a category before re-throwing")
        remaining = list(self.dice)
        for d in kept:
            if d not in remaining:
                raise DiceError(f"cannot keep {kept}: the dice are {self.dice}")
            remaining.remove(d)
        if self.free_rethrows > 0:
            self.free_rethrows -= 1
        elif self.harsh:
            raise RuleError("no re-throws left (the harsh variant allows two)")
        elif self.sheet.bonus > 0:
            self.sheet.bonus -= 1
        else:
            raise RuleError("no re-throws left and no bonus throws to spend")
        self.dice = tuple(sorted(kept + self._roll(N_DICE - len(kept))))
        self.throw += 1
        return self.dice

    def score(self, category: str | int | None = None) -> int:
        """Write the dice in a category (the announced one in the harsh game); the points.

        Unused free re-throws become bonus points (not in the harsh game); the next
        player's turn then begins.
        """
        self._check_live()
        if self.harsh:
            if self.announced is None:
                raise RuleError("announce a category first")
            c = self.announced if category is None else parse_category(category)
            if c != self.announced:
                raise RuleError(f"the announced category is {CATEGORIES[self.announced]}")
        elif category is None:
            raise RuleError("name a category to score")
        else:
            c = parse_category(category)
        if self.sheet.scores[c] is not None:
            raise RuleError(f"category {CATEGORIES[c]} is already used")
        points = int(score_table(self.dice)[c])
        self.sheet.scores[c] = points
        if not self.harsh:
            self.sheet.bonus += self.free_rethrows
        self.turns += 1
        self.player = (self.player + 1) % len(self.sheets)
        if not self.over:
            self._start_turn()
        return points
