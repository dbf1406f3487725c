"""``python -m vrhcaby.cli``: the `vrhcaby` command."""

import sys

from vrhcaby.cli.main import main

sys.exit(main())
