"""The neural agent: any afterstate evaluator with GNU Backgammon-style look-ahead.

Spec `td[:PATH][?plies=0|1|2&filter=K0,K1&prune=off|on|K&cube_plies=0|1|2&cube_window=W
&cube_prune=on|off|K]`, W on, off, M or D,T,R. The evaluator (from
`vrhcaby.nn.net.load_evaluator`, or any `agents.search.ValueFunction`, with `.variant`)
gives, for each afterstate (mover in row 1, opponent to roll), P(win), P(win gammon),
P(win backgammon), P(lose gammon), P(lose backgammon); the agent turns them into cubeless
money equity.

* 0-ply plays the candidate of highest equity: cubeless money equity, or, given the game's
  `GameContext` with a live cube or a match, the cubeful equity (money) or EMG (match)
  `vrhcaby hint` ranks by (`vrhcaby.equity.decisions.play_equities`), at every ply and filter.
* n-ply values a candidate as minus the average, over the opponent's 21 rolls (weights 1/36
  and 2/36), of the (n-1)-ply value of the reply the opponent picks by 0-ply (as GNU
  Backgammon does). A finished game is worth its points; a roll with no legal reply leaves
  the position as it is, the turn passing back.
* Move filters prune between plies: the best `K0` candidates by 0-ply go on to 1-ply,
  the best `K1` of those by 1-ply to 2-ply (defaults 8 and 3).
* Pruning (`prune=on`, or `prune=K`; off by default) speeds up the reply choice inside
  the search: each roll's replies are ranked by a small pruning network fitted to the
  full one (`agents.search.Pruner`, `load_pruner`) and only its best K (default
  `agents.search.Pruner.keep`) are valued by the full network, which picks among them.
The search is `agents.search`'s (`filtered_search`, `ply_probabilities`), the one `vrhcaby
hint` ranks with; every evaluation of one ply, for all candidates and all boards of a
batch, is one call of the evaluator.

The agent is cube-aware: its double, take, beaver and resignation decisions
(`cube_decision`) look `cube_plies` ahead, apart from its checker play's `plies`. At 1 or
2 plies a cube window (`cube_window`, `CubeWindow`; on by default) skips the search where
the 0-ply analysis is far from the threshold of the question asked (whether to double,
to take or beaver, to resign or accept a resignation), as GNU Backgammon considers a double
only in its market window: there the 0-ply answer stands. Its margins (`CUBE_WINDOW`) come
from the network's own 0-ply against 1-ply analysis, its agreement with the full search
and, for the resignation (0: always 0-ply), games. The cube search's replies are pruned
(`cube_prune`, on in the spec by default) apart from the checker search's (`prune`).
`cube_window=off` searches every decision; `cube_window=M` one margin M for every
question, `cube_window=D,T,R` one for each.

The spec's default cube depth is `CUBE_PLIES`, 1 (since session 26; 0 before), its
resignations 0-ply (the window's resignation margin 0): on the cube yardstick generation
9's windowed, pruned 1-ply cube errs 5.01 millipoints a decision against gnubg 0-ply's
5.14 and its own 0-ply cube's 9.70; a cube tournament against gnubg 0-ply takes about 1.5
times the 0-ply cube's time, a cubeless one the same; against the `gnubg` agent it scored
+0.033 ppg over 100,000 games (generation 8's 0-ply cube +0.029 on the same dice, paired
+0.004 +- 0.015; docs/benchmarks.md, docs/distillation.md).
`td?cube_plies=0` asks for Janowski on the 0-ply probabilities; acey-deucey networks
decide at 0 plies (they have no look-ahead). The analysis commands (`vrhcaby cube`,
`eval`, `analyse`, `serve`) look 2 plies ahead unless told otherwise
(`vrhcaby.analysis.CUBE_PLIES`), searching every position, pruned as `prune` says.

At 0 plies it evaluates the position for the side on roll (`before_roll`: the
opponent's afterstate, seen from the other side) and decides from those five
probabilities with Janowski's cubeful model and the match equity table
(`vrhcaby.equity.decisions`, `vrhcaby.equity.cube`): a cube decision costs about as much
as a 0-ply move. At 1 or 2 plies it decides by GNU Backgammon's cubeful n-ply evaluation
(`agents.cubeful`): no double and double/take are each the average over its 21 rolls of
minus the opponent's cubeful value one ply down, every side in the tree holding its own
cube option, Janowski at the leaves; its resignations by the cubeless probabilities of
the same search. Pruned by `cube_prune`; a 1-ply cube decision costs about a 1-ply checker
play, a 2-ply one pruned about twice that (docs/benchmarks.md).

Acey-deucey (an evaluator whose `variant` is "acey-deucey": boards (2, 26), column 25 the
waiting checkers, and a "rolls again" input): the agent plays at 0 plies by cubeless
money equity, also with the cube or in a match (the cubeful ranking above assumes the
other side rolls next), a 1-2 in two stages (`AfterstateAgent.choose_turns_ad`: the 1 and
the 2, valued with the bonus still due, then the double and its play, valued with
whether they earn another roll; `vrhcaby hint` ranks whole turns instead). Its
cube and resignation decisions are cubeful as above, taken before a turn's first roll
(never before an extra roll), with the waiting checkers counted as on the bar for the
cube efficiency. There is no look-ahead in acey-deucey (plies 0 only).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

import engine
import vrhcaby
from agents import cubeful, search
from agents.base import ACEY_DEUCEY, BOARD_VARIANTS, AfterstateAgent, GameContext, play_reaching
from agents.search import ValueFunction
from vrhcaby.equity import decisions
from vrhcaby.equity.cube import GNUBG_EFFICIENCY, CubeDecision, Efficiency
from vrhcaby.equity.outcomes import equity, invert, outcome
from vrhcaby.nn.checkpoint import CheckpointError
from vrhcaby.nn.encode import waiting_on_bar


def _shipped_networks() -> Path:
    """Where the shipped networks are: `vrhcaby/checkpoints/` in an installed wheel (its
    package data), else `checkpoints/` at the root of the checkout the code runs from."""
    packaged = Path(vrhcaby.__file__).resolve().parent / "checkpoints"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parent.parent / "checkpoints"


#: The shipped networks: `td:NAME` finds `NAME.pt` here from any working directory, in
#: a checkout or an installed wheel.
CHECKPOINTS = _shipped_networks()
#: The network `td` alone loads: the project's shipped default, found beside the code
#: whatever the working directory: a network set of a 256-1024-5 contact network (td-contact.pt's,
#: taught by 1-ply then 2-ply search, grown to 1,024 units, fitted on the positions its
#: own 1-ply search visits, then on its own 2-ply labels with every older one, then on
#: those and the expert-iteration pipeline's labels at a higher rate, generation 7, then
#: on those and td-contact-ei.pt's 2-ply labels of its own games, generation 8, then on
#: those and td-contact-ei.pt's 2-ply labels of its own self-play: generation 9,
#: docs/distillation.md) for contact and crashed positions, the one-sided race evaluator
#: for races, the databases for bear-offs.
SHIPPED = CHECKPOINTS / "td-contact-gen9.pt"
#: The pruning network of a network that has none of its own (`pruner_file`): fitted to
#: `td-best.pt` (`vrhcaby.learn.prune`); ranking a roll's replies is about backgammon more
#: than about one network, and the full network still picks among those it keeps.
DEFAULT_PRUNER = CHECKPOINTS / "prune" / "td-best.pt"


@dataclass(frozen=True)
class CubeWindow:
    """The cube window of a 1- or 2-ply cube decision: for each question, how far (equity
    per unit of the cube, EMG in a match) the 0-ply analysis of the position must be from
    the threshold that decides it (`decisions.cube_gap`, `decisions.resignation_gap`) for
    the agent to give the 0-ply answer instead of searching. A search changes an answer
    only where it moves that gap across zero, which it seldom does from afar."""

    double: float
    """Whether to double (or redouble)."""
    take: float
    """Whether to take a double, and whether to beaver."""
    resign: float
    """Whether to offer a resignation, and whether to accept one. A margin of 0 answers
    its question at 0 plies always."""

    def __post_init__(self) -> None:
        for what in ("double", "take", "resign"):
            margin = getattr(self, what)
            if not 0 <= margin < math.inf:  # NaN too
                raise ValueError(f"td cube window's {what} margin must be 0 or more, got {margin}")

    @classmethod
    def every(cls, margin: float) -> CubeWindow:
        """One margin for every question (`td?cube_window=M`)."""
        return cls(margin, margin, margin)

    def near(self, d: CubeDecision, question: str | None, *, beavers: bool = False) -> bool:
        """Whether cube decision `d` is within the window on `question` (None: on any of
        `decisions.CUBE_QUESTIONS`), so that a search should answer it."""
        asked = decisions.CUBE_QUESTIONS if question is None else (question,)
        margins = {"double": self.double, "take": self.take, "beaver": self.take}
        return any(decisions.cube_gap(d, q, beavers=beavers) < margins[q] for q in asked)


#: The cube window of `td` (`cube_window=on`, the spec's default), set by agreement with
#: the full search and by games, never by a judge's verdict. Take: the 0-ply gap within
#: which 95% of the answers a full 1-ply search changed lie, rounded up to a twentieth, in
#: the agent's own cube games (money and 5-point matches against itself, 15,588 decisions:
#: `python bench/cube_window.py margin`, docs/benchmarks.md), measured for
#: td-contact-gen3.pt; the default since needs no wider (gen4 0.25, gen9 0.20). Double: 0.3
#: since session 25, the smallest twentieth at which the window changes none of the full
#: search's double answers on the 1,200 varied positions of the cube yardstick (`python
#: bench/cube_window.py judge --margin D,T,R`): at 0.15, the 95% point of the agent's own
#: games, it changed 6 there, closer positions than its games reach. Resignation: 0 since
#: session 26, always the 0-ply answer: against gnubg 0-ply, cubeless, generation 9's
#: resignations by the 1-ply search (margin 0.25 before) lost 0.007 and 0.009 ppg on two
#: seeds' 20,000 games (paired, +-0.005), as its 1-ply values are worse than its 0-ply
#: (docs/distillation.md).
CUBE_WINDOW = CubeWindow(double=0.3, take=0.6, resign=0.0)

#: The cube depth of the `td` spec that names none (`load_td`; `td?cube_plies=C`): the
#: cubeful 1-ply search, windowed (`CUBE_WINDOW`) and pruned (`cube_prune`), which errs
#: on the cube yardstick as GNU Backgammon 0-ply does for about 1.5 times the 0-ply cube's
#: time in cube games, the same in cubeless ones (docs/benchmarks.md). Acey-deucey
#: networks decide at 0 plies.
CUBE_PLIES = 1


class TDAgent(AfterstateAgent):
    """Plays the candidate with the best n-ply value under an evaluator; doubles, takes and
    resigns by the cubeful equity of its pre-roll probabilities."""

    cube_aware = True
    #: `choose_boards` and `choose_play` take each game's `GameContext` (the tournament
    #: runner passes them when the agent is cube-aware and the cube or a match is on).
    ranks_in_context = True

    def __init__(
        self,
        evaluator: ValueFunction,
        plies: int = 0,
        filter: tuple[int, int] = (8, 3),
        name: str = "td",
        *,
        cube_plies: int = 0,
        cube_window: CubeWindow | None = CUBE_WINDOW,
        efficiency: Efficiency = GNUBG_EFFICIENCY,
        beavers: bool = False,
        cube_aware: bool = True,
        prune: search.Pruner | None = None,
        cube_prune: search.Pruner | None = None,
    ) -> None:
        for what, n in (("plies", plies), ("cube_plies", cube_plies)):
            if n not in (0, 1, 2):
                raise ValueError(f"td {what} must be 0, 1 or 2, got {n}")
        if min(filter) < 1:
            raise ValueError(f"td filter sizes must be at least 1, got {filter}")
        self.evaluator = evaluator
        self.plies = plies
        self.filter = filter
        self.name = name
        self.cube_plies = cube_plies
        #: The cube window (None: search every decision): at `cube_plies` 1 or 2 the search
        #: is skipped where the 0-ply analysis is further than its margin from the threshold
        #: of the question asked, and the 0-ply answer given.
        self.cube_window = cube_window
        self.efficiency = efficiency
        self.beavers = beavers
        #: False: never double or resign, always take (as a cubeless agent), so cubeless
        #: evaluation games skip the per-turn pre-roll evaluation.
        self.cube_aware = cube_aware
        #: The pruning of the checker search's reply choice (None: every reply valued in
        #: full); the analysis commands' cube search is pruned by it too.
        self.prune = prune
        #: The pruning of the reply choice of the agent's own cube search (`cube_plies` 1
        #: or 2, the decisions it makes in games; None: every reply valued in full).
        self.cube_prune = cube_prune

    @property  # per network, where the base class's is a class attribute
    def acey_deucey(self) -> bool:  # type: ignore[override]
        """Whether the network plays acey-deucey (and nothing else)."""
        return getattr(self.evaluator, "variant", "standard") == ACEY_DEUCEY

    def supports(self, variant: str) -> bool:
        """An acey-deucey network plays acey-deucey only; the others play every variant of
        the (2, 25) board (Nackgammon is backgammon from another start)."""
        if self.acey_deucey:
            return variant == ACEY_DEUCEY
        return variant in BOARD_VARIANTS

    def probabilities_ad(
        self,
        afterstates: np.ndarray,
        extra: np.ndarray | None,
        roots: np.ndarray | None = None,
        parent: np.ndarray | None = None,
    ) -> np.ndarray:
        """Acey-deucey: the five 0-ply probabilities (N, 5) of each afterstate (N, 2, 26)
        for its mover, `extra` (N,) marking those whose mover rolls again; a finished game
        is its certain result. `roots[parent]` may name the boards they were played from."""
        from engine.acey_deucey import game_value_ad  # numba: loaded only for acey-deucey

        a = np.asarray(afterstates, dtype=np.int8)
        game_points = game_value_ad(a)
        p = outcome(game_points).astype(np.float64)
        live = np.flatnonzero(game_points == 0)
        if not len(live):
            return p
        flags = None if extra is None else np.asarray(extra, bool)[live]
        fast = getattr(self.evaluator, "probabilities_from", None)
        if fast is not None and roots is not None and parent is not None:
            p[live] = fast(roots, a[live], parent[live], flags)
        else:
            # An acey-deucey network reads whether each mover rolls again.
            p[live] = self.evaluator.probabilities(a[live], flags)  # type: ignore[call-arg]
        return p

    def score_ad(
        self, afterstates: np.ndarray, extra: np.ndarray, parent: np.ndarray, boards: np.ndarray
    ) -> np.ndarray:
        """Acey-deucey: the cubeless money equity of each afterstate for its mover."""
        return equity(self.probabilities_ad(afterstates, extra, boards, parent))

    def _board(self, position: engine.Position) -> np.ndarray:
        """The board the evaluator reads for `position`: (2, 26) in acey-deucey."""
        if not self.acey_deucey:
            return position.board
        from engine.acey_deucey import to_board_ad

        return to_board_ad(position)

    def probabilities(
        self,
        afterstates: np.ndarray,
        plies: int,
        roots: np.ndarray | None = None,
        parent: np.ndarray | None = None,
    ) -> np.ndarray:
        """The n-ply five probabilities (N, 5) of each afterstate for its mover (row 1)
        (`agents.search.ply_probabilities`; `roots[parent]` may name the boards the
        afterstates were played from, which an incremental evaluator uses)."""
        return search.ply_probabilities(
            self.evaluator, afterstates, plies, roots, parent, prune=self.prune
        )

    def value(
        self,
        afterstates: np.ndarray,
        plies: int,
        roots: np.ndarray | None = None,
        parent: np.ndarray | None = None,
    ) -> np.ndarray:
        """The n-ply cubeless value of each afterstate for its mover (row 1), in points."""
        return equity(self.probabilities(afterstates, plies, roots, parent))

    def before_roll(self, boards: np.ndarray, plies: int | None = None) -> np.ndarray:
        """Five probabilities (B, 5) for the side on roll (row 1) of each board (B, 2, 25),
        before it rolls, at `plies` (default `cube_plies`): its opponent's afterstate,
        evaluated and seen from the other side, by the cubeless search (the cube decisions
        at `cube_plies` 1 or 2 take theirs from the cubeful search, whose plays are chosen
        by cubeful equity: the same numbers but where that choice differs)."""
        b = np.asarray(boards, dtype=np.int8)
        depth = self.cube_plies if plies is None else plies
        if self.acey_deucey:  # (B, 2, 26), the opponent just moved and does not roll again
            return invert(self.probabilities_ad(b[:, ::-1], None))
        return invert(self.probabilities(b[:, ::-1], depth))

    def _searched(self, board: np.ndarray, context: GameContext) -> cubeful.CubefulValues:
        """The cubeful `cube_plies` search (`agents.cubeful`) of the side on roll of `board`
        in `context`; the last one is kept, as a game asks about one board twice (whether
        to resign, then whether to double)."""
        key = (board.tobytes(), context)
        last = self.__dict__.get("_last_search")
        if last is None or last[0] != key:
            found = cubeful.cubeful_values(
                self.evaluator,
                board[None],
                context,
                self.cube_plies,
                params=self.efficiency,
                prune=self.cube_prune,
            )
            last = self._last_search = (key, found)
        return last[1]

    def _zero_ply(self, board: np.ndarray) -> np.ndarray:
        """The 0-ply probabilities of the side on roll of `board`; the last board's are
        kept, as a game asks about one board several times (whether to resign, whether to
        double, and the opponent's take when the agent plays itself)."""
        key = board.tobytes()
        last = self.__dict__.get("_last_zero")
        if last is None or last[0] != key:
            last = self._last_zero = (key, self.before_roll(board[None], 0)[0])
        return last[1]

    def _janowski(self, board: np.ndarray, context: GameContext, beavers: bool) -> CubeDecision:
        """The 0-ply cube decision: Janowski's formula on the 0-ply probabilities."""
        plain = waiting_on_bar(board[None])[0] if self.acey_deucey else board
        p = self._zero_ply(board)
        return decisions.cube_decision(p, plain, context, params=self.efficiency, beavers=beavers)

    def _deep(self) -> bool:
        """Whether the cube decisions look ahead (never in acey-deucey)."""
        return bool(self.cube_plies) and not self.acey_deucey

    def _pre_roll(
        self, board: np.ndarray, context: GameContext, gap: Callable[[np.ndarray], float]
    ) -> np.ndarray:
        """The five probabilities of the side on roll of `board` that a resignation is
        decided by: 0-ply, or those of the cubeful `cube_plies` search, inside the cube
        window only where one is set: where `gap` of the 0-ply ones (how far they are from
        the resignation's threshold) is below its margin."""
        if not self._deep():
            return self._zero_ply(board)
        if self.cube_window is not None:
            p = self._zero_ply(board)
            if gap(p) >= self.cube_window.resign:
                return p
        return self._searched(board, context).probabilities[0]

    def cube_decision(
        self,
        position: engine.Position,
        context: GameContext,
        beavers: bool = False,
        *,
        question: str | None = None,
    ) -> CubeDecision:
        """The cube decision of the side on roll of `position` in `context` (its view), at
        `cube_plies`: Janowski's formula on the 0-ply probabilities, or the cubeful search
        (`agents.cubeful`); a double is judged against a beaver where beavers are allowed
        (`beavers`, the agent's or the context's). With a cube window (`cube_window`) the
        search is made only where the 0-ply decision is within the window's margin of a
        threshold that decides `question` (`decisions.cube_gap`; None: any of them), and
        elsewhere the 0-ply decision, its equities too, is the answer."""
        board = self._board(position)
        beavers = beavers or self.beavers or context.beavers
        if not self._deep():
            return self._janowski(board, context, beavers)
        if self.cube_window is not None:
            first = self._janowski(board, context, beavers)
            if not self.cube_window.near(first, question, beavers=beavers):
                return first
        v = self._searched(board, context)
        p, nd, dt = v.probabilities[0], float(v.nd[0]), float(v.dt[0])
        return decisions.searched_decision(p, nd, dt, context, beavers=beavers)

    def double_decision(self, position: engine.Position, context: GameContext) -> bool:
        if not self.cube_aware or not context.may_double():
            return False
        return self.cube_decision(position, context, question="double").double

    def take_decision(self, position: engine.Position, context: GameContext) -> bool:
        if not self.cube_aware:
            return super().take_decision(position, context)
        return self.cube_decision(position.flip(), context.flip(), question="take").take

    def beaver_decision(self, position: engine.Position, context: GameContext) -> bool:
        """Doubled in money play with beavers allowed (`position` and `context` from the
        doubled side's view, as `take_decision`): whether to beaver, taking and at once
        redoubling while keeping the cube, as GNU Backgammon does when taking leaves it
        the favourite."""
        if not self.cube_aware or context.match_to:
            return False
        d = self.cube_decision(position.flip(), context.flip(), beavers=True, question="beaver")
        return d.take and d.beaver

    def resign_offer(self, position: engine.Position, context: GameContext) -> int:
        if not self.cube_aware:
            return 0

        def gap(p: np.ndarray) -> float:
            return decisions.resignation_gap(p, context)

        p = self._pre_roll(self._board(position), context, gap)
        return decisions.resignation_offer(p, context)

    def accept_resignation(
        self, position: engine.Position, context: GameContext, value: int
    ) -> bool:
        """Offered a resignation of `value` by the opponent, who is in row 0 and on roll
        (as the tournament runner asks it)."""
        if not self.cube_aware:
            return super().accept_resignation(position, context, value)
        theirs = context.flip()

        def gap(p: np.ndarray) -> float:
            return decisions.resignation_gap(p, theirs, value)

        p = self._pre_roll(self._board(position.flip()), theirs, gap)
        return decisions.accept_resignation(p, value, theirs)

    def score(
        self,
        afterstates: np.ndarray,
        parent: np.ndarray,
        boards: np.ndarray,
        contexts: Sequence[GameContext] | None = None,
    ) -> np.ndarray:
        """The ranking value of each afterstate at the agent's depth (-inf for those the
        filters dropped): cubeless money equity, or with `contexts` (one per board) the
        cubeful equity of `vrhcaby hint` in that game's cube and match."""
        rank = Ranking(afterstates, parent, contexts, self.efficiency)
        found = search.filtered_search(
            self.evaluator,
            afterstates,
            parent,
            boards,
            self.plies,
            self.filter,
            rank,
            prune=self.prune,
        )
        return np.where(found.plies == self.plies, found.values, -np.inf)

    def choose_boards(
        self,
        boards: np.ndarray,
        dice: np.ndarray,
        contexts: Sequence[GameContext] | None = None,
    ) -> np.ndarray:
        """The chosen afterstate of each board (B, 2, 25) for its roll (B, 2); a board
        without a legal play comes back unchanged. With `contexts` (one per board, the
        mover's view), plays are ranked by cubeful equity as `vrhcaby hint` ranks them."""
        boards = np.ascontiguousarray(boards, dtype=np.int8)
        after, parent = engine.batch_afterstates(boards, dice)
        if not len(after):
            return boards.copy()
        return search.chosen_boards(
            boards, after, parent, self.score(after, parent, boards, contexts)
        )

    def choose_play(
        self, position: engine.Position, dice: tuple[int, int], context: GameContext | None = None
    ) -> engine.Play:
        """The play chosen for `dice`, ranked cubefully in `context` when one is given."""
        contexts = None if context is None else [context]
        chosen = self.choose_boards(position.board[None], np.array([dice]), contexts)[0]
        return play_reaching(position, dice, chosen)


class Ranking:
    """Turns probabilities of afterstates into the values plays are ranked by.

    Without contexts: cubeless money equity. With one context per board: the cubeful
    equity (`decisions.play_equities`) of each distinct context that has a live cube or a
    match, the cubeless equity for money games without the cube. One batched call per
    distinct context; money equities are per unit of the cube, so money games that differ
    only in the cube's value (not in who may double) share one.
    """

    def __init__(
        self,
        afterstates: np.ndarray,
        parent: np.ndarray,
        contexts: Sequence[GameContext] | None,
        params: Efficiency,
    ) -> None:
        self.afterstates = afterstates
        self.params = params
        self.contexts: list[GameContext] = []
        if contexts is None:
            return
        index: dict[GameContext, int] = {}
        keys = [_key(c) for c in contexts]
        of_board = np.array(
            [-1 if k is None else index.setdefault(k, len(index)) for k in keys], dtype=np.int64
        )
        self.contexts = list(index)
        self.group = of_board[parent]
        self.x = decisions.efficiencies(afterstates[:, ::-1], params) if index else None

    def __call__(self, p: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Values of the afterstates `rows` (a mask or indices; all if None) whose
        probabilities are `p`."""
        out = np.asarray(equity(p), dtype=np.float64)
        if not self.contexts or self.x is None:
            return out
        group, after, x = self.group, self.afterstates, self.x
        if rows is not None:
            group, after, x = group[rows], after[rows], x[rows]
        for g, context in enumerate(self.contexts):
            mine = np.flatnonzero(group == g)
            if len(mine):
                out[mine] = decisions.play_equities(
                    p[mine], after[mine], context, params=self.params, x=x[mine]
                )
        return out


def _key(context: GameContext) -> GameContext | None:
    """The context plays are ranked in, None for cubeless money equity (no cube); in money
    play the cube's value only matters for whether it may still be doubled."""
    if context.match_to:
        return context
    if not context.cube_enabled:
        return None
    may_redouble = 2 * context.cube_value <= context.max_cube
    return replace(context, cube_value=1, max_cube=2 if may_redouble else 1)


def find_checkpoint(path: str) -> Path:
    """The file a `td:PATH` spec names: PATH itself (from the working directory), else a
    shipped network by its name (`td-contact` or `td-contact.pt` in `checkpoints/`), else
    PATH from the project's root (`checkpoints/td-80.pt` from any directory).
    CheckpointError (a ValueError) naming the shipped networks if none of them exists."""
    given = Path(path).expanduser()
    candidates = [given]
    if not given.is_absolute():
        shipped = CHECKPOINTS / given
        candidates += [shipped, shipped.with_name(shipped.name + ".pt"), CHECKPOINTS.parent / given]
    for file in candidates:
        if file.is_file():
            return file
    if given.exists():  # not a file: the loader says what it is
        return given
    names = ", ".join(sorted(f.stem for f in CHECKPOINTS.glob("*.pt"))) or "none"
    raise CheckpointError(f"{path}: checkpoint not found (shipped networks: {names})")


def pruner_file(network: Path) -> Path:
    """The pruning network of checkpoint `DIR/NAME.pt`: `DIR/prune/NAME.pt` if there is
    one, else `DEFAULT_PRUNER`."""
    own = network.parent / "prune" / network.name
    return own if own.is_file() else DEFAULT_PRUNER


def load_pruner(network: Path, keep: int = search.Pruner.keep) -> search.Pruner:
    """The `agents.search.Pruner` of checkpoint `network` (`pruner_file`), keeping `keep`
    replies per roll; CheckpointError if its file is missing or unsound."""
    from vrhcaby.nn.prune import PruningNet

    return search.Pruner(PruningNet.load(pruner_file(network)), keep)


def load_td(
    path: str | None,
    plies: int = 0,
    filter: tuple[int, int] = (8, 3),
    prune: int | None = None,
    cube_plies: int | None = None,
    cube_window: CubeWindow | None = CUBE_WINDOW,
    cube_prune: int | None = search.Pruner.keep,
) -> TDAgent:
    """The agent for spec `td[:PATH]`: the network at `path` (see `find_checkpoint`), or
    the shipped one; `prune` replies kept per roll by its pruner in the checker search
    (None: no pruning), `cube_prune` in the cube search; `cube_plies` the look-ahead of its
    cube decisions (None: `CUBE_PLIES`, 0 for an acey-deucey network), `cube_window` their
    window (None: every decision searched)."""
    file = find_checkpoint(path) if path else SHIPPED
    if not path and not file.is_file():
        raise ValueError(
            f"td: no shipped network ({SHIPPED} is missing); train one or name a "
            "checkpoint as td:PATH"
        )
    try:
        from vrhcaby.nn.checkpoint import CheckpointError
        from vrhcaby.nn.net import load_evaluator
    except ImportError as exc:
        raise ValueError(f"td: cannot load networks ({exc})") from exc
    spec = f"td:{path}" if path else "td"
    try:
        evaluator = load_evaluator(file)
    except CheckpointError:
        raise  # it names the file and what is wrong
    except (OSError, ValueError) as exc:
        raise ValueError(f"td: cannot load {str(file)!r}: {exc}") from None
    acey_deucey = getattr(evaluator, "variant", "standard") == ACEY_DEUCEY
    if cube_plies is None:
        cube_plies = 0 if acey_deucey else CUBE_PLIES
    if acey_deucey:
        for what, n in (("plies", plies), ("cube_plies", cube_plies)):
            if n:
                raise ValueError(
                    f"{spec}: acey-deucey networks play at 0 plies only (no {what}={n})"
                )
        if prune is not None:
            raise ValueError(f"{spec}: acey-deucey networks have no search to prune")
    pruner = None if prune is None else load_pruner(file, prune)
    cube_pruner = None if cube_prune is None or not cube_plies else load_pruner(file, cube_prune)
    return TDAgent(
        evaluator,
        plies=plies,
        filter=filter,
        name=spec,
        prune=pruner,
        cube_plies=cube_plies,
        cube_window=cube_window,
        cube_prune=cube_pruner,
    )
