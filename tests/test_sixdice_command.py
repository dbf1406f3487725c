"""`vrhcaby dice ...`: hints checked against hand-derived values, bad input, scripted play."""

from __future__ import annotations

import argparse
import io

import numpy as np
import pytest

from engine import sixdice as sd
from vrhcaby.cli import dice
from vrhcaby.sixdice import players as agents_sixdice


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory: pytest.TempPathFactory):
    """Tables computed here go to a temporary cache, not the user's."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        yield


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="vrhcaby")
    dice.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["dice", *argv])


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    args = parse(argv)
    assert args.func(args) == 0
    return capsys.readouterr().out


#: A score each category can hold (`--sheet` refuses the others).
SHEET = {
    "ones": 3,
    "twos": 4,
    "threes": 6,
    "fours": 8,
    "fives": 10,
    "sixes": 12,
    "straight": 21,
    "pairs": 20,
    "pyramid": 19,
    "vrchcab": 19,
    "poker": 20,
    "general": 30,
}


def sheet_all_but(*open_names: str) -> str:
    return ",".join(f"{n}={SHEET[n]}" for n in sd.CATEGORIES if n not in open_names)


def written_all_but(*open_names: str) -> int:
    return sum(v for n, v in SHEET.items() if n not in open_names)


def test_hint_last_category_straight_made(capsys: pytest.CaptureFixture[str]) -> None:
    # Eleven categories written; the straight is on the table at the first throw: score
    # it (21) and bank both re-throws, plus the 4 bonus points held.
    out = run(["hint", "654321", "--sheet", sheet_all_but("straight"), "--bonus", "4"], capsys)
    best = out.splitlines()[1]
    total = written_all_but("straight") + 21 + 2 + 4
    assert best == f"score straight: expected final total {total:.2f}"


def test_hint_last_category_ones(capsys: pytest.CaptureFixture[str]) -> None:
    # Ones alone: a re-throw costs a bonus point and gains at most 5/6 of a point.
    out = run(["hint", "113456", "--sheet", sheet_all_but("ones"), "--throw", "2"], capsys)
    total = written_all_but("ones") + 2 + 1
    assert out.splitlines()[1] == f"score ones: expected final total {total:.2f}"


def test_hint_harsh_announce(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(["hint", "111556", "--harsh", "--sheet", sheet_all_but("vrchcab")], capsys)
    total = written_all_but("vrchcab") + 19
    assert out.splitlines()[1] == f"announce vrchcab: expected final total {total:.2f}"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["hint", "1234561"], "expected 6 dice, got 7"),
        (["hint", "123457"], "got 7"),
        (["hint", "123456", "--sheet", "ones=3,ones=4"], "listed twice"),
        (["hint", "123456", "--sheet", "ones=x"], "must be a number"),
        (["hint", "123456", "--bonus", "1"], "0 to 0 bonus points"),
        (["hint", "123456", "--sheet", "ones=0", "--throw", "5"], "needs 2 bonus throws"),
        (["hint", "123456", "--sheet", "ones=1", "--announced", "ones", "--harsh"], "used"),
        (["tournament", "greedy", "nobody"], "unknown dice agent"),
    ],
)
def test_bad_input_is_one_line_error(argv: list[str], message: str) -> None:
    args = parse(argv)
    with pytest.raises(ValueError, match=message) as info:
        args.func(args)
    assert "\n" not in str(info.value)


def test_tournament_table(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(["tournament", "greedy", "random", "--games", "30", "--seed", "2"], capsys)
    rows = {line.split()[0]: line.split() for line in out.splitlines()[2:]}
    win = {k: float(v[1].rstrip("%")) for k, v in rows.items()}
    assert win["greedy"] + win["random"] == pytest.approx(100.0, abs=0.2)
    assert win["greedy"] > 80  # greedy scores ~140, random ~35
    assert float(rows["greedy"][4]) > float(rows["random"][4])


def test_scripted_play_reports_errors_and_finishes() -> None:
    lines = [
        "keep",
        "keep",
        "keep",  # no free re-throw left, no bonus to spend
        "score seven",
        "score ones",
        "score ones",  # used now (the turn has ended, this is the second turn)
        "hint",
        "sheet",
    ]
    lines += [f"score {n}" for n in sd.CATEGORIES[1:]]
    args = parse(["play", "--against", "greedy", "--seed", "5"])
    out = io.StringIO()
    assert dice.play(args, io.StringIO("\n".join(lines) + "\n"), out) == 0
    text = out.getvalue()
    assert "error: no re-throws left and no bonus throws to spend" in text
    assert "error: unknown category 'seven'" in text
    assert "error: category ones is already used" in text
    assert text.count("greedy: ") == 12
    assert any(line.split() == ["you", "greedy"] for line in text.replace(">", "").splitlines())
    assert "winner:" in text
    totals = text.splitlines()[-2].split()
    assert totals[0] == "total" and len(totals) == 3


def test_play_end_of_input_abandons() -> None:
    args = parse(["play", "--against", "random", "--seed", "1"])
    assert dice.play(args, io.StringIO("keep\n"), io.StringIO()) == 1


def test_hint_score_options_add_the_engine_score_to_the_sheet_left() -> None:
    table = agents_sixdice.optimal_table()
    rng = np.random.default_rng(0)
    for _ in range(3):
        d = tuple(int(x) for x in rng.integers(1, 7, size=6))
        sheet = sheet_all_but("fives", "sixes")
        args = parse(["hint", "".join(map(str, d)), "--sheet", sheet, "--top", "100"])
        out = io.StringIO()
        dice.hint(args, out)
        options = {}
        for line in out.getvalue().splitlines()[2:]:
            value, action = line.split(maxsplit=1)
            options[action] = float(value)
        # ten categories written; scoring at the first throw banks two re-throws
        written = written_all_but("fives", "sixes")
        assert options["score fives"] == pytest.approx(
            written + sd.score(d, "fives") + table[1 << 5, 2], abs=0.006
        )
        assert options["score sixes"] == pytest.approx(
            written + sd.score(d, "sixes") + table[1 << 4, 2], abs=0.006
        )
