"""Rules and scoring of the six-dice game against a plain reference written from RULES.md."""

from __future__ import annotations

import itertools
from collections import Counter
from math import factorial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import sixdice as sd

NAMES = sd.CATEGORIES


def ref_score(dice: tuple[int, ...], name: str) -> int:
    """RULES.md §3 table, read literally, one category at a time."""
    d = sorted(dice)
    total = sum(d)
    faces = ["ones", "twos", "threes", "fours", "fives", "sixes"]
    if name in faces:
        f = faces.index(name) + 1
        return f * d.count(f)
    if name == "straight":
        return 21 if d == [1, 2, 3, 4, 5, 6] else 0
    if name == "pairs":  # a pair is two equal dice: sorted dice pair off
        return total if d[0] == d[1] and d[2] == d[3] and d[4] == d[5] else 0
    shapes = {
        "pyramid": lambda a, b, c: a > b > c,
        "vrchcab": lambda a, b, c: a < b < c,
    }
    if name in shapes:
        for a, b, c in itertools.permutations(range(1, 7), 3):
            if shapes[name](a, b, c) and sorted([a] * 3 + [b] * 2 + [c]) == d:
                return total
        return 0
    if name == "poker":
        for a, b in itertools.product(range(1, 7), repeat=2):
            if sorted([a] * 4 + [b] * 2) == d:
                return total
        return 0
    assert name == "general"
    return total if len(set(d)) == 1 else 0


# Hand-checked cases: RULES.md's examples and the edge cases it names.
HAND = [
    ((2, 2, 5, 5, 6, 6), "pairs", 26),
    ((3, 3, 3, 3, 5, 5), "pairs", 22),  # four of a face counts as two pairs
    ((3, 3, 3, 3, 5, 5), "poker", 22),
    ((2, 2, 2, 2, 2, 2), "pairs", 12),
    ((1, 1, 4, 4, 5, 5), "pairs", 20),
    ((1, 1, 4, 4, 5, 6), "pairs", 0),
    ((4, 4, 4, 3, 3, 1), "pyramid", 19),
    ((6, 6, 6, 3, 3, 2), "pyramid", 26),
    ((4, 4, 4, 3, 3, 1), "vrchcab", 0),
    ((1, 1, 1, 5, 5, 6), "vrchcab", 19),
    ((4, 4, 4, 5, 5, 6), "vrchcab", 28),
    ((1, 1, 1, 5, 5, 6), "pyramid", 0),
    ((1, 1, 1, 6, 6, 5), "vrchcab", 0),  # pair above the single: neither shape
    ((1, 1, 1, 6, 6, 5), "pyramid", 0),
    ((4, 4, 4, 1, 1, 3), "pyramid", 0),  # pair below the single
    ((4, 4, 4, 4, 1, 1), "poker", 18),
    ((2, 2, 2, 2, 5, 5), "poker", 18),
    ((2, 2, 2, 2, 5, 6), "poker", 0),
    ((6, 6, 6, 6, 6, 6), "general", 36),
    ((6, 6, 6, 6, 6, 6), "poker", 36),
    ((6, 6, 6, 6, 6, 6), "sixes", 36),
    ((6, 6, 6, 6, 6, 5), "general", 0),
    ((6, 5, 4, 3, 2, 1), "straight", 21),
    ((1, 2, 3, 4, 5, 5), "straight", 0),
    ((1, 1, 3, 4, 5, 6), "ones", 2),
    ((2, 2, 3, 4, 5, 6), "ones", 0),
    ((5, 5, 5, 1, 2, 3), "fives", 15),
]


@pytest.mark.parametrize(("dice", "name", "points"), HAND)
def test_hand_checked_scores(dice: tuple[int, ...], name: str, points: int) -> None:
    assert sd.score(dice, name) == points
    assert ref_score(dice, name) == points


def test_every_outcome_scores_as_the_reference() -> None:
    for i, dice in enumerate(sd.OUTCOMES):
        expected = [ref_score(tuple(int(x) for x in dice), n) for n in NAMES]
        assert list(sd.SCORES[i]) == expected, dice


def test_ordered_throws_map_to_their_sorted_outcome_with_right_probability() -> None:
    assert len(sd.ORDERED) == 6**6 and len(sd.OUTCOMES) == 462
    throws = list(itertools.product(range(1, 7), repeat=6))
    assert sorted(map(tuple, sd.ORDERED.tolist())) == throws
    np.testing.assert_array_equal(sd.OUTCOMES[sd.ORDERED_TO_SORTED], np.sort(sd.ORDERED, 1))
    freq = Counter(tuple(sorted(t)) for t in throws)
    for i, dice in enumerate(sd.OUTCOMES):
        assert sd.OUTCOME_PROB[i] == pytest.approx(freq[tuple(dice.tolist())] / 6**6)
    # Score lookup over ordered throws equals scoring the sorted dice.
    np.testing.assert_array_equal(
        sd.SCORES[sd.ORDERED_TO_SORTED],
        sd.score_counts((sd.ORDERED[:, :, None] == np.arange(1, 7)).sum(1)),
    )


def test_keep_transitions_match_enumerated_rethrows() -> None:
    rng = np.random.default_rng(5)
    assert sd.KEEP_PROB.sum(1) == pytest.approx(np.ones(len(sd.KEEPS)))
    for k in rng.choice(len(sd.KEEPS), size=25, replace=False):
        kept = [f + 1 for f in range(6) for _ in range(sd.KEEPS[k, f])]
        rolls = list(itertools.product(range(1, 7), repeat=6 - len(kept)))
        freq = Counter(tuple(sorted(kept + list(r))) for r in rolls)
        expected = np.zeros(462)
        for dice, n in freq.items():
            expected[sd.outcome_index(dice)] = n / len(rolls)
        np.testing.assert_allclose(sd.KEEP_PROB[k], expected, atol=1e-15)


def test_subkeeps_and_their_max_match_brute_force() -> None:
    rng = np.random.default_rng(6)
    values = rng.normal(size=len(sd.KEEPS))
    best = sd.best_over_subkeeps(values)
    for o in rng.choice(462, size=40, replace=False):
        dice = [int(x) for x in sd.OUTCOMES[o]]
        subs = {tuple(sorted(c)) for r in range(7) for c in itertools.combinations(dice, r)}
        idx = {sd.keep_index(s) for s in subs}
        assert set(sd.SUBKEEPS[o].tolist()) == idx
        assert best[sd.OUTCOME_AS_KEEP[o]] == max(values[i] for i in idx)


def test_multinomial_sizes() -> None:
    sizes = np.bincount(sd.KEEPS.sum(1))
    assert sizes.tolist() == [factorial(k + 5) // (factorial(k) * 120) for k in range(7)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=6, max_size=6), st.sampled_from(NAMES))
def test_score_property(dice: list[int], name: str) -> None:
    assert sd.score(dice, name) == ref_score(tuple(dice), name)
    assert sd.parse_dice("".join(map(str, dice))) == tuple(sorted(dice))
    assert sd.parse_dice(",".join(map(str, dice))) == tuple(sorted(dice))


@pytest.mark.parametrize(
    ("text", "message"),
    [("1234567", "expected 6 dice"), ("123457", "1-6, got 7"), ("12x456", "digits"), ("", "6")],
)
def test_bad_dice(text: str, message: str) -> None:
    with pytest.raises(sd.DiceError, match=message):
        sd.parse_dice(text)


def test_category_names() -> None:
    assert sd.parse_category("Vrchcáb") == sd.parse_category("vrchcab") == 9
    assert sd.parse_category("řada") == sd.parse_category("straight") == 6
    assert sd.parse_category("generál") == 11
    assert sd.parse_category("1") == 0
    with pytest.raises(sd.RuleError, match="unknown category"):
        sd.parse_category("yahtzee")


# --- the game ------------------------------------------------------------------------


def test_stopping_early_banks_unused_rethrows_and_bonus_is_spent() -> None:
    game = sd.Game(1, np.random.default_rng(1))
    dice = game.dice
    assert game.score("ones") == ref_score(dice, "ones")
    assert game.sheet.bonus == 2  # stopped after the first throw
    game.rethrow(game.dice[:3])
    game.score("twos")
    assert game.sheet.bonus == 3
    game.rethrow([])
    game.rethrow([])
    game.rethrow([])  # a third re-throw spends a bonus point
    assert game.sheet.bonus == 2 and game.throw == 4
    game.rethrow([])
    game.rethrow([])
    assert game.sheet.bonus == 0
    with pytest.raises(sd.RuleError, match="no bonus throws"):
        game.rethrow([])
    dice = game.dice
    assert game.score("straight") == ref_score(dice, "straight")
    assert game.sheet.total == sum(s for s in game.sheet.scores if s is not None)


def test_rethrow_keeps_the_dice_set_aside() -> None:
    game = sd.Game(2, np.random.default_rng(2))
    kept = game.dice[:4]
    new = game.rethrow(kept)
    assert len(new) == 6 and not Counter(kept) - Counter(new)
    # dice set aside after the first throw may be taken back in the third
    game.rethrow(new[:1])
    with pytest.raises(sd.DiceError, match="cannot keep"):
        game.rethrow([7 - game.dice[0]] * 6 if len(set(game.dice)) > 1 else [0])


def test_bad_actions() -> None:
    game = sd.Game(2, np.random.default_rng(3))
    with pytest.raises(sd.DiceError, match="at most 6"):
        game.rethrow("1111111")
    with pytest.raises(sd.DiceError, match="1-6"):
        game.rethrow("7")
    game.score("poker")
    game.score("poker")  # the second player's own sheet
    with pytest.raises(sd.RuleError, match="already used"):
        game.score("poker")
    with pytest.raises(sd.RuleError, match="harsh"):
        game.announce("ones")


def test_full_game_totals_count_unspent_bonus_and_winner() -> None:
    rng = np.random.default_rng(4)
    game = sd.Game(3, rng)
    written = [[0] * 12 for _ in range(3)]
    while not game.over:
        p = game.player
        c = 12 - bin(game.sheet.open).count("1")
        if c % 2:
            game.rethrow(game.dice[:2])
        written[p][c] = ref_score(game.dice, NAMES[c])
        assert game.score(c) == written[p][c]
    assert game.turns == 36
    for p, sheet in enumerate(game.sheets):
        assert sheet.scores == written[p]
        assert sheet.bonus == 6 * 2 + 6 * 1
        assert sheet.total == sum(written[p]) + 18
    best = max(s.total for s in game.sheets)
    assert game.winners() == [p for p in range(3) if game.sheets[p].total == best]
    with pytest.raises(sd.RuleError, match="over"):
        game.score(0)


def test_harsh_variant() -> None:
    game = sd.Game(1, np.random.default_rng(5), harsh=True)
    with pytest.raises(sd.RuleError, match="announce"):
        game.rethrow([])
    with pytest.raises(sd.RuleError, match="announce"):
        game.score("ones")
    game.announce("general")
    with pytest.raises(sd.RuleError, match="announced category is general"):
        game.score("ones")
    game.rethrow([])
    game.rethrow([])
    with pytest.raises(sd.RuleError, match="harsh variant allows two"):
        game.rethrow([])
    dice = game.dice
    assert game.score() == ref_score(dice, "general")
    assert game.sheets[0].bonus == 0
    game.announce("ones")
    dice = game.dice
    assert game.score() == ref_score(dice, "ones")
    assert game.sheets[0].bonus == 0
