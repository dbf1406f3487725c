"""`vrhcaby netset`: put a network set together from existing checkpoints.

    vrhcaby netset --contact td-gen1 --race checkpoints/td-race-set.pt --out my-set.pt

Each class (contact, crashed, race) takes a checkpoint, a single network or a set (whose
network of that class is taken), or the name of another class whose network answers it
(``--crashed contact``, the default for crashed and race). The bear-offs are answered by
the databases in every set. The set is checked whole before anything is written; an
existing `--out` is kept unless `--force` (`vrhcaby.learn.sets.assemble`).
"""

from __future__ import annotations

import argparse

from agents.td import find_checkpoint
from vrhcaby.base.files import check_output_file
from vrhcaby.cli.common import UsageError
from vrhcaby.learn.sets import assemble
from vrhcaby.nn import netset
from vrhcaby.nn.checkpoint import SET_CLASSES


def run(args: argparse.Namespace) -> int:
    out = check_output_file(args.out, "--out")
    if out.exists() and not args.force:
        raise UsageError(f"--out {args.out} exists (pass --force to replace it)")
    if out.suffix != ".pt":
        raise UsageError(f"--out {args.out} must name a .pt file")
    sources = {}
    for name in SET_CLASSES:
        source = getattr(args, name)
        try:
            sources[name] = source if source in SET_CLASSES else str(find_checkpoint(source))
        except ValueError as exc:
            raise UsageError(f"--{name}: {exc}") from None
    networks = assemble(sources)
    networks.config.setdefault("name", out.stem)
    netset.save(networks, out)
    print(f"wrote {out}: {networks.describe()}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "netset",
        help="put a network set together from checkpoints",
        description="Write a network-set checkpoint whose contact, crashed and race "
        "networks come from existing checkpoints (a network, or a set's network of the "
        "class) or fall back to another class's network.",
    )
    parser.add_argument("--contact", required=True, help="checkpoint of the contact network")
    for name in ("crashed", "race"):
        parser.add_argument(
            f"--{name}",
            default="contact",
            help=f"checkpoint of the {name} network, or a class whose network answers it "
            "(default: contact)",
        )
    parser.add_argument("--out", required=True, help="the set's checkpoint file (.pt)")
    parser.add_argument("--force", action="store_true", help="replace an existing --out")
    parser.set_defaults(func=run)
