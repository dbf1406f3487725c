"""Labels of the other variants (`vrhcaby.learn.labels` with `variant`): acey-deucey's
one-ply search (`agents.search_ad.one_ply_ad`) against a plain search over the reference
move generator of tests/test_acey_deucey.py (which shares no code with `engine`) and the
network one board at a time; acey-deucey shards whose every labelled turn is one the
reference generator makes from its decision's board, with its extra roll; Nackgammon's
self-play from the layout of RULES.md; and the networks refused for the other variant."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.search_ad import one_ply_ad
from agents.td import TDAgent, find_checkpoint
from engine.acey_deucey import game_value_ad
from tests.test_acey_deucey import _key, _part, reference_turns
from vrhcaby.cli.main import main
from vrhcaby.equity.outcomes import equity, invert, outcome
from vrhcaby.learn.distill import DistillConfig, load_labels
from vrhcaby.learn.labels import LabelConfig, Shard, make_shard, shard_meta
from vrhcaby.nn.net import NetConfig, load_evaluator

AD = LabelConfig(
    name="ad",
    teacher="td-acey-deucey",
    variant="acey-deucey",
    plies=1,
    filter=(3,),
    shards=2,
    games_per_shard=2,
    sample=0.3,
    keep_agreeing=1.0,
    student_top=2,
    random_siblings=1,
    seed=4,
)


@cache
def network():
    return load_evaluator(find_checkpoint("td-acey-deucey"))


@cache
def ad_shard() -> Shard:
    return make_shard(AD, 0, network())


def zero_ply(board: tuple, again: bool) -> np.ndarray:
    """The network's five probabilities of one afterstate (mover in row 1), or a finished
    game's result."""
    b = np.array(board, dtype=np.int8)[None]
    points = game_value_ad(b)
    if points[0]:
        return outcome(points)[0].astype(np.float64)
    return network().probabilities(b, np.array([again]))[0].astype(np.float64)


def best(options: list[tuple[tuple, bool]]) -> tuple[tuple, bool]:
    values = [float(equity(zero_ply(b, f)[None])[0]) for b, f in options]
    return options[int(np.argmax(values))]


def reference_one_ply(board: np.ndarray, again: bool) -> np.ndarray:
    """The mover's one-ply probabilities of an afterstate, one roll and one board at a
    time: the side that rolls next (the mover when `again`) plays each roll's best turn by
    0-ply, a 1-2 in two stages (the 1 and the 2 valued with the bonus due, then the
    double), and the 21 rolls are averaged (1/36, 2/36)."""
    roller = board if again else board[::-1]
    start = _key(roller)
    total = np.zeros(5)
    for a in range(1, 7):
        for b in range(a, 7):
            played, used = _part(start, (a, b))
            due = (a, b) == (1, 2) and used == 2
            if not played:  # the turn passes: the board stands as the roller's afterstate
                chosen = (start, False)
            else:
                chosen = best([(x, due) for x in sorted(played)])
                if due:
                    bonus: set[tuple[tuple, bool]] = set()
                    for k in range(1, 7):
                        after, n = _part(chosen[0], (k, k))
                        if n == 0:
                            bonus.add((chosen[0], False))
                        bonus |= {(y, n == 4 and sum(y[1]) > 0) for y in after}
                    chosen = best(sorted(bonus))
            total += (1 if a == b else 2) * zero_ply(*chosen)
    mean = total / 36
    return mean if again else invert(mean[None])[0]


def test_the_one_ply_search_equals_a_plain_search() -> None:
    shard = ad_shard()
    rng = np.random.default_rng(3)
    rows = rng.choice(len(shard.after), size=4, replace=False)
    boards = shard.after[rows]
    # each board with either flag: the opponent rolls next, or the mover rolls again
    after = np.concatenate([boards, boards])
    extra = np.r_[np.zeros(len(rows), bool), np.ones(len(rows), bool)]
    found = one_ply_ad(TDAgent(network()), after, extra)
    for i in range(len(after)):
        want = reference_one_ply(after[i], bool(extra[i]))
        assert np.allclose(found[i], want, atol=1e-5), (i, found[i], want)


def test_every_acey_deucey_label_is_a_legal_turn_of_its_decision() -> None:
    """Each labelled afterstate, with its extra roll, is a turn the reference makes from its
    decision's board for its roll, or (a 1-2's bonus) a choice of the bonus double."""
    shard = ad_shard()
    assert shard.extra is not None and shard.after.shape[1:] == (2, 26)
    assert len(shard.boards) > 0 and shard.extra.dtype == bool
    for i, board in enumerate(shard.boards):
        start = _key(board)
        dice = (int(shard.dice[i, 0]), int(shard.dice[i, 1]))
        legal = reference_turns(start, dice)  # a whole roll
        if sorted(dice) == [1, 2]:  # a bonus decision: the 1 and the 2 already played
            for k in range(1, 7):
                after, n = _part(start, (k, k))
                if n == 0:
                    legal.add((start, False))
                legal |= {(y, n == 4 and sum(y[1]) > 0) for y in after}
        mine = np.flatnonzero(shard.decision == i)
        assert len(mine) >= 1
        for row in mine:
            assert (_key(shard.after[row]), bool(shard.extra[row])) in legal, (i, row)
    p = shard.probabilities  # joint probabilities: wins >= gammons >= backgammons, in [0, 1]
    assert ((p >= -1e-3) & (p <= 1 + 1e-3)).all()
    assert (p[:, 0] + 1e-3 >= p[:, 1]).all() and (p[:, 1] + 1e-3 >= p[:, 2]).all()


def test_an_acey_deucey_shard_saves_and_loads_as_it_was_made(tmp_path: Path) -> None:
    shard = ad_shard()
    path = tmp_path / "shard-00000.npz"
    shard.save(path, shard_meta(AD, 0))
    back = Shard.load(path)
    assert back.extra is not None and shard.extra is not None
    assert np.array_equal(back.after, shard.after) and np.array_equal(back.extra, shard.extra)
    assert np.array_equal(back.boards, shard.boards) and np.array_equal(back.dice, shard.dice)
    assert np.allclose(back.probabilities, shard.probabilities, atol=1e-3)
    assert Shard.meta(path)["config"]["variant"] == "acey-deucey"


def test_acey_deucey_labels_fit_only_an_acey_deucey_network(tmp_path: Path) -> None:
    folder = tmp_path / "ad"
    folder.mkdir()
    ad_shard().save(folder / "shard-00001.npz", shard_meta(AD, 1))
    net = NetConfig(encoding="rich", hidden=(8,))
    with pytest.raises(ValueError, match="labels of acey-deucey"):
        load_labels([folder], net, DistillConfig(labels=(str(folder),)))
    ad = NetConfig(encoding="rich", hidden=(8,), variant_inputs=True)
    fitted, held = load_labels([folder], ad, DistillConfig())
    assert len(fitted) == len(ad_shard().after) and len(held) == 0
    assert fitted.inputs(slice(None)).shape[1] == ad.inputs
    lazy, _ = load_labels([folder], ad, DistillConfig(encode_ahead=False))
    rows = torch.arange(len(lazy) - 1, -1, -2)
    assert torch.equal(lazy.inputs(rows), fitted.inputs(rows))  # with each mover's extra turn


def test_nackgammon_self_play_starts_from_nack_ballards_layout() -> None:
    """RULES.md §2: 2 on the 24-point, 2 on 23, 4 on 13, 3 on 8, 4 on 6, each side."""
    layout = np.zeros(25, np.int8)
    for point, checkers in ((24, 2), (23, 2), (13, 4), (8, 3), (6, 4)):
        layout[point - 1] = checkers
    config = LabelConfig(
        teacher="td-80",
        variant="nackgammon",
        plies=1,
        filter=(2,),
        games_per_shard=1,
        sample=1.0,
        keep_agreeing=1.0,
        explore=0.0,
    )
    shard = make_shard(config, 0, load_evaluator(find_checkpoint("td-80")))
    assert np.array_equal(shard.boards[0], np.stack([layout, layout]))
    assert shard.extra is None


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (["teacher=td-acey-deucey"], "plays acey-deucey"),
        (["teacher=td-80", "variant=acey-deucey"], "plays standard"),
        (["teacher=td-acey-deucey", "variant=acey-deucey", "plies=2", "filter=[2,2]"], "one ply"),
        (["variant=backgammon-ish"], "unknown variant"),
    ],
)
def test_a_network_of_another_variant_is_one_line(
    settings: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    argv = ["label", "--set", "plies=1", "--set", "filter=[2]", "--set", "shards=1"]
    argv += ["--set", f"out_dir={tmp_path}"]
    for setting in settings:
        argv += ["--set", setting]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not list(tmp_path.iterdir())
