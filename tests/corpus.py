"""Seeded corpora of positions with rolls for move-generator checks.

Three sources, so that every rule is exercised: positions from random games, positions
from games between greedy pip-runners (long races and bear-offs), and random boards
(bar checkers against closed boards, gaps in the bear-off, stray blots).
"""

from __future__ import annotations

import numpy as np

import engine


def game_positions(n_games: int, seed: int) -> list[np.ndarray]:
    """Boards before each turn of random games, from the roller's view."""
    rng = np.random.default_rng(seed)
    boards = []
    for i in range(n_games):
        runner = i % 2 == 1

        def choose(pos, dice, plays, runner=runner):
            if runner:  # prefer plays that bear off / advance the rearmost checkers
                return min(plays, key=lambda play: engine.pips(play.position.board)[1])
            return plays[int(rng.integers(len(plays)))]

        record = engine.play_game((choose, choose), rng)
        boards.extend(p.board.copy() for p in record.positions()[:-1])
    return boards


def walk_positions(n: int, seed: int, choose=None) -> list[np.ndarray]:
    """`n` boards (side on roll in row 1) met one after another in games with seeded dice,
    each play picked by `choose(position, dice)` (uniformly at random among the legal plays
    when None); a finished game starts the next from the opening position."""
    rng = np.random.default_rng(seed)
    out, position = [], engine.Position.start()
    while len(out) < n:
        dice = tuple(int(d) for d in rng.integers(1, 7, 2))
        if choose is not None:
            if engine.legal_plays(position, dice):
                position = choose(position, dice).position
        elif plays := engine.legal_plays(position, dice):
            position = plays[rng.integers(len(plays))].position
        if engine.game_value(position.board[None])[0]:
            position = engine.Position.start()
            continue
        position = position.flip()
        out.append(position.board.copy())
    return out


def random_board(rng: np.random.Generator) -> np.ndarray:
    """A valid board with checkers scattered at random, biased towards hard cases."""
    board = np.zeros((2, 25), np.int8)
    kind = rng.integers(4)
    for row in (1, 0):
        n = int(rng.integers(1, 16))
        if kind == 0 and row == 1:  # bear-off with gaps
            spots = rng.integers(0, 6, size=n)
        elif kind == 1 and row == 0:  # opponent closes its home board
            spots = np.concatenate(
                [np.repeat(np.arange(int(rng.integers(3, 7))), 2), rng.integers(0, 24, size=3)]
            )
        else:
            spots = rng.integers(0, 25 if rng.random() < 0.3 else 24, size=n)
        for s in spots:
            if board[row].sum() >= 15:
                break
            other = 23 - s
            if s < 24 and board[1 - row, other] > 0:
                continue
            board[row, s] += 1
    if kind == 1 and board[1].sum() < 15:
        board[1, 24] += 1  # a checker on the bar facing the closed board
    return board


def corpus(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`n` boards with rolls: half from games, half random boards. int8 (n,2,25), (n,2)."""
    rng = np.random.default_rng(seed)
    boards = game_positions(max(2, n // 80), seed)[: n // 2]
    while len(boards) < n:
        boards.append(random_board(rng))
    order = rng.permutation(len(boards))
    dice = rng.integers(1, 7, size=(n, 2))
    return np.stack(boards)[order], dice


def lockstep_positions(
    n_games: int, seed: int, max_turns: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boards met in `n_games` random games played in lockstep (side on roll in row 1; at
    most `max_turns` turns of each), plus every afterstate of each board for a random
    roll and the row of the board it was played from: `(roots, after, parent)`."""
    rng = np.random.default_rng(seed)
    boards = np.repeat(engine.Position.start().board[None], n_games, axis=0)
    seen = []
    turns = 0
    while len(boards) and (max_turns is None or turns < max_turns):
        after, parent = engine.batch_afterstates(boards, engine.roll_dice(rng, len(boards)))
        counts = np.bincount(parent, minlength=len(boards))
        keep = counts > 0
        first = np.cumsum(counts) - counts
        pick = first[keep] + (rng.random(int(keep.sum())) * counts[keep]).astype(int)
        seen.append(boards[keep])
        boards = after[pick]
        boards = boards[engine.game_value(boards) == 0][:, ::-1].copy()
        turns += 1
    roots = np.concatenate(seen)
    after, parent = engine.batch_afterstates(roots, engine.roll_dice(rng, len(roots)))
    return roots, after, parent
