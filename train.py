"""Train a value network by TD(λ) self-play, the way TD-Gammon was trained.

    python train.py --config configs/quick.toml [--set td.lam=0.8 ...] [--device cuda]
    python train.py --config configs/quick.toml --resume      # continue after a stop
    python train.py --config configs/recipes/full.toml --backend ray --address auto --workers 16
    python train.py --config configs/recipes/sixdice.toml             # the six-dice scoring game

Read top to bottom: the run configuration, the device, the trainer (fresh or resumed from
the newest checkpoint), then the loop: a self-play round and its TD(λ) updates, logging,
periodic evaluation (backgammon: against fixed opponents; six-dice: the mean final total
against the exact optimum), checkpoints. Ctrl-C saves a checkpoint of the last completed
round, so `--resume` continues exactly (same dice, same weights). The algorithm itself
lives in `vrhcaby.learn` (`trainer.Trainer`), the game learnt in a `vrhcaby.learn.game.Game`
(`game` in the config); `--backend ray` moves backgammon self-play onto Ray workers and
keeps the learner here (`vrhcaby.learn.ray`).
"""

import sys

from vrhcaby.cli.train import main

if __name__ == "__main__":
    sys.exit(main())
