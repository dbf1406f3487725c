"""Infrastructure every floor may use: `jit` (numba switches), `files` (atomic files, the
cache folder, files of arrays read with their headers checked, output paths checked),
`config` (TOML to dataclass) and `process` (the CPUs a process may use, its stop on
SIGINT or SIGTERM)."""
