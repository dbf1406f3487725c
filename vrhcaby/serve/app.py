"""The HTTP API of `vrhcaby serve` and its web board: `create_app()`, an ASGI app.

Endpoints (each JSON answer is the document of the command line's `--json` for the same
options; the OpenAPI description is at `/openapi.json`, browsable at `/docs`):

- `GET|POST /hint`, `/cube`, `/eval`: the ranked plays of a roll, the cube decision, the
  evaluation before the roll (`vrhcaby.serve.models` names the fields: the verbs'
  options); `GET /move` and `GET /eval` also take a position as wildbg's API writes it
  (`die1`, `die2`, `p0` .. `p25`: the side on roll's checkers positive, the opponent's
  negative, `p25` the side on roll's bar and `p0` the opponent's);
- `GET /moves`: the legal plays; `GET /show`: the board as SVG (or `format=json`);
- `POST /analyse`: a `.mat` file's text judged (`vrhcaby.review`), as `analyse --json`;
- `POST /rollout` starts a rollout job (its id); `GET /rollout/{id}` its progress and,
  once finished, its result; `DELETE /rollout/{id}` cancels it;
- `GET /health`; `GET /` the web board (`static/`).

Every bad input is a 4xx answer whose `detail` is one line naming what is wrong; an
error of the service itself is a 500 with one line too, never a traceback.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import numpy as np
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import engine
from vrhcaby.serve.models import (
    AnalyseRequest,
    HintQuery,
    HintRequest,
    MovesQuery,
    PositionBody,
    PositionQuery,
    RolloutRequest,
    ShowQuery,
)
from vrhcaby.serve.work import Busy, Limits, NotFound, Service

STATIC = Path(__file__).with_name("static")
#: The largest request body taken (a JSON request is a few hundred bytes).
MAX_BODY = 1 << 20
#: The longest `detail` line.
MAX_DETAIL = 300


def one_line(text: str) -> str:
    """A message on one line of at most `MAX_DETAIL` characters."""
    line = " ".join(text.split())
    return line if len(line) <= MAX_DETAIL else line[: MAX_DETAIL - 1] + "…"


def _problem(status: int, text: str) -> JSONResponse:
    return JSONResponse({"detail": one_line(text)}, status_code=status)


class BodyLimit:
    """ASGI middleware: a request body over `MAX_BODY` bytes is refused (413) before it
    is read whole, whether its length is declared or it comes in chunks."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"0")
        if not declared.isdigit() or int(declared) > MAX_BODY:
            await _problem(413, f"the request body is over {MAX_BODY} bytes")(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > MAX_BODY:
                raise _TooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await _problem(413, f"the request body is over {MAX_BODY} bytes")(scope, receive, send)


class _TooLarge(Exception):
    pass


def _validation_line(exc: RequestValidationError) -> str:
    """The first validation error as `field: message` (pydantic's words)."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ()) if p not in ("body", "query"))
    return f"{where}: {first.get('msg', 'invalid')}" if where else str(first.get("msg"))


def _answer(status: int, line: Callable[[Any], str]) -> Callable[..., Awaitable[JSONResponse]]:
    """An exception handler answering `status` with the exception's `line`."""

    async def handler(_request: Request, exc: Exception) -> JSONResponse:
        return _problem(status, line(exc))

    return handler


def create_app(limits: Limits | None = None, *, warm: bool = True) -> FastAPI:
    """The service's ASGI app: the API and the web board, its engine warmed at start-up
    (the default agent loaded, the kernels compiled) unless `warm` is false."""
    service = Service(limits or Limits())

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if warm:
            service.warm()
        yield
        service.close()

    app = FastAPI(
        title="vrhcaby",
        summary="A backgammon engine: hints, cube decisions, evaluations, rollouts.",
        version="1",
        lifespan=lifespan,
    )
    app.state.service = service
    app.add_middleware(BodyLimit)

    # Each failure is one `detail` line: (what was raised, the status, its line).
    answers: list[tuple[type[Exception], int, Callable[[Any], str]]] = [
        (RequestValidationError, 422, _validation_line),
        (ValueError, 400, str),
        (Busy, 503, str),
        (NotFound, 404, str),
        (
            PydanticSerializationError,
            500,
            lambda e: f"internal error: an answer that is not JSON: {e}",
        ),
        (Exception, 500, lambda e: f"internal error: {type(e).__name__}: {e}"),
    ]
    for kind, status, line in answers:
        app.add_exception_handler(kind, _answer(status, line))

    # --- analysis -----------------------------------------------------------------------

    @app.get("/hint", tags=["analysis"])
    async def hint_get(q: Annotated[HintQuery, Query()]) -> dict:
        """The plays of a roll ranked by equity, with their probabilities (`hint --json`)."""
        return await service.run(service.hint, q.namespace())

    @app.post("/hint", tags=["analysis"])
    async def hint_post(body: HintRequest) -> dict:
        """`GET /hint` with a JSON body (the position may be a `board`)."""
        return await service.run(service.hint, body.namespace())

    @app.get("/cube", tags=["analysis"])
    async def cube_get(q: Annotated[PositionQuery, Query()]) -> dict:
        """The cube decision of the side on roll (`cube --json`)."""
        return await service.run(service.cube, q.namespace())

    @app.post("/cube", tags=["analysis"])
    async def cube_post(body: PositionBody) -> dict:
        """`GET /cube` with a JSON body."""
        return await service.run(service.cube, body.namespace())

    @app.get("/eval", tags=["analysis"])
    async def eval_get(request: Request) -> dict:
        """The position before the roll (`eval --json`): the options of `/cube`, or a
        position as wildbg writes it (`p0` .. `p25`)."""
        q = _query(PositionQuery, _wildbg_position(dict(request.query_params)))
        return await service.run(service.eval, q.namespace())

    @app.post("/eval", tags=["analysis"])
    async def eval_post(body: PositionBody) -> dict:
        """`GET /eval` with a JSON body."""
        return await service.run(service.eval, body.namespace())

    @app.get("/move", tags=["analysis"])
    async def move(request: Request) -> dict:
        """wildbg's `/move`: the ranked plays of `die1`, `die2` in a position written
        `p0` .. `p25`, with any option of `/hint` (`plies`, `match_to`, ...)."""
        params = _wildbg_position(dict(request.query_params))
        dice = (params.pop("die1", None), params.pop("die2", None))
        if None in dice:
            raise ValueError("give the roll as die1 and die2")
        q = _query(HintQuery, {**params, "dice": f"{dice[0]}{dice[1]}"})
        return await service.run(service.hint, q.namespace())

    # --- the board --------------------------------------------------------------------

    @app.get("/moves", tags=["board"])
    async def moves(q: Annotated[MovesQuery, Query()]) -> dict:
        """Every legal play of a position and roll (`moves --json`)."""
        return await service.run(service.moves, q.position, q.dice, q.variant)

    @app.get(
        "/show",
        tags=["board"],
        responses={200: {"content": {"image/svg+xml": {}, "application/json": {}}}},
    )
    async def show(request: Request) -> Response:
        """The board as an SVG picture (`show --svg`, `play` drawn as arrows), or its
        JSON (`show --json`) with `format=json`; the position as `position` or as wildbg
        writes it (`p0` .. `p25`). Fields: `ShowQuery`."""
        q = _query(ShowQuery, _wildbg_position(dict(request.query_params)))
        svg, doc = await service.run(service.show, q.position_text(), q.play)
        if q.format == "json":
            return JSONResponse(doc)
        return Response(svg, media_type="image/svg+xml")

    @app.post("/analyse", tags=["analysis"])
    async def analyse(body: AnalyseRequest) -> dict:
        """A match or money session (a `.mat` file's text) judged: each player's error
        rates, marked moves and worst decisions (`analyse FILE --json`)."""
        return await service.run(service.analyse, body.mat, body.name, body.namespace())

    # --- rollouts -----------------------------------------------------------------------

    @app.post("/rollout", tags=["rollout"], status_code=202)
    async def rollout_start(body: RolloutRequest) -> dict:
        """Start a rollout job; its id and state. Fetch it at `/rollout/{id}`."""
        job = await service.run(service.start_rollout, body.namespace())
        return job.to_json()

    @app.get("/rollout/{job_id}", tags=["rollout"])
    async def rollout_get(job_id: str) -> dict:
        """A job's state (queued, running, done, cancelled, failed), trials done, the best
        equity so far and, once finished, `rollout --json`'s document as `result`."""
        return service.job(job_id).to_json()

    @app.delete("/rollout/{job_id}", tags=["rollout"])
    async def rollout_cancel(job_id: str) -> dict:
        """Cancel a job: it stops after the chunk of trials in hand and keeps them."""
        return service.cancel(job_id).to_json()

    # --- the service --------------------------------------------------------------------

    @app.get("/health", tags=["service"])
    async def health() -> dict:
        """`{"status": "ok"}` while the service answers."""
        return {"status": "ok"}

    @app.get("/", include_in_schema=False)
    async def index() -> RedirectResponse:
        return RedirectResponse("/board/index.html")

    app.mount("/board", StaticFiles(directory=STATIC), name="board")
    return app


M = TypeVar("M", bound=BaseModel)


def _query(model: type[M], params: dict[str, Any]) -> M:
    """A query model from parameters read by hand; a bad one is a 422 as any other."""
    try:
        return model(**params)
    except ValidationError as exc:
        raise RequestValidationError(exc.errors()) from None


def _wildbg_position(params: dict[str, str]) -> dict[str, Any]:
    """Query parameters with a wildbg position (`p0` .. `p25`) turned into `position`, a
    Position ID; others as they are. ValueError for a malformed count."""
    points = {k: params.pop(k) for k in [f"p{i}" for i in range(26)] if k in params}
    if not points:
        return dict(params)
    if "position" in params:
        raise ValueError("give the position as either 'position' or p0 .. p25")
    board = [[0] * 25, [0] * 25]
    for key, text in points.items():
        i = int(key[1:])
        if not text.lstrip("-").isdigit() or not text.isascii() or abs(int(text)) > 15:
            raise ValueError(f"{key}={text[:20]!r}: a checker count from -15 to 15")
        n = int(text)
        if (i == 25 and n < 0) or (i == 0 and n > 0):
            raise ValueError(
                f"{key}={n}: p25 is the side on roll's bar (0 or more), p0 the "
                "opponent's (0 or less)"
            )
        if i in (0, 25):
            board[1 if i == 25 else 0][24] = abs(n)
        elif n > 0:
            board[1][i - 1] = n
        else:
            board[0][24 - i] = -n
    return {
        **params,
        "position": engine.position_id(engine.Position(np.array(board, dtype=np.int8)).board),
    }


__all__ = ["MAX_BODY", "create_app", "one_line"]
