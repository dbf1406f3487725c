"""The pipeline's stage processes: `python -m vrhcaby.training.stage label|train ...`.

    python -m vrhcaby.training.stage label --config RUN_DIR/stages/gen1-label.toml \
        --jobs 2 --json RUN_DIR/logs/gen1-label.json --no-progress
    python -m vrhcaby.training.stage train --config RUN_DIR/stages/gen1-fit.toml \
        --resume --device cuda --no-progress

`vrhcaby.training.pipeline` starts each label, TD or fit stage as a process of its own
(its CPU time measured, a kill of the pipeline ending it too) on a config it wrote; this
is that process, on the training floor, so that the pipeline never names the command
line above it. A stage does what `vrhcaby label` or `vrhcaby train` does with the same
options, through the same library calls (`vrhcaby.training.labelrun.run_labels`;
`vrhcaby.training.run.configure` and `run_training`), and writes the same lines and exit
status: 0, 130 or 143 after SIGINT or SIGTERM (the work finished kept), 2 and one line
naming what is wrong for bad input. The stage configs can also be run by either verb.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from vrhcaby.base.config import load_config


class _Parser(argparse.ArgumentParser):
    """A bad command line is one line, ``PROG: error: MESSAGE``, exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m vrhcaby.training.stage", description=__doc__.split("\n")[0])
    stages = parser.add_subparsers(dest="stage", metavar="STAGE", required=True)
    label = stages.add_parser("label", help="a label run (vrhcaby label)")
    label.add_argument("--config", metavar="TOML", required=True, help="the LabelConfig")
    label.add_argument("--jobs", type=int, default=1, help="local processes (default 1)")
    label.add_argument("--backend", choices=("local", "ray"), default="local")
    label.add_argument("--address", help="Ray cluster to join (auto, HOST:PORT)")
    label.add_argument("--json", metavar="FILE", help="also write the summary as JSON here")
    label.add_argument("--no-progress", action="store_true", help="no progress bar")
    train = stages.add_parser("train", help="a TD or distillation run (vrhcaby train)")
    train.add_argument("--config", metavar="TOML", required=True, help="the TrainConfig")
    train.add_argument("--device", help="torch device: cpu, cuda, cuda:N (overrides the config)")
    train.add_argument("--resume", action="store_true", help="continue from the newest checkpoint")
    train.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def run(args: argparse.Namespace) -> int:
    """The stage `args` names; its exit status."""
    if args.stage == "label":
        from vrhcaby.learn.labels import LabelConfig
        from vrhcaby.training.labelrun import Parallel, run_labels

        parallel = Parallel(args.jobs, args.backend, args.address)
        config = load_config(LabelConfig, args.config)
        return run_labels(config, parallel, summary_file=args.json, progress=not args.no_progress)
    from vrhcaby.training.run import configure, run_training

    cfg, device = configure(args.config, device=args.device)
    return run_training(cfg, device, args.resume, no_progress=args.no_progress)


def main(argv: list[str] | None = None) -> int:
    """Run one stage from the command line `argv` (default: the program's); bad input is
    one line on stderr and exit status 2."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.stage == "label" and args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    try:
        return run(args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"{parser.prog} {args.stage}: error: {exc}", file=sys.stderr)
        return 2
    except ChildProcessError as exc:  # a worker process died (vrhcaby.play.pool.WorkerDied)
        print(f"{parser.prog} {args.stage}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # a signal before the stage's own handlers were in place
        return 130


if __name__ == "__main__":
    sys.exit(main())
