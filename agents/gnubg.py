"""GNU Backgammon as an opponent, through the `gnubg-nn` package (spec `gnubg[?plies=N]`).

Plays GNU Backgammon's best move at the given ply (0 = its neural net alone), cubeless,
in every variant of the (2, 25) board: Nackgammon is backgammon from another start, and
GNU Backgammon plays it with the same networks. It plays no acey-deucey.
`gnubg_nn` takes boards in the same layout as the engine (row 1 on roll), and answers
with the steps of its move from the mover's view (25 the bar, 0 off).
"""

from __future__ import annotations

import numpy as np

import engine
from agents.base import CubelessAgent, play_reaching

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
    """GNU Backgammon's checker play at `plies` (cubeless money)."""

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
