"""`vrhcaby serve`: the engine as a resident HTTP service, with a web board.

`app.create_app` builds the ASGI app (FastAPI), `models` the typed requests, `work` the
engine threads and rollout jobs behind them, `static/` the web board. What each answer
holds is computed by `vrhcaby.io.answers` and `vrhcaby.io.board_json`, as the command
line's `--json` is. Needs the `serve` extra (FastAPI, uvicorn).
"""
