"""The settings of a TD(λ) run: how self-play is batched and learnt from (`TDConfig`, the
``[td]`` table of a run config) and how the network is evaluated (`EvalConfig`, ``[eval]``)."""

from __future__ import annotations

from dataclasses import dataclass

from vrhcaby.play.tournament import MAX_GAMES

OPTIMIZERS = ("sgd", "adam")
MAX_LR = 10.0
"""The largest learning rate taken: far above any that learns (0.1 for SGD, 0.002 for
Adam here), and far below those that overflow torch's float32 step at once."""
BACKUPS = ("sampled", "expected")
MAX_LOCKSTEP = 20_000
"""The most games played side by side in one batch (`td.batch_games`, a label shard's
`games_per_shard`): their boards, network inputs and records are held at once, about a
gigabyte at this count (the recipes use 50 to 512). More is refused when the config is
read, not by an allocation after minutes of work."""
MAX_JUDGE_GAMES = 100_000
"""The most games whose positions `eval.judge_games` judges: every legal play of every
position with a choice is kept with gnubg's value of it, about a thousand plays a game
(the recipes judge 300 games). The set is made at the first evaluation, after training
games, so more is refused when the config is read."""


@dataclass(frozen=True)
class TDConfig:
    """How self-play is batched and how the network learns from it."""

    batch_games: int = 512
    """Games started together and advanced in lockstep in each self-play round."""
    games_per_update: int = 128
    """Finished games per optimizer step (a round makes batch_games / this many steps)."""
    lam: float = 0.7
    """Trace decay λ at the start of the run (0 = TD(0), 1 = Monte Carlo)."""
    lam_end: float = 0.7
    """λ at the end of the run; in between it moves linearly with games played."""
    lr: float = 0.1
    """Learning rate at the start of the run (at most `MAX_LR`)."""
    lr_end: float = 0.1
    """Learning rate at the end of the run; in between it moves linearly."""
    optimizer: str = "sgd"
    """sgd (Tesauro's plain gradient step) or adam."""
    epsilon: float = 0.0
    """Probability of a uniformly random play instead of the greedy one (exploration)."""
    epochs: int = 1
    """Passes over each round's episodes."""
    shuffle: bool = False
    """Visit a round's episodes in a random order each pass (drawn from torch's generator,
    so the self-play dice stay the same), not in the order they were played."""
    backup: str = "sampled"
    """What a backgammon position backs up from: "sampled", the position the game reached
    next (Tesauro's TD), or "expected", the average over the 21 rolls of the opponent's best
    reply (the position's one-ply value; about 20 times the network evaluations per ply).
    The six-dice game always backs up expected values."""

    def __post_init__(self) -> None:
        if self.batch_games < 1 or self.games_per_update < 1 or self.epochs < 1:
            raise ValueError("batch_games, games_per_update and epochs must be at least 1")
        if self.batch_games > MAX_LOCKSTEP:
            raise ValueError(
                f"batch_games must be at most {MAX_LOCKSTEP:,} (games side by side), got "
                f"{self.batch_games:,}"
            )
        for name in ("lam", "lam_end", "epsilon"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if not (0 < self.lr <= MAX_LR and 0 < self.lr_end <= MAX_LR):
            raise ValueError(
                f"lr and lr_end must be in (0, {MAX_LR:g}], got {self.lr}, {self.lr_end}"
            )
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"unknown td.optimizer {self.optimizer!r} (known: sgd, adam)")
        if self.backup not in BACKUPS:
            raise ValueError(f"unknown td.backup {self.backup!r} (known: sampled, expected)")


@dataclass(frozen=True)
class EvalConfig:
    """Periodic evaluation of the network being trained."""

    every: int = 0
    """Evaluate every this many training games (0 = never)."""
    games: int = 1000
    """Games per evaluation: backgammon, per opponent (played as mirrored pairs);
    six-dice, solitaire games of the network's greedy player."""
    opponents: tuple[str, ...] = ("pubeval", "heuristic")
    """Backgammon: agent specs to play; the first one decides which checkpoint is the best."""
    seed: int = 2024
    """Dice seed of the evaluation games (the same every time, so results compare)."""
    judge_games: int = 0
    """Backgammon: also play every position with a choice from this many games of gnubg
    0-ply against pubeval (dice `seed`), each play charged the equity gnubg says it gives
    away (`vrhcaby.play.judge`; needs gnubg-nn). The positions are judged once per run, then
    each evaluation takes about a second. 0 = off."""
    best_by: str = "ppg"
    """What picks the best checkpoint: "ppg" against the first opponent, or "move_cost",
    the judged cost per move (lower is better; needs judge_games)."""

    def __post_init__(self) -> None:
        if self.best_by not in ("ppg", "move_cost"):
            raise ValueError(f"unknown eval.best_by {self.best_by!r} (known: ppg, move_cost)")
        if self.every < 0 or self.judge_games < 0:
            raise ValueError("eval.every and eval.judge_games must be 0 (off) or more")
        if self.games < 1 or self.seed < 0:
            raise ValueError(
                f"eval.games must be at least 1 and eval.seed 0 or more, got {self.games}, "
                f"{self.seed}"
            )
        if self.games > MAX_GAMES:
            raise ValueError(f"eval.games must be at most {MAX_GAMES:,}, got {self.games:,}")
        if self.judge_games > MAX_JUDGE_GAMES:
            raise ValueError(
                f"eval.judge_games must be at most {MAX_JUDGE_GAMES:,}, got {self.judge_games:,}"
            )
        if self.best_by == "move_cost" and not self.judge_games:
            raise ValueError("eval.best_by = 'move_cost' needs eval.judge_games > 0")
