"""The `vrhcaby` command line: `main` runs it, `common` holds what the verbs share, and
one module per verb (`register`, `run`): `moves`, `show`, `hint`, `cube`, `eval`, `play`,
`external`, `rollout`, `tournament`, `analyse`, `serve`, `dice`, `train`, `label`,
`netset`, `pipeline`; `warm` builds the kernels at install."""

import os

# One OpenBLAS thread unless the user asks for more: the command line's numpy products are
# small (the networks run in numba kernels), and OpenBLAS starting a thread per core when
# numpy is imported costs a cold `vrhcaby hint` about a tenth of a second on 2 cores.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
