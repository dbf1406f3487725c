"""Playing a rollout's trials out: many trials in lockstep, chunk by chunk, in this process,
in worker processes or as Ray tasks.

All trials of a chunk advance in lockstep: every ply asks the agent once
(`choose_boards`) for all of them, and every evaluation of a ply goes through the
evaluator in one call. Trials can stop early: after `truncate` plies, or (`race_cutoff`)
at the first ply after the first roll where there is no contact left; either way the
trial's result is the evaluator's estimate of the position it reached (plus the luck
adjustment, if on). With cube lines (`CubeLines`) each trial also plays the cube.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

import engine
from agents.search import ValueFunction as Evaluator
from agents.search import game_value
from vrhcaby.equity.context import CubeOwner
from vrhcaby.equity.met import KAZAROSS_XG2, mwc_to_emg
from vrhcaby.equity.outcomes import invert, outcome
from vrhcaby.play.pool import SHARED, WorkerPool, caused_by_interrupt, growing_chunks
from vrhcaby.play.rollout_cube import CubeSetting, mover_decision
from vrhcaby.play.rollout_results import EQUITY, RolloutResult
from vrhcaby.play.rollout_variance import OPENING, SWAP, Dice, reuses_luck, roll_luck

MAX_PLIES = 2_000
MAX_TRIALS = 1_000_000
"""The most trials of a rollout: each trial's results are kept (about 100 bytes a root),
and a million is days of play with a network. More is refused before a trial."""


@dataclass(frozen=True)
class Settings:
    """How a rollout is played."""

    #: Trials per rolled-out position.
    trials: int = 1296
    #: Stop each trial after this many plies and use the evaluator; None plays to the end.
    truncate: int | None = None
    #: Stop a trial at the first ply (after the first roll) with no contact left.
    race_cutoff: bool = False
    #: Stratify the first rolls (quasi-random dice).
    quasi_random: bool = True
    #: Subtract each roll's luck, as the evaluator judges it.
    luck: bool = True
    #: Dice seed (0 or more).
    seed: int = 0
    #: Trials per unit of work: a process's task, a progress step, what Ctrl-C keeps (the
    #: first units are smaller, `vrhcaby.play.pool.growing_chunks`).
    chunk: int = 216

    def check(self) -> None:
        """ValueError naming the first bad setting."""
        if self.trials < 1:
            raise ValueError(f"--trials must be at least 1, got {self.trials}")
        if self.trials > MAX_TRIALS:
            raise ValueError(f"--trials must be at most {MAX_TRIALS:,}, got {self.trials:,}")
        if self.truncate is not None and self.truncate < 1:
            raise ValueError(
                f"--truncate must be at least 1 ply (or absent for none), got {self.truncate}"
            )
        if self.seed < 0:
            raise ValueError(f"--seed must be 0 or more, got {self.seed}")
        if self.chunk < 1:
            raise ValueError(f"the chunk size must be at least 1, got {self.chunk}")


def _to_root(p: np.ndarray, root: np.ndarray) -> np.ndarray:
    """Probabilities of the side they belong to, seen from the root side."""
    p = np.asarray(p, dtype=np.float64)
    return np.where(root[:, None], p, invert(p))


def _pre_roll(evaluator: Evaluator, boards: np.ndarray) -> np.ndarray:
    """The evaluator's probabilities for the side on roll (row 1) of pre-roll boards."""
    after = np.ascontiguousarray(boards[:, ::-1])
    return invert(np.asarray(evaluator.probabilities(after), dtype=np.float64))


@dataclass(frozen=True)
class CubeLines:
    """Cube states played side by side in the same trials (a cubeful rollout's lines).

    Each trial plays its checkers once; each line keeps its own cube, and at every turn
    from `first_ply` on, the side on roll doubles where the evaluator's probabilities
    say so by Janowski's 0-ply cube decision (`vrhcaby.equity.cube`, as `cube_analysis`), its
    opponent taking or passing the same way. A pass settles the line at the cube before
    the double; the trial plays on for the other lines and the cubeless result.
    """

    #: The score and the root's cube, from the root side's view.
    setting: CubeSetting
    #: Each line's cube value and owner at the start (0 centre, 1 the root side, 2 the other).
    values: tuple[int, ...]
    owners: tuple[int, ...]
    first_ply: int

    def mover_setting(self, value: int, owner: int, mover_is_root: bool) -> CubeSetting:
        """The cube, score and money rules from the view of the side on roll."""
        s = self.setting
        mine = 1 if mover_is_root else 2
        name: CubeOwner = "centre" if owner == 0 else "me" if owner == mine else "opponent"
        return CubeSetting(
            cube_value=value,
            cube_owner=name,
            match_to=s.match_to,
            away=s.away if mover_is_root else (s.away[1], s.away[0]),
            crawford=s.crawford,
            jacoby=s.jacoby,
            beavers=s.beavers,
        )

    def points(self, won: int, value: int, owner: int) -> int:
        """What a game won by `won` (1, 2 or 3) scores on a line's cube
        (`GameContext.game_points`: the Jacoby rule in money play)."""
        line = replace(
            self.setting.context(), cube_value=value, cube_owner="centre" if owner == 0 else "me"
        )
        return line.game_points(won)

    def settle(self, points: int, root_wins: bool) -> float:
        """A finished game's result for the root side, per unit of its starting cube."""
        s = self.setting
        if not s.match_to:
            return (points if root_wins else -points) / s.cube_value
        mwc = KAZAROSS_XG2.outcome(s.away[0], s.away[1], points, root_wins, crawford=s.crawford)
        return self.emg(mwc)

    def emg(self, root_mwc: float) -> float:
        s = self.setting
        return float(mwc_to_emg(root_mwc, s.away[0], s.away[1], s.cube_value, crawford=s.crawford))

    def stopped(
        self, p: np.ndarray, board: np.ndarray, value: int, owner: int, mover_is_root: bool
    ) -> float:
        """A truncated trial's line: the side on roll's Janowski cubeful value of `p`."""
        d = mover_decision(p, board, self.mover_setting(value, owner, mover_is_root))
        if self.setting.match_to:
            assert d.optimal_mwc is not None
            return self.emg(d.optimal_mwc if mover_is_root else 1.0 - d.optimal_mwc)
        eq = d.optimal * value / self.setting.cube_value
        return eq if mover_is_root else -eq


def _cube_turn(
    lines: CubeLines,
    evaluator: Evaluator,
    board: np.ndarray,
    root: np.ndarray,
    value: np.ndarray,
    owner: np.ndarray,
    settled: np.ndarray,
    cubeful: np.ndarray,
) -> None:
    """The cube actions before the roll of pre-roll boards (side on roll in row 1), for
    every line not settled: doubles, takes (the cube doubles and changes hands) and passes
    (the line is settled), in place."""
    may = ~settled & ((owner == 0) | (owner == np.where(root, 1, 2)[:, None]))
    rows = np.flatnonzero(may.any(axis=1))
    if not len(rows):
        return
    p = _pre_roll(evaluator, board[rows])
    for k, r in enumerate(rows):
        for line in np.flatnonzero(may[r]):
            v, o, mover = int(value[r, line]), int(owner[r, line]), bool(root[r])
            d = mover_decision(p[k], board[r], lines.mover_setting(v, o, mover))
            if not d.double:
                continue
            if d.take:  # a beaver takes and redoubles at once, the taker keeping the cube
                value[r, line] = 4 * v if d.beaver else 2 * v
                owner[r, line] = 2 if mover else 1
            else:
                settled[r, line] = True
                cubeful[r, line] = lines.settle(v, mover)


@dataclass
class Playout:
    """Trials played out, from the root side's view: by trial, (R, ...) as `_play_out`
    returns them, or by root and trial, (C, T, ...) in a `Chunk`."""

    raw: np.ndarray
    """Each trial's result (outcome, or the evaluator's estimate where it stopped), 5 wide."""
    luck: np.ndarray
    """Each trial's summed luck, 5 wide (zeros without luck adjustment)."""
    plies: np.ndarray
    """Plies each trial played."""
    cubeful: np.ndarray
    """Each trial's cubeful result for each cube line, L wide (L = 0 without lines)."""
    cube_luck: np.ndarray
    """Each trial's summed cubeful luck for each cube line, L wide."""

    def by_root(self, roots: int) -> Playout:
        """The trials (R, ...) of `roots` roots in turn as (roots, R / roots, ...)."""

        def split(a: np.ndarray) -> np.ndarray:
            return a.reshape(roots, len(a) // roots, *a.shape[1:])

        return Playout(
            raw=split(self.raw),
            luck=split(self.luck),
            plies=split(self.plies),
            cubeful=split(self.cubeful),
            cube_luck=split(self.cube_luck),
        )

    @staticmethod
    def joined(parts: list[Playout]) -> Playout:
        """Playouts by root and trial (C, T_i, ...) side by side: (C, sum T_i, ...)."""

        def join(arrays: list[np.ndarray]) -> np.ndarray:
            return np.concatenate(arrays, axis=1)

        return Playout(
            raw=join([p.raw for p in parts]),
            luck=join([p.luck for p in parts]),
            plies=join([p.plies for p in parts]),
            cubeful=join([p.cubeful for p in parts]),
            cube_luck=join([p.cube_luck for p in parts]),
        )


@dataclass
class Chunk:
    """A chunk of trials of every root of a `Job`."""

    playout: Playout
    """By root and trial, (C, T, ...)."""
    strata: np.ndarray
    """(T,): each trial's first-roll stratum."""


def _play_out(
    agent,
    evaluator: Evaluator | None,
    settings: Settings,
    starts: np.ndarray,
    root: np.ndarray,
    dice: Dice,
    rows: np.ndarray,
    opening: bool,
    lines: CubeLines | None = None,
) -> Playout:
    """Play pre-roll boards `starts` (side on roll in row 1; `root` says whether that is
    the root side) to the end; `rows` is each one's row in `dice`. Returns each trial's
    results, luck and plies, and the cube `lines`' cubeful results and luck (R, L)."""
    n = len(starts)
    board = np.array(starts, dtype=np.int8)
    root = np.array(root, dtype=bool)
    raw = np.zeros((n, 5))
    luck = np.zeros((n, 5))
    plies = np.zeros(n, dtype=np.int64)
    active = np.ones(n, dtype=bool)
    use_luck = settings.luck and evaluator is not None
    reuse = use_luck and reuses_luck(agent, evaluator)
    n_lines = len(lines.values) if lines is not None else 0
    value = np.tile(np.array(lines.values if lines else (), np.int64), (n, 1))
    owner = np.tile(np.array(lines.owners if lines else (), np.int64), (n, 1))
    settled = np.zeros((n, n_lines), dtype=bool)
    cubeful = np.zeros((n, n_lines))
    cube_luck = np.zeros((n, n_lines))
    # Luck in points times the cube keeps its zero mean; in match play (MWC) it is off.
    cube_luck_on = use_luck and lines is not None and not lines.setting.match_to
    for ply in range(MAX_PLIES):
        idx = np.flatnonzero(active)
        if not len(idx):
            return Playout(raw=raw, luck=luck, plies=plies, cubeful=cubeful, cube_luck=cube_luck)
        stop = np.zeros(len(idx), dtype=bool)
        if settings.truncate is not None and ply >= settings.truncate:
            stop[:] = True
        elif settings.race_cutoff and ply > 0:
            stop = ~np.asarray(engine.has_contact(board[idx]), dtype=bool).reshape(-1)
        if stop.any():
            assert evaluator is not None  # checked by _check_evaluator
            s = idx[stop]
            mover_p = _pre_roll(evaluator, board[s])
            raw[s] = _to_root(mover_p, root[s])
            plies[s] = ply
            active[s] = False
            if lines is not None:
                for k, r in enumerate(s):
                    for line in np.flatnonzero(~settled[r]):
                        cubeful[r, line] = lines.stopped(
                            mover_p[k],
                            board[r],
                            int(value[r, line]),
                            int(owner[r, line]),
                            bool(root[r]),
                        )
            idx = idx[~stop]
            if not len(idx):
                continue
        if lines is not None and ply >= lines.first_ply and not (opening and ply == 0):
            assert evaluator is not None  # checked by _check_evaluator
            # A view of the active rows' state, written back below.
            v, o, st, cf = value[idx], owner[idx], settled[idx], cubeful[idx]
            _cube_turn(lines, evaluator, board[idx], root[idx], v, o, st, cf)
            value[idx], owner[idx], settled[idx], cubeful[idx] = v, o, st, cf
        d = dice.roll(rows[idx], ply)
        if opening and ply == 0:
            # The side with the higher die starts, playing both numbers.
            other = d[:, 1] > d[:, 0]
            board[idx[other]] = board[idx[other]][:, ::-1]
            root[idx[other]] = ~root[idx[other]]
            d = np.sort(d, axis=1)[:, ::-1]
        b = board[idx]
        chosen = None
        if use_luck and not (opening and ply == 0):
            assert evaluator is not None
            diff, best = roll_luck(evaluator, b, d)
            turn_luck = np.where(root[idx, None], diff, diff @ SWAP.T)
            luck[idx] += turn_luck
            if cube_luck_on:
                assert lines is not None
                points = (turn_luck @ EQUITY)[:, None] * value[idx] / lines.setting.cube_value
                cube_luck[idx] += np.where(settled[idx], 0.0, points)
            if reuse:
                chosen = best
        if chosen is None:
            chosen = np.asarray(agent.choose_boards(b, d), dtype=np.int8)
        points = game_value(chosen)
        done = points > 0
        f = idx[done]
        raw[f] = _to_root(outcome(points[done]), root[f])
        plies[f] = ply + 1
        active[f] = False
        if lines is not None:
            for r, won in zip(f, points[done], strict=True):
                for line in np.flatnonzero(~settled[r]):
                    scored = lines.points(int(won), int(value[r, line]), int(owner[r, line]))
                    cubeful[r, line] = lines.settle(scored, bool(root[r]))
        go = idx[~done]
        board[go] = chosen[~done][:, ::-1]
        root[go] = ~root[go]
    raise RuntimeError(f"trials did not end within {MAX_PLIES} plies")


@dataclass
class Job:
    """A rollout of several roots with shared dice: what a worker process needs."""

    agent: object
    evaluator: Evaluator | None
    settings: Settings
    starts: np.ndarray  # (C, 2, 25) pre-roll boards, side on roll in row 1
    root: np.ndarray  # (C,) whether the side on roll is the root side
    opening: bool
    lines: CubeLines | None = None

    def run(self, trials: range) -> Chunk:
        """A chunk of trials played out from every root."""
        s = self.settings
        dice = Dice(
            seed=s.seed,
            trials=np.arange(trials.start, trials.stop),
            total=s.trials,
            quasi_random=s.quasi_random,
            opening=self.opening,
        )
        c, t = len(self.starts), len(trials)
        starts = np.repeat(self.starts, t, axis=0)
        root = np.repeat(self.root, t)
        rows = np.tile(np.arange(t), c)
        played = _play_out(
            self.agent, self.evaluator, s, starts, root, dice, rows, self.opening, self.lines
        )
        return Chunk(playout=played.by_root(c), strata=dice.strata())


def _worker_chunk(trials: range) -> tuple[range, Chunk]:
    return trials, SHARED["job"].run(trials)


#: Called after each finished chunk with the results so far (one per root).
Progress = Callable[[list[RolloutResult]], None]


def run_trials(
    job: Job,
    jobs: int,
    progress: Progress | None,
    backend: str = "local",
    address: str | None = None,
) -> list[RolloutResult]:
    """All chunks of a job: in this process, in `jobs` processes, or as Ray tasks (at most
    `jobs` at a time, 0 for the cluster's CPUs); Ctrl-C keeps the finished chunks."""
    if backend not in ("local", "ray"):
        raise ValueError(f"unknown backend {backend!r} (known: local, ray)")
    s = job.settings
    c = len(job.starts)
    done: dict[int, Chunk] = {}
    n_lines = len(job.lines.values) if job.lines is not None else 0
    empty = Playout(
        raw=np.zeros((c, 0, 5)),
        luck=np.zeros((c, 0, 5)),
        plies=np.zeros((c, 0)),
        cubeful=np.zeros((c, 0, n_lines)),
        cube_luck=np.zeros((c, 0, n_lines)),
    )

    def results(interrupted: bool) -> list[RolloutResult]:
        parts = [done[k] for k in sorted(done)]
        p = Playout.joined([part.playout for part in parts]) if parts else empty
        strata = np.concatenate([part.strata for part in parts]) if parts else np.zeros(0, np.int64)
        n_strata = (len(OPENING) if job.opening else 36) if s.quasi_random else 0
        adjusted = s.luck and job.evaluator is not None
        return [
            RolloutResult(
                raw=p.raw[k],
                luck=p.luck[k],
                stratum=strata,
                n_strata=n_strata,
                plies=p.plies[k],
                luck_adjusted=adjusted,
                interrupted=interrupted,
                cubeful=p.cubeful[k] if n_lines else None,
                cubeful_luck=p.cube_luck[k] if n_lines else None,
            )
            for k in range(c)
        ]

    def keep(trials: range, part: Chunk) -> None:
        done[trials.start] = part
        if progress is not None:
            progress(results(False))

    units = growing_chunks(s.trials, s.chunk)

    try:
        if backend == "ray":
            from vrhcaby.play.ray import connect, run_ray

            connect(address)
            if run_ray(job, units, workers=jobs, on_result=keep):
                return results(True)
        elif jobs <= 1 or len(units) == 1:
            for trials in units:
                keep(trials, job.run(trials))
        else:
            with WorkerPool(min(jobs, len(units)), _worker_chunk, job=job) as pool:
                for trials, part in pool.imap_unordered(units):
                    keep(trials, part)
    except KeyboardInterrupt:
        return results(True)
    except SystemError as exc:  # an interrupt inside numba's unpickling (pool.caused_by_interrupt)
        if not caused_by_interrupt(exc):
            raise
        return results(True)
    return results(False)
