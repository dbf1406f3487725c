"""Rollouts: judge a position or a close play by playing it to the end many times.

A rollout plays a position out `trials` times with an agent and averages the results:
the five outcome probabilities P(win), P(win gammon), P(win backgammon), P(lose gammon),
P(lose backgammon) of the side it is judged for (the *root* side), and their money
equity, each with a standard error. All trials of a chunk advance in lockstep: every ply
asks the agent once (`choose_boards`) for all of them, and every evaluation of a ply goes
through the evaluator in one call.

The work is split by concern: `rollout_trials` plays the trials out, chunk by chunk, in
this process, in worker processes or as Ray tasks (`Settings`: trials, truncation, the
race cut-off, the seed); `rollout_variance` holds the variance reduction, as GNU
Backgammon does it, both on by default (quasi-random dice and luck adjustment);
`rollout_results` what a rollout found (`RolloutResult`, `Estimate`, `PlayRollout`);
`rollout_cube` the cube (`CubeSetting`, the cube decision at the root, and the cube played
in the trials, `cube_rollout`). This module is the API: it rolls out positions
(`rollout_position`), afterstates (`rollout_afterstates`) and candidate plays
(`rollout_plays`), and exports the names above.

Dice depend only on `(seed, trial, ply)`, so the same trial number plays the same dice
whatever the position, the chunking, the number of processes or Ray workers (`backend`
"ray": chunks of trials as Ray tasks, `vrhcaby.play.ray.run_ray`): the candidate plays of
`rollout_plays` are rolled out with the same dice streams, and their differences are
sharper than their values.

Example (for researchers: rollout targets for a set of positions)::

    from agents import load_agent
    from vrhcaby.play.rollout import Settings, rollout_position

    agent = load_agent("td:checkpoints/td-best.pt")
    result = rollout_position(board, agent, settings=Settings(trials=1296, seed=1))
    result.estimate().mean        # the five probabilities, luck-adjusted
    result.estimate().equity, result.estimate().equity_se
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

import engine
from agents.search import ValueFunction as Evaluator
from agents.search import afterstate_probabilities
from vrhcaby.equity.outcomes import equity, outcome
from vrhcaby.play.rollout_cube import (
    CubeAnalysis,
    CubeRollout,
    CubeSetting,
    add_cubeful,
    cube_analysis,
    cube_rollout,
    play_cubeful_equity,
)
from vrhcaby.play.rollout_results import Estimate, PlayRollout, RolloutResult, estimate
from vrhcaby.play.rollout_trials import CubeLines, Job, Progress, Settings, run_trials

__all__ = [
    "CubeAnalysis",
    "CubeRollout",
    "CubeSetting",
    "Estimate",
    "Evaluator",
    "PlayRollout",
    "RolloutResult",
    "Settings",
    "add_cubeful",
    "cube_analysis",
    "cube_rollout",
    "default_evaluator",
    "estimate",
    "play_cubeful_equity",
    "rank_plays",
    "rollout_afterstates",
    "rollout_plays",
    "rollout_position",
]

DEFAULT_SETTINGS = Settings()
"""The settings of a rollout given none (frozen, so one instance serves every call)."""


def _check_evaluator(agent, evaluator: Evaluator | None, settings: Settings) -> None:
    settings.check()
    if not hasattr(agent, "choose_boards"):
        raise ValueError(f"agent {getattr(agent, 'name', agent)!r} cannot play in batches")
    if evaluator is None and (settings.truncate is not None or settings.race_cutoff):
        what = "truncation" if settings.truncate is not None else "the race cut-off"
        raise ValueError(
            f"{what} needs a network evaluator; agent {getattr(agent, 'name', agent)!r} "
            "has none (give one, e.g. --evaluator PATH)"
        )


def default_evaluator(agent) -> Evaluator | None:
    """The agent's own network, if it has one (a td agent), else None."""
    ev = getattr(agent, "evaluator", None)
    return ev if ev is not None and hasattr(ev, "probabilities") else None


def _check_board(board: np.ndarray) -> np.ndarray:
    b = np.array(board, dtype=np.int8)
    engine.validate_board(b)
    if engine.game_value(b[None])[0] or engine.game_value(b[None, ::-1])[0]:
        raise ValueError("the game in this position is over: no side is on roll")
    return b


def rollout_position(
    board: np.ndarray,
    agent,
    *,
    evaluator: Evaluator | None = None,
    settings: Settings = DEFAULT_SETTINGS,
    jobs: int = 1,
    opening: bool = False,
    progress: Progress | None = None,
    backend: str = "local",
    address: str | None = None,
    cube: CubeSetting | None = None,
) -> RolloutResult:
    """Roll out a position before the roll, for the side on roll (row 1 of `board`).

    `agent` plays both sides (`choose_boards`); `evaluator` (default: the agent's own
    network) judges luck and truncated trials; without one, luck adjustment is off and
    truncation is an error. With `opening`, the first roll is an opening roll: each side
    rolls one die, the higher starts with both numbers (the start position then rolls
    out to 0 by symmetry). `jobs` processes share the trials, or with `backend` "ray"
    Ray tasks at most `jobs` at a time (0: the cluster's CPUs) on the cluster at
    `address` (None: the one this process is connected to, or a new local one); the
    results are the same whatever the backend and the number of jobs.

    With `cube` (the cube and score from the side on roll's view), the cube is played in
    the trials (`CubeLines`) and `RolloutResult.cubeful` holds two lines: 0 "no double"
    (the cube as it is) and, where the side on roll may double, 1 "double, take" (twice
    the cube, its opponent's); `cube_rollout` reads the decision from them.
    """
    b = _check_board(board)
    evaluator = evaluator if evaluator is not None else default_evaluator(agent)
    _check_evaluator(agent, evaluator, settings)
    lines = None
    if cube is not None:
        _check_cube_evaluator(agent, evaluator)
        values, owners = [cube.cube_value], [_OWNER_CODE[cube.cube_owner]]
        if _may_double(cube) and not opening:
            values.append(2 * cube.cube_value)
            owners.append(2)
        lines = CubeLines(setting=cube, values=tuple(values), owners=tuple(owners), first_ply=1)
    job = Job(
        agent=agent,
        evaluator=evaluator,
        settings=settings,
        starts=b[None],
        root=np.array([True]),
        opening=opening,
        lines=lines,
    )
    return run_trials(job, jobs, progress, backend, address)[0]


_OWNER_CODE = {"centre": 0, "me": 1, "opponent": 2}


def _may_double(setting: CubeSetting) -> bool:
    """Whether the side on roll may double now, by the rules (and a 64 cube at most)."""
    if setting.cube_owner not in ("centre", "me") or 2 * setting.cube_value > 64:
        return False
    return not setting.match_to or (not setting.crawford and setting.away[0] > setting.cube_value)


def _check_cube_evaluator(agent, evaluator: Evaluator | None) -> None:
    if evaluator is None:
        raise ValueError(
            "cubeful trials need a network evaluator for the cube decisions; agent "
            f"{getattr(agent, 'name', agent)!r} has none (give one, e.g. --evaluator PATH)"
        )


def rollout_afterstates(
    afterstates: np.ndarray,
    agent,
    *,
    evaluator: Evaluator | None = None,
    settings: Settings = DEFAULT_SETTINGS,
    jobs: int = 1,
    progress: Progress | None = None,
    backend: str = "local",
    address: str | None = None,
    cube: CubeSetting | None = None,
) -> list[RolloutResult]:
    """Roll out afterstates (the mover in row 1, the opponent to roll) with the same dice
    streams, each for its mover; results in the order given. `jobs`, `backend` and
    `address` as for `rollout_position`; with `cube` (the cube and score from the mover's
    view), the cube is played in the trials from the opponent's first turn on, one line
    in `RolloutResult.cubeful`."""
    after = np.array(afterstates, dtype=np.int8)
    if after.ndim != 3 or after.shape[1:] != (2, 25) or not len(after):
        raise ValueError(f"afterstates must have shape (N, 2, 25), N >= 1, got {after.shape}")
    evaluator = evaluator if evaluator is not None else default_evaluator(agent)
    _check_evaluator(agent, evaluator, settings)
    lines = None
    if cube is not None:
        _check_cube_evaluator(agent, evaluator)
        lines = CubeLines(
            setting=cube,
            values=(cube.cube_value,),
            owners=(_OWNER_CODE[cube.cube_owner],),
            first_ply=0,
        )
    finished = engine.game_value(after)
    live = np.flatnonzero(finished == 0)
    results: list[RolloutResult | None] = [None] * len(after)
    if len(live):
        starts = np.ascontiguousarray(after[live, ::-1])
        root = np.zeros(len(live), dtype=bool)
        job = Job(
            agent=agent,
            evaluator=evaluator,
            settings=settings,
            starts=starts,
            root=root,
            opening=False,
            lines=lines,
        )
        for k, r in zip(live, run_trials(job, jobs, progress, backend, address), strict=True):
            results[k] = r
    template = next((r for r in results if r is not None), None)
    for k in np.flatnonzero(finished):
        # A play that ends the game: its result is certain, every trial the same.
        n = template.trials if template is not None else settings.trials
        stratum = template.stratum if template is not None else np.zeros(n, dtype=np.int64)
        n_strata = template.n_strata if template is not None else 0
        raw = np.tile(outcome(finished[k : k + 1]).astype(np.float64), (n, 1))
        cubeful = None
        if lines is not None:
            scored = lines.points(int(finished[k]), lines.values[0], lines.owners[0])
            won = lines.settle(scored, True)
            cubeful = np.full((n, 1), won)
        results[k] = RolloutResult(
            raw=raw,
            luck=np.zeros((n, 5)),
            stratum=stratum,
            n_strata=n_strata,
            plies=np.zeros(n, dtype=np.int64),
            luck_adjusted=settings.luck and evaluator is not None,
            interrupted=template.interrupted if template is not None else False,
            cubeful=cubeful,
            cubeful_luck=None if cubeful is None else np.zeros((n, 1)),
        )
    return [r for r in results if r is not None]


def rank_plays(
    board: np.ndarray, dice: tuple[int, int], agent, evaluator: Evaluator | None
) -> list[tuple[engine.Play, float]]:
    """Every legal play with its fast (0-ply) value, best first: the evaluator's cubeless
    equity, or else the agent's own score."""
    position = engine.Position(board)
    plays = engine.legal_plays(position, dice)
    if not plays:
        raise ValueError(f"no legal play for {dice[0]}-{dice[1]}: nothing to roll out")
    after = np.stack([p.position.board for p in plays])
    if evaluator is not None:
        parent = np.zeros(len(after), dtype=np.int64)
        p = afterstate_probabilities(evaluator, board[None], after, parent)
        scores = equity(np.asarray(p, dtype=np.float64))
    elif hasattr(agent, "score"):
        scores = np.asarray(agent.score(after, np.zeros(len(after), np.int64), board[None]))
    else:
        scores = np.zeros(len(after))
    order = np.argsort(-scores, kind="stable")
    return [(plays[i], float(scores[i])) for i in order]


def rollout_plays(
    board: np.ndarray,
    dice: tuple[int, int],
    agent,
    *,
    candidates: int = 5,
    evaluator: Evaluator | None = None,
    settings: Settings = DEFAULT_SETTINGS,
    jobs: int = 1,
    progress: Progress | None = None,
    backend: str = "local",
    address: str | None = None,
    cube: CubeSetting | None = None,
) -> list[PlayRollout]:
    """Roll out the best `candidates` plays of the side on roll for `dice`, picked by the
    fast search of `rank_plays`, with the same dice streams; best rolled-out first, each
    with its equity difference from the best (paired by trial)."""
    if candidates < 1:
        raise ValueError(f"--candidates must be at least 1, got {candidates}")
    b = _check_board(board)
    roll = engine.check_dice(dice)
    evaluator = evaluator if evaluator is not None else default_evaluator(agent)
    ranked = rank_plays(b, roll, agent, evaluator)[:candidates]
    after = np.stack([p.position.board for p, _ in ranked])
    results = rollout_afterstates(
        after,
        agent,
        evaluator=evaluator,
        settings=settings,
        jobs=jobs,
        progress=progress,
        backend=backend,
        address=address,
        cube=cube,
    )
    out = [
        PlayRollout(play=p, result=r, prior=prior)
        for (p, prior), r in zip(ranked, results, strict=True)
    ]
    out.sort(key=lambda x: -x.result.estimate().equity)
    best = out[0].result
    for x in out:
        r = x.result
        strata = r.stratum if r.n_strata else None  # paired by trial, as `r.estimate()`
        x.diff = replace(estimate(r.values - best.values, strata, r.n_strata), difference=True)
    return out
