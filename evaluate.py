"""Play agents against each other: the same options as `vrhcaby tournament`.

python evaluate.py pubeval heuristic --games 1000 --jobs 2
"""

from __future__ import annotations

import sys

from vrhcaby.cli.common import Parser
from vrhcaby.cli.tournament import add_arguments, run


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="evaluate.py", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"evaluate.py: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
