"""Matches and tournaments between agents, many games advanced in lockstep.

Each sample of a pair is played twice with the same dice stream and the seats swapped
(mirrored dice), so luck largely cancels; points per game come with a 95% interval that
treats each mirrored pair (the mean of its two games) as one sample. In match mode a
sample is a mirrored pair of matches and its points per game is the net points over the
games of both. Agents that pick plays in batches (`choose_boards`) are asked once per turn
for all games where they are on roll; the others move one game at a time. With the cube or
a match, a cube-aware td agent gets each game's `GameContext` with its boards and ranks
plays by cubeful equity. In money play with the cube and `PairSettings.beavers`, a doubled
agent that knows beavers (`beaver_decision`: td, gnubg) may beaver, as GNU Backgammon
plays by default; a game record writes it as a "beaver" action with the new cube.

Chunks of games have fixed sizes (1, 2, 4, ... samples, then `CHUNK`:
`vrhcaby.play.pool.growing_chunks`, so that a stop soon after the start keeps games) and
seeds derived from `seed`, so results do not depend on the number of processes. A Ctrl-C
keeps every game finished, those of the chunks in flight in worker processes too
(`WorkerPool.cut_short`).

Acey-deucey games are played the same way on (2, 26) boards (column 25 the waiting
checkers): each agent plays whole turns (`choose_turns_ad`), a turn that earns another
roll leaves the same side on roll with the next roll of the dice stream, and cube and
resignation offers come only before a turn's first roll.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

import engine
from agents.base import GameContext, play_reaching, play_reaching_ad
from vrhcaby.play.match import MatchScore
from vrhcaby.play.pool import (
    SHARED,
    WorkerPool,
    caused_by_interrupt,
    growing_chunks,
    stop_requested,
)
from vrhcaby.play.stats import mean_ci95, nan_to_none, wilson_ci95

#: Samples (mirrored pairs) per chunk: a unit of work for a process, and of seeding.
CHUNK = 64
MAX_GAMES = 10_000_000
"""The most games (or matches) of one pair: each game's result is kept until the pair's
statistics are drawn, a few hundred bytes each, so ten million is gigabytes, and days of
play at the fastest agents' thousands of games a second. More is refused before a game."""
MAX_TURNS = 10_000


@dataclass(frozen=True)
class PairSettings:
    """How the games of a pair are played."""

    variant: str = "standard"
    match_to: int = 0
    cube: bool = True
    #: Money play with the cube: gammons count single on a centred cube (the Jacoby rule);
    #: ignored where it does not exist (`vrhcaby.equity.context.money_rule`).
    jacoby: bool = False
    mirrored: bool = True
    record: bool = False
    #: Money play with the cube: a side doubled may beaver, if its agent knows how
    #: (`beaver_decision`); never in match play.
    beavers: bool = False


@dataclass
class GameResult:
    """One finished game, from seat 0's view of who won; `a_seat` says where A sat."""

    sample: int
    copy: int
    a_seat: int
    winner: int
    value: int
    cube: int
    points: int
    match_winner: int = -1
    record: dict | None = None

    @property
    def a_points(self) -> int:
        return self.points if self.winner == self.a_seat else -self.points


@dataclass
class PairResult:
    """The results of agent A against agent B (points and counts from A's view)."""

    a: str
    b: str
    games: int
    ppg: float
    ci95: tuple[float, float]
    wins: tuple[int, int]
    gammons: tuple[int, int]
    backgammons: tuple[int, int]
    pairs: int = 0
    mirrored: bool = True
    match_to: int = 0
    matches: int = 0
    match_wins: tuple[int, int] = (0, 0)
    match_win_rate: float = math.nan
    match_ci95: tuple[float, float] = (math.nan, math.nan)
    interrupted: bool = False
    #: The agents of the pair that play without a cube (never double, always take, never
    #: resign): their cube results say little about the cube play of the other.
    cubeless: list[str] = field(default_factory=list)
    #: Whether the pair played with the doubling cube (`PairSettings.cube`).
    cube: bool = True
    results: list[GameResult] = field(default_factory=list, repr=False)

    def to_json(self) -> dict:
        """The JSON object of `--json` (NaN written as null)."""
        d = {k: v for k, v in asdict(self).items() if k != "results"}
        if not self.match_to:
            for k in ("match_to", "matches", "match_wins", "match_win_rate", "match_ci95"):
                d.pop(k)
        return nan_to_none(d)

    def records(self, seed: int) -> list[dict]:
        """The games as `tournament --out` writes them to `games.jsonl`, in sample order:
        each game's record (its turns; empty unless recorded) with the pair's names, A's
        seat, the sample, the copy, the `seed` the pair was played with and the match's
        winner. What `vrhcaby.io.matchfile.export_mat` reads."""
        return [
            dict(
                g.record or {},
                a=self.a,
                b=self.b,
                a_seat=g.a_seat,
                sample=g.sample,
                copy=g.copy,
                seed=seed,
                match_winner=g.match_winner,
            )
            for g in sorted(self.results, key=lambda g: (g.sample, g.copy))
        ]


def check_agents(agents, settings: PairSettings) -> None:
    """ValueError, before any game, if an agent cannot play the variant."""
    engine.get_variant(settings.variant)
    for agent in agents:
        if not agent.supports(settings.variant):
            raise ValueError(f"agent {agent.name!r} cannot play variant {settings.variant!r}")


class _DiceStreams:
    """Per-sample dice streams, extended in fixed chunks so they replay exactly."""

    def __init__(self, seeds: list[int]) -> None:
        self.rngs = [np.random.default_rng(s) for s in seeds]
        self.rolls = np.zeros((len(seeds), 0, 2), dtype=np.int64)

    def get(self, sample: np.ndarray, turn: np.ndarray) -> np.ndarray:
        while len(sample) and turn.max() >= self.rolls.shape[1]:
            more = np.stack([engine.roll_dice(r, 256) for r in self.rngs])
            self.rolls = np.concatenate([self.rolls, more], axis=1)
        return self.rolls[sample, turn]


@dataclass(frozen=True)
class _Move:
    """A recorded turn: `seat` played `dice` from `before` (its side on roll in row 1) to
    `after`, and whether it rolls again (acey-deucey)."""

    seat: int
    dice: tuple[int, int]
    before: np.ndarray
    after: np.ndarray
    again: bool


#: A recorded cube or resignation action: ("double" | "beaver", seat, new cube),
#: ("take" | "drop", seat) or ("resign", seat, value).
_Action = tuple


@dataclass(frozen=True)
class _Games:
    """The games `play_chunk` advances in lockstep: one row of each array per game,
    updated in place. Game `2 * k + c` of a mirrored chunk is copy `c` of its `k`-th
    sample (copy 0: A in seat 0; copy 1: B in seat 0)."""

    agents: tuple
    settings: PairSettings
    #: The global sample numbers of the chunk.
    samples: range
    dice: _DiceStreams
    #: The index into `samples` of each game's sample, and which copy of it it is.
    sample: np.ndarray
    copy: np.ndarray
    a_seat: np.ndarray
    boards: np.ndarray
    on_roll: np.ndarray
    cube: np.ndarray
    #: The seat that owns the cube, -1 while it is centred.
    owner: np.ndarray
    #: Turns played in the current game.
    ply: np.ndarray
    #: Each game's next roll in its sample's dice stream.
    turn: np.ndarray
    #: The opening roll, played by the side it put on roll.
    pending: np.ndarray
    #: Whether the game (money) or match is still being played.
    active: np.ndarray
    #: Whether the side on roll is about to roll an extra roll (acey-deucey).
    extra: np.ndarray
    #: Each game's match (money games keep the score 0-0).
    matches: list[MatchScore]
    #: The recorded turns and actions of each game being played (`PairSettings.record`).
    events: list[list[_Move | _Action]]
    #: The finished games, in finishing order.
    results: list[GameResult]
    #: The variant's starting board and what the mover of each afterstate has won.
    start_board: np.ndarray
    game_value: Callable[[np.ndarray], np.ndarray]
    on_result: Callable[[GameResult], None] | None = None
    acey_deucey: bool = False

    @classmethod
    def new(
        cls,
        agents: tuple,
        samples: range,
        seed: int,
        settings: PairSettings,
        on_result: Callable[[GameResult], None] | None = None,
    ) -> _Games:
        """The games of `samples` at their starting position, before the opening roll."""
        copies = 2 if settings.mirrored else 1
        n = len(samples) * copies
        copy = np.tile(np.arange(copies), len(samples))
        start = _start_board(settings.variant)
        return cls(
            agents,
            settings,
            samples,
            dice=_DiceStreams([seed * 1_000_003 + s for s in samples]),
            sample=np.repeat(np.arange(len(samples)), copies),
            copy=copy,
            a_seat=copy.copy(),
            boards=np.repeat(start[None], n, axis=0),
            on_roll=np.zeros(n, dtype=np.int64),
            cube=np.ones(n, dtype=np.int64),
            owner=np.full(n, -1, dtype=np.int64),
            ply=np.zeros(n, dtype=np.int64),
            turn=np.zeros(n, dtype=np.int64),
            pending=np.zeros((n, 2), dtype=np.int64),
            active=np.ones(n, dtype=bool),
            extra=np.zeros(n, dtype=bool),
            matches=[MatchScore(settings.match_to) for _ in range(n)],
            events=[[] for _ in range(n)],
            results=[],
            start_board=start,
            game_value=_game_value(settings.variant),
            on_result=on_result,
            acey_deucey=engine.get_variant(settings.variant).enter_from_start,
        )

    def position(self, i: int) -> engine.Position:
        """The position of game `i`, the side on roll in row 1 (waiting checkers kept)."""
        if self.acey_deucey:
            from engine.acey_deucey import position_from_board_ad

            return position_from_board_ad(self.boards[i])
        return engine.Position(self.boards[i])

    def seated(self, i: int) -> tuple:
        """(the agent on roll in game `i`, its opponent)."""
        if self.on_roll[i] == self.a_seat[i]:
            return self.agents[0], self.agents[1]
        return self.agents[1], self.agents[0]

    def context(self, i: int) -> GameContext:
        """The cube and match of game `i` from the view of the side on roll."""
        s = self.settings
        match = self.matches[i]
        return GameContext.of_side(
            int(self.on_roll[i]),
            cube_value=int(self.cube[i]),
            cube_owner=int(self.owner[i]),
            score=(match.score[0], match.score[1]),
            cube_enabled=s.cube,
            match_to=s.match_to,
            crawford=match.crawford,
            jacoby=s.jacoby,
            beavers=s.beavers,
        )

    def opening(self, idx: np.ndarray) -> None:
        """The opening rolls of games `idx`: rolled until the dice differ; the higher die's
        side is on roll, the roll pending for it."""
        while len(idx):
            d = self.dice.get(self.sample[idx], self.turn[idx])
            tie = d[:, 0] == d[:, 1]
            first = idx[~tie]
            dd = d[~tie]
            self.on_roll[first] = (dd[:, 1] > dd[:, 0]).astype(np.int64)
            self.pending[first] = np.sort(dd, axis=1)[:, ::-1]
            self.turn[first] += 1
            self.turn[idx[tie]] += 1
            idx = idx[tie]

    def finish(self, i: int, winner: int, value: int, points: int) -> None:
        """Game `i` is over: seat `winner` won `value` (1-3) for `points`. A match goes on
        with a new game, opening roll included."""
        s = self.settings
        match = self.matches[i]
        res = GameResult(
            sample=int(self.samples[self.sample[i]]),
            copy=int(self.copy[i]),
            a_seat=int(self.a_seat[i]),
            winner=winner,
            value=value,
            cube=int(self.cube[i]),
            points=points,
        )
        if s.record:
            res.record = _record(self.events[i], s, res, (match.score[0], match.score[1]))
        self.events[i] = []
        if s.match_to:
            match.after_game(points, winner)
            if match.over:
                res.match_winner = winner
                self.active[i] = False
            else:
                self.boards[i] = self.start_board
                self.cube[i], self.owner[i], self.ply[i], self.extra[i] = 1, -1, 0, False
                self.opening(np.array([i]))
        else:
            self.active[i] = False
        self.results.append(res)
        if self.on_result:
            self.on_result(res)


def _choose(
    agent, games: _Games, idx: np.ndarray, dice: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The afterstates `agent` picks in games `idx`, and whether each mover rolls again
    (acey-deucey only). A cube-aware agent that ranks plays in context (the td agent) is
    told each game's cube and match, unless there is neither."""
    boards = games.boards[idx]
    if games.acey_deucey:
        return agent.choose_turns_ad(boards, dice)
    return _choose_boards(agent, games, idx, boards, dice), np.zeros(len(idx), bool)


def _choose_boards(
    agent, games: _Games, idx: np.ndarray, boards: np.ndarray, dice: np.ndarray
) -> np.ndarray:
    if getattr(agent, "ranks_in_context", False) and agent.cube_aware:
        settings = games.settings
        if settings.cube or settings.match_to:
            return agent.choose_boards(boards, dice, [games.context(i) for i in idx])
    if hasattr(agent, "choose_boards"):
        return agent.choose_boards(boards, dice)
    out = boards.copy()
    for i, (b, d) in enumerate(zip(boards, dice, strict=True)):
        pos = engine.Position(b)
        roll = (int(d[0]), int(d[1]))
        if engine.legal_plays(pos, roll):
            out[i] = agent.choose_play(pos, roll).position.board
    return out


def play_chunk(
    agents: tuple,
    samples: range,
    seed: int,
    settings: PairSettings,
    on_result: Callable[[GameResult], None] | None = None,
) -> list[GameResult]:
    """Play the mirrored samples `samples` of a pair in lockstep; results in finishing order."""
    for i, agent in enumerate(agents):
        if hasattr(agent, "reseed"):
            agent.reseed(int(np.random.SeedSequence([seed, samples.start, i]).generate_state(1)[0]))
    games = _Games.new(agents, samples, seed, settings, on_result)
    games.opening(np.arange(len(games.boards)))
    cube_play = any(a.cube_aware for a in agents)  # the others never double nor resign
    for _ in range(MAX_TURNS * 4):
        idx = np.flatnonzero(games.active)
        if not len(idx) or stop_requested():  # the pool wants the games finished so far
            return games.results
        if cube_play:
            idx = _cube_phase(games, idx, games.finish)
        _play_turns(games, idx)
    raise RuntimeError(f"games did not end within {MAX_TURNS} turns")


def _play_turns(games: _Games, idx: np.ndarray) -> None:
    """Games `idx` roll (the opening roll is pending) and play; games that end finish,
    the others pass the dice (or, rolling again, keep them)."""
    later = games.ply[idx] > 0
    d = games.pending[idx].copy()
    if later.any():
        d[later] = games.dice.get(games.sample[idx[later]], games.turn[idx[later]])
        games.turn[idx[later]] += 1
    mover_is_a = games.on_roll[idx] == games.a_seat[idx]
    new = games.boards[idx].copy()
    again = np.zeros(len(idx), dtype=bool)
    for agent, mask in ((games.agents[0], mover_is_a), (games.agents[1], ~mover_is_a)):
        if mask.any():
            new[mask], again[mask] = _choose(agent, games, idx[mask], d[mask])
    if games.settings.record:
        for j, i in enumerate(idx):
            games.events[i].append(
                _Move(
                    int(games.on_roll[i]),
                    (int(d[j, 0]), int(d[j, 1])),
                    games.boards[i].copy(),
                    new[j].copy(),
                    bool(again[j]),
                )
            )
    value = games.game_value(new)
    for k in np.flatnonzero(value > 0):
        g = int(idx[k])
        games.boards[g] = new[k]
        v = int(value[k])
        games.finish(g, int(games.on_roll[g]), v, games.context(g).game_points(v))
    go = value == 0
    stay = go & again  # an extra roll: the same side, the board not turned
    games.boards[idx[go]] = np.where(again[go, None, None], new[go], new[go][:, ::-1])
    games.on_roll[idx[go & ~again]] ^= 1
    games.extra[idx[go]] = stay[go]
    games.ply[idx[go]] += 1


def _start_board(variant: str) -> np.ndarray:
    """The variant's starting board: (2, 25), or (2, 26) for acey-deucey."""
    if engine.get_variant(variant).enter_from_start:
        from engine.acey_deucey import start_boards_ad

        return start_boards_ad(1)[0]
    return engine.Position.start(variant).board


def _game_value(variant: str) -> Callable[[np.ndarray], np.ndarray]:
    """What the mover of each afterstate has won (0 not over), by the variant's rules."""
    if engine.get_variant(variant).enter_from_start:
        from engine.acey_deucey import game_value_ad

        return game_value_ad
    return engine.game_value


def _cube_phase(
    games: _Games, idx: np.ndarray, finish: Callable[[int, int, int, int], None]
) -> np.ndarray:
    """Resignation and double offers of cube-aware agents before their roll; the games
    still going on come back.

    With beavers allowed, a side that takes may beaver if its agent says so
    (`beaver_decision`, asked only then): it takes and at once redoubles, keeping the
    cube, now at four times its value (as GNU Backgammon's ``redouble`` and as `vrhcaby
    play` do). The original doubler answers no beaver: no raccoons here (GNU
    Backgammon allows up to three by default, ``set beavers``; its bot raccoons only a
    beaver it judges wrong)."""
    keep = []
    for i in idx:
        seat = int(games.on_roll[i])
        me, them = games.seated(i)
        if not (me.cube_aware or them.cube_aware) or games.ply[i] == 0 or games.extra[i]:
            keep.append(i)
            continue
        pos = games.position(i)
        ctx = games.context(i)
        events = games.events[i]
        offer = me.resign_offer(pos, ctx)
        if offer and them.accept_resignation(pos.flip(), ctx.flip(), offer):
            events.append(("resign", seat, offer))
            finish(i, 1 - seat, offer, offer * int(games.cube[i]))
            continue
        if ctx.may_double() and me.double_decision(pos, ctx):
            events.append(("double", seat, int(games.cube[i]) * 2))
            if them.take_decision(pos.flip(), ctx.flip()):
                beaver = getattr(them, "beaver_decision", None)
                if (
                    beaver is not None
                    and ctx.beavers
                    and 4 * games.cube[i] <= ctx.max_cube
                    and beaver(pos.flip(), ctx.flip())
                ):
                    games.cube[i] *= 4
                    events.append(("beaver", 1 - seat, int(games.cube[i])))
                else:
                    events.append(("take", 1 - seat))
                    games.cube[i] *= 2
                games.owner[i] = 1 - seat
            else:
                events.append(("drop", 1 - seat))
                finish(i, seat, 1, int(games.cube[i]))
                continue
        keep.append(i)
    return np.array(keep, dtype=np.int64)


def _record(
    events: list[_Move | _Action], settings: PairSettings, game: GameResult, score: tuple[int, int]
) -> dict:
    """A finished game as a JSON-ready record (`score` the match's before it); plays
    recovered as notation."""
    turns = []
    for ev in events:
        if isinstance(ev, _Move):
            turns.append(_move_record(settings.variant, ev))
        elif ev[0] in ("double", "beaver"):
            turns.append({"player": ev[1], "action": ev[0], "cube": ev[2]})
        elif ev[0] in ("take", "drop"):
            turns.append({"player": ev[1], "action": ev[0]})
        else:
            turns.append({"player": ev[1], "action": "resign", "value": ev[2]})
    return {
        "variant": settings.variant,
        "match_to": settings.match_to,
        "score": list(score),
        "turns": turns,
        "winner": game.winner,
        "value": game.value,
        "cube": game.cube,
        "points": game.points,
    }


def _move_record(variant: str, move: _Move) -> dict:
    """One turn of a recorded game: the play in notation, its steps and the position it
    was played from (acey-deucey: with the waiting checkers, and whether it rolls again)."""
    acey_deucey = engine.get_variant(variant).enter_from_start
    if acey_deucey:
        from engine.acey_deucey import position_from_board_ad
        from engine.waiting import waiting_id

        pos = position_from_board_ad(move.before)
    else:
        pos = engine.Position(move.before)
    text, steps = "", []
    if not np.array_equal(move.before, move.after):
        if acey_deucey:
            play = play_reaching_ad(pos, move.dice, move.after, move.again)
        else:
            play = play_reaching(pos, move.dice, move.after)
        text = str(play)
        steps = [[a, b, int(h)] for (a, b), h in zip(play.steps, play.hits, strict=True)]
    record = {
        "player": move.seat,
        "dice": list(move.dice),
        "play": text,
        "steps": steps,
        "position_id": waiting_id(pos) if acey_deucey else pos.position_id(),
    }
    if acey_deucey:
        record["extra_turn"] = move.again
    return record


@dataclass(frozen=True)
class PairJob:
    """A pair's games as a job of chunks of samples (`vrhcaby.play.ray.Job`)."""

    agents: tuple
    seed: int
    settings: PairSettings

    def run(self, chunk: range) -> list[GameResult]:
        return play_chunk(self.agents, chunk, self.seed, self.settings)


def _worker_chunk(samples: range) -> list[GameResult]:
    return play_chunk(SHARED["agents"], samples, SHARED["seed"], SHARED["settings"])


def run_pair(
    agent_a,
    agent_b,
    *,
    samples: int,
    seed: int,
    settings: PairSettings,
    jobs: int = 1,
    on_result: Callable[[GameResult], None] | None = None,
    backend: str = "local",
    workers: int = 0,
    done: Sequence[GameResult] = (),
    on_chunk: Callable[[range, list[GameResult]], None] | None = None,
) -> tuple[list[GameResult], bool]:
    """All games of a pair and whether Ctrl-C cut them short (the finished ones are kept).

    `backend` "local" plays in `jobs` processes here; "ray" spreads the chunks over the
    connected Ray cluster, `workers` at a time (0 = all its CPUs), with the same results.
    `done` holds the games of an earlier, interrupted run of this pair with the same
    settings: the chunks whose samples it completes are kept as they are, not played
    again (a chunk's games depend on the seed and its samples alone), the others played.
    `on_chunk` is handed each chunk played here to its end, with its games, as it ends:
    what a run saves as it goes, to hand a later run as `done` after a stop or a kill.
    """
    agents = (agent_a, agent_b)
    results: list[GameResult] = []
    parts = []
    finished = complete_samples(done, settings)
    for chunk in growing_chunks(samples, CHUNK):
        if all(s in finished for s in chunk):
            results += [r for r in done if r.sample in chunk]
        else:
            parts.append(chunk)
    if on_result:
        for r in results:
            on_result(r)
    starts = [chunk.start for chunk in parts]
    playing: dict[int, list[GameResult]] = {}  # a chunk's start -> its games so far

    def keep(r: GameResult) -> None:
        results.append(r)
        if on_result:
            on_result(r)
        if on_chunk:
            chunk = parts[bisect.bisect_right(starts, r.sample) - 1]
            games = playing.setdefault(chunk.start, [])
            games.append(r)
            if len(complete_samples(games, settings)) == len(chunk):
                on_chunk(chunk, playing.pop(chunk.start))

    if backend == "ray":
        from vrhcaby.play.ray import run_ray

        def take(_: range, chunk_results: list[GameResult]) -> None:
            for r in chunk_results:
                keep(r)

        interrupted = run_ray(
            PairJob(agents, seed, settings), parts, workers=workers, on_result=take
        )
        return results, interrupted
    try:
        if jobs <= 1 or len(parts) <= 1:
            for chunk in parts:
                play_chunk(agents, chunk, seed, settings, keep)
        else:
            processes = min(jobs, len(parts))
            shared = {"agents": agents, "seed": seed, "settings": settings}
            with WorkerPool(processes, _worker_chunk, **shared) as pool:
                try:
                    for chunk_results in pool.imap_unordered(parts):
                        for r in chunk_results:
                            keep(r)
                except BaseException as exc:  # Ctrl-C: the chunks in flight's finished games
                    if caused_by_interrupt(exc):
                        for chunk_results in pool.cut_short():
                            for r in chunk_results:
                                keep(r)
                    raise
    except KeyboardInterrupt:
        return results, True
    except SystemError as exc:  # an interrupt inside numba's unpickling (pool.caused_by_interrupt)
        if not caused_by_interrupt(exc):
            raise
        return results, True
    return results, False


def cubeless_agents(agents) -> list[str]:
    """The names of those `agents` that have no cube decisions (see `Agent.cube_aware`)."""
    return [a.name for a in agents if not getattr(a, "cube_aware", False)]


def complete_samples(results: Iterable[GameResult], settings: PairSettings) -> set[int]:
    """The samples whose games `results` complete: both mirrored copies (or the one),
    each a finished game, or in match play a finished match."""
    copies = 2 if settings.mirrored else 1
    ended: dict[int, set[int]] = {}
    for g in results:
        if not settings.match_to or g.match_winner >= 0:
            ended.setdefault(g.sample, set()).add(g.copy)
    return {s for s, done in ended.items() if len(done) == copies}


def summarise(
    a: str,
    b: str,
    results: list[GameResult],
    settings: PairSettings,
    interrupted: bool = False,
    cubeless: list[str] | None = None,
) -> PairResult:
    """Per-pair statistics over complete samples (both mirrored games, or matches, done);
    `cubeless` names the agents of the pair without cube decisions."""
    by_sample: dict[int, list[GameResult]] = {}
    for r in results:
        by_sample.setdefault(r.sample, []).append(r)
    finished = complete_samples(results, settings)
    complete = [(s, games) for s, games in sorted(by_sample.items()) if s in finished]
    games = [g for _, gs in complete for g in gs]
    ppg_samples = np.array(
        [sum(g.a_points for g in gs) / len(gs) for _, gs in complete], dtype=np.float64
    )
    ppg, lo, hi = mean_ci95(ppg_samples)

    def count(values: tuple[int, ...]) -> tuple[int, int]:
        a_won = sum(1 for g in games if g.winner == g.a_seat and g.value in values)
        b_won = sum(1 for g in games if g.winner != g.a_seat and g.value in values)
        return a_won, b_won

    out = PairResult(
        a=a,
        b=b,
        games=len(games),
        ppg=ppg,
        ci95=(lo, hi),
        wins=count((1, 2, 3)),
        gammons=count((2,)),
        backgammons=count((3,)),
        pairs=len(complete),
        mirrored=settings.mirrored,
        match_to=settings.match_to,
        interrupted=interrupted,
        cubeless=list(cubeless or []),
        cube=settings.cube,
        results=games,
    )
    if settings.match_to:
        ends = [g for g in games if g.match_winner >= 0]
        a_matches = sum(1 for g in ends if g.match_winner == g.a_seat)
        out.matches = len(ends)
        out.match_wins = (a_matches, len(ends) - a_matches)
        out.match_win_rate = a_matches / len(ends) if ends else math.nan
        out.match_ci95 = wilson_ci95(a_matches, len(ends))
    return out


def play_pair(
    agent_a,
    agent_b,
    *,
    games: int,
    seed: int,
    settings: PairSettings = PairSettings(),
    jobs: int = 1,
    progress: bool = False,
    backend: str = "local",
    workers: int = 0,
    done: Sequence[GameResult] = (),
    on_chunk: Callable[[range, list[GameResult]], None] | None = None,
) -> PairResult:
    """Play `games` games (or matches) of A against B by `settings` and return A's results.

    Mirrored, `games` is rounded up to an even number: `ceil(games / 2)` pairs.
    `backend` and `workers` choose where the games run, `done` the games an earlier run
    of the pair finished and `on_chunk` what is told of each chunk as it ends, as in
    `run_pair`.
    """
    if games < 1:
        raise ValueError(f"--games must be at least 1, got {games}")
    if games > MAX_GAMES:
        raise ValueError(f"--games must be at most {MAX_GAMES:,}, got {games:,}")
    if seed < 0:
        raise ValueError(f"--seed must be 0 or more, got {seed}")
    check_agents((agent_a, agent_b), settings)
    samples = math.ceil(games / 2) if settings.mirrored else games
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=samples * (2 if settings.mirrored else 1),
            unit="game",
            leave=False,
            desc=f"{agent_a.name} vs {agent_b.name}",
        )

    def tick(r: GameResult) -> None:
        if bar is not None and (not settings.match_to or r.match_winner >= 0):
            bar.update(1)

    try:
        results, interrupted = run_pair(
            agent_a,
            agent_b,
            samples=samples,
            seed=seed,
            settings=settings,
            jobs=jobs,
            backend=backend,
            workers=workers,
            on_result=tick if bar else None,
            done=done,
            on_chunk=on_chunk,
        )
    finally:
        if bar:
            bar.close()
    cubeless = cubeless_agents((agent_a, agent_b))
    return summarise(agent_a.name, agent_b.name, results, settings, interrupted, cubeless)
