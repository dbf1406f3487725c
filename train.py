"""Train a value network by TD(λ) self-play, the way TD-Gammon was trained: the options,
output and behaviour of `vrhcaby train` (`vrhcaby.cli.train`, whose docstring tells the
run step by step).

    python train.py --config configs/quick.toml [--set td.lam=0.8 ...] [--resume]
"""

import sys

from vrhcaby.cli.train import main

if __name__ == "__main__":
    sys.exit(main())
