"""The `vrhcaby` command line: `main` runs it, one module per verb (`register`, `run`)."""
