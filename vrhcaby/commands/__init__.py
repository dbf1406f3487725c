"""Command-line verbs; see `vrhcaby.cli`."""
