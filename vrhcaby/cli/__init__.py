"""The `vrhcaby` command line: `main` runs it, one module per verb (`register`, `run`)."""

import os

# One OpenBLAS thread unless the user asks for more: the command line's numpy products are
# small (the networks run in numba kernels), and OpenBLAS starting a thread per core when
# numpy is imported costs a cold `vrhcaby hint` about a tenth of a second on 2 cores.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
