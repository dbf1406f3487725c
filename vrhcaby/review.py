"""Whole games and matches judged: each player's error rates, as GNU Backgammon's
``analyse match`` and ``show statistics match`` report them.

`analyse_match(match, judge)` takes a `.mat` file read and replayed
(`vrhcaby.io.matchfile.read_mat`) and judges every checker play and cube decision of both
players with a `Judge`: the project's own search (`TDJudge`, the ``td`` agent's network
and look-ahead) or GNU Backgammon's evaluations (`GnubgJudge`, through ``gnubg_nn``). What
comes back (`MatchAnalysis`, `.to_json()`) is gnubg's statistics, decision by decision:

* **Checker play.** The judge values every legal play of the roll cubefully in the game's
  context (money: per unit of the cube; match: EMG, gnubg's normalised equity), all at
  0-ply and the best through move filters to its depth; the play made is always valued at
  full depth (as gnubg keeps it through its filters). The error is the best play's equity
  minus the play made's. Only *unforced* moves (more than one legal play) count towards the
  error rate; every move is marked.
* **Cube decisions.** Before each roll where the side on roll may double (not the
  opening roll), the judge's cube decision (no double, double/take, double/pass: ND, DT,
  DP, cubeful; for `TDJudge` the project's cubeful n-ply cube search, `agents.cubeful`,
  for `GnubgJudge` Janowski's formula on gnubg's probabilities): not doubling costs
  ``optimal - ND``; a double ``optimal - min(DT, DP)``; a take ``DT - DP`` when passing
  was right, a pass ``DP - DT`` when taking was (all from the doubler's view, as gnubg's
  ``updateStatcontext``). A decision is *close* when doubling would cost less than 0.16
  (gnubg's ``isCloseCubedecision``); every double, take and pass is close. Beavers are
  not judged (nor are they by gnubg).
* **Marks.** gnubg's default thresholds (``arSkillLevel``, in normalised equity): an error
  over 0.03 is *doubtful*, over 0.06 *bad* (an error), over 0.12 *very bad* (a blunder).
* **Rates.** Per player: the checker error per unforced move, the cube error per close
  cube decision, the overall error per (unforced moves + close cube decisions), each in
  millipoints (mEMG in a match: gnubg's "Error rate mEMG"), with the totals; the cost in
  money points (money: the error times the cube) or match winning chance; and gnubg's
  "Snowie error rate", the overall total per move of both players.

The judge's evaluations are batched over the whole match: one search covers every
checker decision, one cube search every cube decision of one game context.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np

import engine
from agents import cubeful, search
from agents.td import Ranking, TDAgent
from vrhcaby.analysis import CUBE_PLIES
from vrhcaby.equity import cube, decisions, met
from vrhcaby.equity.context import GameContext
from vrhcaby.equity.outcomes import invert
from vrhcaby.io.matchfile import MatGame, MatMatch, MatTurn

__all__ = [
    "BAD",
    "DOUBTFUL",
    "VERY_BAD",
    "Decision",
    "GnubgJudge",
    "Judge",
    "MatchAnalysis",
    "PlayerStats",
    "TDJudge",
    "analyse_match",
    "mark",
    "merge",
]

#: GNU Backgammon's default skill thresholds (``arSkillLevel``, as gnubg 1.07's ``show
#: analysis`` gives them; older sources had 0.04, 0.08, 0.16): an error over each, in
#: normalised equity (money per unit of the cube, EMG in a match), is doubtful, bad (an
#: error), very bad (a blunder).
DOUBTFUL, BAD, VERY_BAD = 0.03, 0.06, 0.12
#: A cube decision is close when doubling costs less than this (gnubg's
#: ``isCloseCubedecision``).
CLOSE_CUBE = 0.16


def mark(error: float) -> str:
    """gnubg's mark of a decision that cost `error` (normalised equity, >= 0): "very bad",
    "bad", "doubtful" or "" (gnubg's ``Skill``)."""
    if error > VERY_BAD:
        return "very bad"
    if error > BAD:
        return "bad"
    if error > DOUBTFUL:
        return "doubtful"
    return ""


# --- judges ------------------------------------------------------------------------------


class Judge(Protocol):
    """What a judge answers: the probabilities of afterstates (the mover in row 1, the
    opponent to roll) at each stage of the checker search, and the cube decisions of
    positions before the roll (the side on roll in row 1), each in its game context."""

    #: How the judge is named in reports ("td 2-ply", "gnubg 0-ply").
    name: str
    #: The depth checker plays are judged at.
    plies: int
    #: Move filters: how many candidates of each stage of the search go on to the next
    #: (as many stages as the search has beyond 0-ply).
    filter: tuple[int, ...]
    #: The cube efficiencies its cubeful equities use.
    efficiency: cube.Efficiency

    def afterstates(self, after: np.ndarray, depth: int) -> np.ndarray:
        """Five probabilities (N, 5) of each afterstate (N, 2, 25) for its mover at stage
        `depth` of the search (0: 0-ply)."""
        ...

    def cube_decisions(
        self, boards: np.ndarray, contexts: Sequence[GameContext], known: dict[bytes, np.ndarray]
    ) -> list[cube.CubeDecision]:
        """The cube decision of the side on roll of each board (B, 2, 25) in its context.
        `known` holds the full-depth probabilities of the afterstates the checker search
        judged (by `_key`), which a judge whose cube depth is its checker depth may use: a
        position before the roll is the opponent's afterstate seen from the other side."""
        ...


class TDJudge:
    """The project's own judge: a `TDAgent`'s network and n-ply search (`agents.search`,
    pruned if the agent is), its move filters and cube efficiencies. Cube decisions are
    the project's cube analysis at `cube_plies` (default `vrhcaby.analysis.CUBE_PLIES`,
    1, the depth measured best on the cube yardstick, whatever `plies`), what ``vrhcaby
    cube --cube-plies`` shows: GNU Backgammon's cubeful n-ply search (`agents.cubeful`,
    pruned as the agent is), Janowski's formula on the 0-ply probabilities at 0 plies."""

    def __init__(self, agent: TDAgent, plies: int | None = None, cube_plies: int | None = None):
        self.agent = agent
        self.plies = agent.plies if plies is None else plies
        if self.plies not in (0, 1, 2):
            raise ValueError(f"td judges at 0, 1 or 2 plies, got {self.plies}")
        self.cube_plies = CUBE_PLIES if cube_plies is None else cube_plies
        if self.cube_plies not in (0, 1, 2):
            raise ValueError(f"td judges cube decisions at 0, 1 or 2 plies, got {self.cube_plies}")
        self.filter = agent.filter[: self.plies]
        self.efficiency = agent.efficiency
        self.name = f"{agent.name} {self.plies}-ply (cube {self.cube_plies}-ply)"

    def afterstates(self, after: np.ndarray, depth: int) -> np.ndarray:
        return self.agent.probabilities(after, depth)

    def cube_decisions(
        self, boards: np.ndarray, contexts: Sequence[GameContext], known: dict[bytes, np.ndarray]
    ) -> list[cube.CubeDecision]:
        out: list[cube.CubeDecision | None] = [None] * len(boards)
        groups: dict[GameContext, list[int]] = {}
        for i, c in enumerate(contexts):
            groups.setdefault(c, []).append(i)
        for context, rows in groups.items():  # one batched search per game context
            v = cubeful.cubeful_values(
                self.agent.evaluator,
                np.asarray(boards)[rows],
                context,
                self.cube_plies,
                params=self.efficiency,
                prune=self.agent.prune,
            )
            for k, i in enumerate(rows):
                nd, dt = float(v.nd[k]), float(v.dt[k])
                out[i] = decisions.searched_decision(v.probabilities[k], nd, dt, context)
        return [d for d in out if d is not None]


class GnubgJudge:
    """GNU Backgammon's evaluations (``gnubg_nn``) at `plies` (0 to 4): its networks, its
    bear-off databases and its own n-ply look-ahead; the cube efficiencies of its eval.c.
    Candidates go from 0-ply straight to `plies` through one filter of 16, as gnubg's
    default analysis filter does (16 within 0.32 of the best). Cube decisions are
    Janowski's formula on gnubg's probabilities before the roll at `plies` (at 0-ply
    gnubg's own cube analysis; at more plies gnubg searches the cube cubefully)."""

    def __init__(self, plies: int = 0) -> None:
        from agents.gnubg import require_gnubg_nn

        if not 0 <= plies <= 4:
            raise ValueError(f"gnubg judges at 0 to 4 plies, got {plies}")
        self._nn = require_gnubg_nn("the gnubg judge")
        self.plies = plies
        self.filter = (16,) if plies else ()
        self.efficiency = cube.GNUBG_EFFICIENCY
        self.name = f"gnubg {plies}-ply"

    def __getstate__(self) -> dict:
        # The gnubg_nn module does not pickle; a worker process imports its own.
        return {k: v for k, v in self.__dict__.items() if k != "_nn"}

    def __setstate__(self, state: dict) -> None:
        from agents.gnubg import require_gnubg_nn

        self.__dict__.update(state)
        self._nn = require_gnubg_nn("the gnubg judge")

    def afterstates(self, after: np.ndarray, depth: int) -> np.ndarray:
        # One stage beyond 0-ply: gnubg's own search to `plies` (for the opponent on roll:
        # plies count from the position the play reaches, as the mover's).
        n = 0 if depth == 0 else self.plies
        out = np.empty((len(after), 5), dtype=np.float64)
        for i, a in enumerate(np.asarray(after)):
            out[i] = self._nn.probabilities(a[::-1].tolist(), n)
        return invert(out)

    def cube_decisions(
        self, boards: np.ndarray, contexts: Sequence[GameContext], known: dict[bytes, np.ndarray]
    ) -> list[cube.CubeDecision]:
        out = []
        for board, context in zip(np.asarray(boards), contexts, strict=True):
            seen = known.get(_key(board[::-1]))
            if seen is None:
                p = np.asarray(self._nn.probabilities(board.tolist(), self.plies), dtype=np.float64)
            else:
                p = invert(seen)
            out.append(decisions.cube_decision(p, board, context, params=self.efficiency))
        return out


# --- results -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """One judged decision of one player."""

    game: int
    #: The line of the `.mat` file it was read from.
    line: int
    player: int
    #: "checker", "double" (double or not, before a roll), "take" (take or pass).
    kind: str
    #: The position before the decision, `PositionID:MatchID` (the decider's checkers
    #: as the player on roll's, its dice for a checker play).
    position: str
    dice: tuple[int, int] | None
    #: What the player did and what the judge prefers: plays in notation, or "no double",
    #: "double", "take", "pass".
    made: str
    best: str
    #: Equity lost, normalised (money per unit of the cube, EMG in a match), >= 0.
    error: float
    #: The same in money points (the error times the cube) or match winning chance.
    cost: float
    mark: str
    #: Whether it counts towards the error rate: an unforced move (more than one legal
    #: play), a close or actual cube decision.
    counted: bool


@dataclass
class PlayerStats:
    """One player's statistics, as gnubg's ``show statistics match``."""

    name: str
    #: Checker plays: every roll, those with more than one legal play, and their marks.
    moves: int = 0
    unforced: int = 0
    doubtful: int = 0
    bad: int = 0
    very_bad: int = 0
    #: Cube decisions: all judged, and the close or actual ones (the rate's count).
    cube_decisions: int = 0
    close_cube: int = 0
    doubles: int = 0
    takes: int = 0
    passes: int = 0
    #: Total errors (normalised) and costs (money points or MWC).
    checker_error: float = 0.0
    cube_error: float = 0.0
    checker_cost: float = 0.0
    cube_cost: float = 0.0

    @property
    def unmarked(self) -> int:
        """Moves without a mark (forced moves among them), as gnubg counts them."""
        return self.moves - self.doubtful - self.bad - self.very_bad

    @property
    def error(self) -> float:
        return self.checker_error + self.cube_error

    @property
    def cost(self) -> float:
        return self.checker_cost + self.cube_cost

    @property
    def checker_rate(self) -> float:
        """Checker error per unforced move, in millipoints (mEMG in a match); 0 without any."""
        return _per(self.checker_error, self.unforced)

    @property
    def cube_rate(self) -> float:
        """Cube error per close or actual cube decision, in millipoints."""
        return _per(self.cube_error, self.close_cube)

    @property
    def rate(self) -> float:
        """Overall error per decision (unforced moves and close cube decisions), in
        millipoints: gnubg's "Error rate" in its overall statistics."""
        return _per(self.error, self.unforced + self.close_cube)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        for name in ("unmarked", "error", "cost", "checker_rate", "cube_rate", "rate"):
            out[name] = getattr(self, name)
        return out


def _per(total: float, n: int) -> float:
    return 1000.0 * total / n if n else 0.0


@dataclass
class MatchAnalysis:
    """A match or session judged: per player statistics and every decision."""

    path: str
    match_to: int
    judge: str
    games: int
    players: tuple[PlayerStats, PlayerStats]
    decisions: list[Decision] = field(default_factory=list)

    @property
    def snowie_rate(self) -> tuple[float, float]:
        """gnubg's "Snowie error rate" of each player: its total error per move of both
        players, in millipoints."""
        moves = self.players[0].moves + self.players[1].moves
        return (_per(self.players[0].error, moves), _per(self.players[1].error, moves))

    def worst(self, n: int) -> list[Decision]:
        """The `n` costliest decisions (normalised error), worst first."""
        hurt = [d for d in self.decisions if d.error > 0]
        return sorted(hurt, key=lambda d: -d.error)[:n]

    def to_json(self, worst: int = 10) -> dict[str, Any]:
        """A JSON-ready summary: the match, each player's statistics (with gnubg's Snowie
        rate) and the `worst` costliest decisions."""
        snowie = self.snowie_rate
        return {
            "path": self.path,
            "match_to": self.match_to,
            "judge": self.judge,
            "games": self.games,
            "unit": "mEMG" if self.match_to else "millipoints",
            "players": [
                dict(p.to_json(), snowie_rate=s) for p, s in zip(self.players, snowie, strict=True)
            ],
            "worst": [asdict(d) for d in self.worst(worst)],
        }


def _order(d: Decision) -> tuple[int, int, int, bool]:
    """Decisions in the order they were taken: a double (or not) before the roll's play."""
    return (d.game, d.line, d.player, d.kind != "double")


def merge(parts: Sequence[MatchAnalysis]) -> MatchAnalysis:
    """The analyses of parts of one match (games analysed apart, by worker processes) as
    one: gnubg's match statistics are the sums of its games'."""
    first = parts[0]
    players = (PlayerStats(first.players[0].name), PlayerStats(first.players[1].name))
    for part in parts:
        for mine, theirs in zip(players, part.players, strict=True):
            for name, value in asdict(theirs).items():
                if name != "name":
                    setattr(mine, name, getattr(mine, name) + value)
    games = sum(part.games for part in parts)
    out = MatchAnalysis(first.path, first.match_to, first.judge, games, players)
    out.decisions = sorted((d for part in parts for d in part.decisions), key=_order)
    return out


# --- the analysis ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Setting:
    cube: bool
    jacoby: bool


def _context(match: MatMatch, game: MatGame, turn: MatTurn, setting: _Setting) -> GameContext:
    return GameContext.of_side(
        turn.seat,
        cube_value=turn.cube_value,
        cube_owner=turn.cube_owner,
        score=game.score,
        cube_enabled=setting.cube,
        match_to=match.match_to,
        crawford=game.crawford,
        jacoby=setting.jacoby,
    )


def _position(
    match: MatMatch, game: MatGame, at: MatTurn, seat: int, board: np.ndarray, **state: Any
) -> str:
    """`PositionID:MatchID` of `board` (`seat` in row 1) in the game's state."""
    ms = engine.MatchState(
        cube_value=at.cube_value,
        cube_owner=at.cube_owner,
        dice_owner=seat,
        crawford=game.crawford,
        match_length=match.match_to,
        score=game.score if match.match_to else (0, 0),
        **state,
    )
    return engine.gnubg_id(board, ms)


def _cost(error: float, context: GameContext) -> float:
    """An error's cost: money points (times the cube) or match winning chance."""
    if not context.match_to:
        return error * context.cube_value
    away_me, away_opp = context.away()
    c, value = context.crawford, context.cube_value
    zero = met.emg_to_mwc(0.0, away_me, away_opp, value, crawford=c)
    return float(zero - met.emg_to_mwc(-error, away_me, away_opp, value, crawford=c))


def analyse_match(
    match: MatMatch, judge: Judge, *, cube: bool = True, jacoby: bool = False
) -> MatchAnalysis:
    """Every checker play and cube decision of `match` judged by `judge` (see the module's
    docstring). `cube=False` judges the games as played without a cube (cubeless money
    equity, no cube decisions); `jacoby` applies the Jacoby rule in money play."""
    setting = _Setting(cube=cube, jacoby=jacoby)
    players = (PlayerStats(match.names[0]), PlayerStats(match.names[1]))
    out = MatchAnalysis(match.path, match.match_to, judge.name, len(match.games), players)
    moves = [(g, t) for g in match.games for t in g.turns if t.kind == "move"]
    checker, known = _checker_decisions(match, moves, judge, setting)
    out.decisions += checker
    if cube:
        out.decisions += _cube_decisions(match, judge, setting, known)
    out.decisions.sort(key=_order)
    for d in out.decisions:
        p = players[d.player]
        if d.kind == "checker":
            p.moves += 1
            p.unforced += d.counted
            p.doubtful += d.mark == "doubtful"
            p.bad += d.mark == "bad"
            p.very_bad += d.mark == "very bad"
            if d.counted:
                p.checker_error += d.error
                p.checker_cost += d.cost
            continue
        p.cube_decisions += 1
        p.close_cube += d.counted
        p.doubles += d.kind == "double" and d.made == "double"
        p.takes += d.made == "take"
        p.passes += d.made == "pass"
        p.cube_error += d.error
        p.cube_cost += d.cost
    return out


def _checker_decisions(
    match: MatMatch, moves: Sequence[tuple[MatGame, MatTurn]], judge: Judge, setting: _Setting
) -> tuple[list[Decision], dict[bytes, np.ndarray]]:
    """Every move judged, in one batched search over all of them; with the probabilities
    of the plays made at full depth, by their afterstate (`_key`), which are those of the
    opponent's next position before its roll."""
    if not moves:
        return [], {}
    boards = np.stack([t.board for _, t in moves])
    dice = np.array([t.dice or (1, 1) for _, t in moves], dtype=np.int64)
    contexts = [_context(match, g, t, setting) for g, t in moves]
    after, parent = engine.batch_afterstates(boards, dice)
    starts = np.searchsorted(parent, np.arange(len(moves) + 1))
    played = np.zeros(len(after), dtype=bool)
    for i, (_, t) in enumerate(moves):
        if t.after is not None:
            span = slice(starts[i], starts[i + 1])
            played[span] = (after[span] == t.after).all(axis=(1, 2))
    ranked = Ranking(after, parent, contexts, judge.efficiency)
    stages = len(judge.filter)
    found = search.filtered_search(
        None,  # type: ignore[arg-type]  # the judge values candidates (`ply`)
        after,
        parent,
        boards,
        stages,
        judge.filter,
        ranked,
        keep=played,
        ply=judge.afterstates,
    )
    deep = np.where(found.plies == stages, found.values, -np.inf)
    best = search.best_rows(deep, parent, len(moves))
    known = {_key(after[r]): found.probabilities[r] for r in np.flatnonzero(played)}
    out = []
    for i, (g, t) in enumerate(moves):
        rows = np.arange(starts[i], starts[i + 1])
        counted = len(rows) > 1
        made = "" if t.after is None else _play_text(t, t.after)
        error, top = 0.0, made
        if counted:
            mine = rows[played[rows]][0]
            error = max(0.0, float(deep[best[i]] - deep[mine]))
            top = _play_text(t, after[best[i]]) if best[i] != mine else made
        position = _position(match, g, t, t.seat, t.board, dice=t.dice)
        out.append(
            Decision(
                g.number,
                t.line,
                t.seat,
                "checker",
                position,
                t.dice,
                made or "(no play)",
                top or "(no play)",
                error,
                _cost(error, contexts[i]),
                mark(error),
                counted,
            )
        )
    return out, known


def _play_text(turn: MatTurn, after: np.ndarray) -> str:
    """The notation of the legal play of `turn`'s roll that reaches `after`."""
    assert turn.dice is not None
    for play in engine.legal_plays(engine.Position(turn.board), turn.dice):
        if np.array_equal(play.position.board, after):
            return str(play)
    raise AssertionError("a searched afterstate is a legal play")


def _key(board: np.ndarray) -> bytes:
    return np.asarray(board, dtype=np.int8).tobytes()


def _cube_decisions(
    match: MatMatch, judge: Judge, setting: _Setting, known: dict[bytes, np.ndarray]
) -> list[Decision]:
    """Every cube decision judged: before each roll where the side on roll may double,
    each double and each answer, the judge's decisions asked for all of them at once."""
    asked: list[tuple[MatGame, MatTurn, GameContext, MatTurn | None]] = []
    for g in match.games:
        turns = g.turns
        for k, t in enumerate(turns):
            if t.kind == "double":
                answer = turns[k + 1] if k + 1 < len(turns) else None
                asked.append((g, t, _context(match, g, t, setting), answer))
            elif t.kind == "move":
                context = _context(match, g, t, setting)
                if context.may_double() and not _opening(t):
                    asked.append((g, t, context, None))
    if not asked:
        return []
    found = judge.cube_decisions(
        np.stack([t.board for _, t, _, _ in asked]), [c for _, _, c, _ in asked], known
    )
    out = []
    for (g, t, context, answer), d in zip(asked, found, strict=True):
        double_best = "double" if d.double else "no double"
        position = _position(match, g, t, t.seat, t.board)
        if t.kind == "move":  # no double: counted when close (gnubg's isCloseCubedecision)
            error = max(0.0, d.optimal - d.nd)
            close = d.optimal - min(d.dt, d.dp) < CLOSE_CUBE
            out.append(_cube(g, t, position, "no double", double_best, error, context, close))
            continue
        error = max(0.0, d.optimal - min(d.dt, d.dp))
        out.append(_cube(g, t, position, "double", double_best, error, context, True))
        if answer is None or answer.kind not in ("take", "drop"):
            continue  # a beaver, or the file ends: not judged, as in gnubg
        theirs = _position(match, g, t, t.seat, t.board, turn=answer.seat, doubled=True)
        took = answer.kind == "take"
        error = max(0.0, (d.dt - d.dp) if took else (d.dp - d.dt))
        best = "take" if d.take else "pass"
        made = "take" if took else "pass"
        out.append(_cube(g, answer, theirs, made, best, error, context, True))
    return out


def _opening(turn: MatTurn) -> bool:
    """Whether `turn` is played from the starting position (no cube decision there)."""
    start = engine.Position.start().board
    return bool(np.array_equal(turn.board, start) or np.array_equal(turn.board[::-1], start))


def _cube(
    game: MatGame,
    turn: MatTurn,
    position: str,
    made: str,
    best: str,
    error: float,
    context: GameContext,
    counted: bool,
) -> Decision:
    """A judged cube decision (`counted`: close or actual, towards the error rate)."""
    kind = "take" if made in ("take", "pass") else "double"
    return Decision(
        game.number,
        turn.line,
        turn.seat,
        kind,
        position,
        None,
        made,
        best,
        error,
        _cost(error, context),
        mark(error),
        counted,
    )
