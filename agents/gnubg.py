"""GNU Backgammon as an opponent, through the `gnubg-nn` package (spec `gnubg[?plies=N]`).

Plays GNU Backgammon's best move at the given ply (0 = its neural net alone) in every
variant of the (2, 25) board: Nackgammon is backgammon from another start, and GNU
Backgammon plays it with the same networks. It plays no acey-deucey. It makes GNU
Backgammon's cube decisions: double or not, take, beaver or pass, in money and match play
(beavers in money play only).
`gnubg_nn` takes boards in the same layout as the engine (row 1 on roll), and answers
with the steps of its move from the mover's view (25 the bar, 0 off).

The cube decisions are gnubg's own formula (``GeneralCubeDecision`` at 0-ply: Janowski's
cubeful equities from its cubeless probabilities with eval.c's cube efficiencies, and the
Kazaross-XG2 match equity table gnubg 1.07 uses), applied to gnubg's probabilities before
the roll at `plies` (`vrhcaby.equity.decisions.cube_decision`). At 0-ply they are gnubg's cube
analysis (the tests compare them with Debian's gnubg ``hint``); at more plies gnubg
searches the cube cubefully, which this does not, so they are close to gnubg's, not the
same. The checker play stays gnubg's cubeless best move. Resignations: it offers and
accepts them by gnubg's cubeless rule (`vrhcaby.analysis`), as the td agent does.
"""

from __future__ import annotations

import numpy as np

import engine
from agents.base import CubelessAgent, GameContext, play_reaching
from vrhcaby.equity import decisions
from vrhcaby.equity.cube import GNUBG_EFFICIENCY

INSTALL_HINT = "pip install gnubg-nn  (or: pip install 'vrhcaby[gnubg]')"


def require_gnubg_nn(who: str = "gnubg agents"):
    """The `gnubg_nn` module, or a ValueError saying that `who` needs it and how to get it."""
    try:
        import gnubg_nn
    except ImportError:
        raise ValueError(f"{who} need the gnubg-nn package: {INSTALL_HINT}") from None
    return gnubg_nn


def apply_steps(board: np.ndarray, steps) -> np.ndarray:
    """The board after the mover (row 1) plays `steps` `(from, to)`, hitting lone checkers."""
    out = np.array(board, dtype=np.int8, copy=True)
    for src, dst in steps:
        out[1, src - 1] -= 1
        if dst > 0:
            out[1, dst - 1] += 1
            if out[0, 24 - dst] == 1:
                out[0, 24 - dst] = 0
                out[0, 24] += 1
    return out


class GnubgAgent(CubelessAgent):
    """GNU Backgammon's checker play and cube decisions at `plies`."""

    cube_aware = True

    def __init__(self, plies: int = 0) -> None:
        if not 0 <= plies <= 4:
            raise ValueError(f"gnubg plies must be 0..4, got {plies}")
        self._nn = require_gnubg_nn()
        self.plies = plies
        self.name = f"gnubg?plies={plies}"

    def __getstate__(self) -> dict:
        # The gnubg_nn module does not pickle; a worker process imports its own.
        return {k: v for k, v in self.__dict__.items() if k != "_nn"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._nn = require_gnubg_nn()

    def choose_board(self, board: np.ndarray, dice: tuple[int, int]) -> np.ndarray:
        """The board GNU Backgammon's move reaches (the board itself when none is legal)."""
        steps = self._nn.best_move(board.tolist(), int(dice[0]), int(dice[1]), n=self.plies)
        return apply_steps(board, steps)

    def choose_boards(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        return np.stack([self.choose_board(b, tuple(d)) for b, d in zip(boards, dice, strict=True)])

    def choose_play(self, position: engine.Position, dice: tuple[int, int]) -> engine.Play:
        return play_reaching(position, dice, self.choose_board(position.board, dice))

    def before_roll(self, board: np.ndarray) -> np.ndarray:
        """gnubg's five probabilities for the side on roll (row 1) before its roll (the
        last board's are kept: the runner asks for a resignation, then for a double)."""
        key = np.asarray(board, dtype=np.int8).tobytes()
        last = self.__dict__.get("_last")
        if last is None or last[0] != key:
            p = self._nn.probabilities(np.asarray(board).tolist(), self.plies)
            last = self._last = (key, np.asarray(p, dtype=np.float64))
        return last[1]

    def _decision(self, board: np.ndarray, context: GameContext, beavers: bool = False):
        """gnubg's cube decision for the side on roll of `board` in its `context`: with
        beavers allowed (`context.beavers`, or `beavers`), a double is judged against a
        beaver, as gnubg's FindBestCubeDecision does."""
        return decisions.cube_decision(
            self.before_roll(board),
            board,
            context,
            params=GNUBG_EFFICIENCY,
            beavers=(beavers or context.beavers) and not context.match_to,
        )

    def double_decision(self, position: engine.Position, context: GameContext) -> bool:
        if not context.may_double():
            return False
        return self._decision(position.board, context).double

    def take_decision(self, position: engine.Position, context: GameContext) -> bool:
        """Doubled by the side in row 0: take unless gnubg's analysis says pass."""
        return self._decision(position.board[::-1], context.flip()).take

    def beaver_decision(self, position: engine.Position, context: GameContext) -> bool:
        """Doubled in money play (as `take_decision` is asked): beaver when gnubg's cube
        analysis of the doubler's position says beaver, i.e. when the doubler's cubeful
        equity after the double is not positive (the taker is the favourite), as gnubg's
        bot does (``DOUBLE_BEAVER``/``NODOUBLE_BEAVER``); never in match play."""
        if context.match_to:
            return False
        d = self._decision(position.board[::-1], context.flip(), beavers=True)
        return d.take and d.beaver

    def resign_offer(self, position: engine.Position, context: GameContext) -> int:
        return decisions.resignation_offer(self.before_roll(position.board), context)

    def accept_resignation(
        self, position: engine.Position, context: GameContext, value: int
    ) -> bool:
        """Offered `value` by the opponent, in row 0 and on roll (as the runner asks)."""
        resigner = position.board[::-1]
        return decisions.accept_resignation(self.before_roll(resigner), value, context.flip())
