// The web board of `vrhcaby serve`: plain JavaScript over the service's own API, nothing
// fetched from elsewhere. Three panels: analyse a position (the board drawn by /show, the
// ranked plays of /hint, the cube of /cube; a click on a play shows the position after it),
// a match or session judged (/analyse: a .mat file's error rates and worst decisions)
// and a money game against the bot with the cube (legal plays from /moves, the bot's
// plays from /hint, its cube decisions from /cube). Dice are rolled here; `?seed=N` in
// the address makes them repeatable.
"use strict";

const START = "4HPwATDgc/ABMA";
// The five probabilities' heads: vrhcaby.equity.outcomes.SHORT_NAMES (tests/test_serve.py
// checks that they are the same).
const NAMES = ["W", "W(g)", "W(bg)", "L(g)", "L(bg)"];
const $ = (id) => document.getElementById(id);

// --- the API --------------------------------------------------------------------------

async function api(path, params) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value !== null && value !== undefined && value !== "") query.set(key, value);
  }
  const response = await fetch(`${path}?${query}`);
  if (!response.ok) {
    let detail = `${response.status} ${response.statusText}`;
    try { detail = (await response.json()).detail || detail; } catch (e) { /* not JSON */ }
    throw new Error(detail);
  }
  const type = response.headers.get("content-type") || "";
  return type.includes("json") ? response.json() : response.text();
}

async function drawBoard(position, caption, play, cube) {
  $("board").innerHTML = await api("/show", { position, play, ...cube });
  $("board").dataset.position = position;
  $("board-caption").textContent = caption || "";
}

const fixed = (x, digits = 3) => (x === null ? "n/a" : (x >= 0 ? "+" : "") + x.toFixed(digits));
const percent = (p) => (100 * p).toFixed(1);

// --- analysis -------------------------------------------------------------------------

function analysisOptions() {
  const options = { position: $("position-input").value.trim() };
  const matchTo = $("match-input").value.trim();
  if (matchTo) {
    options.match_to = matchTo;
    options.score = $("score-input").value.trim() || "0-0";
  }
  return options;
}

let analysing = 0; // the latest analysis: an older one's answers are dropped

async function analyse(event) {
  if (event) event.preventDefault();
  const mine = ++analysing;
  $("analyse-error").textContent = "";
  const options = analysisOptions();
  const dice = $("dice-input").value.trim();
  const plies = $("plies-input").value;
  const cubePlies = $("cube-plies-input").value;
  const body = $("hint-table").querySelector("tbody");
  body.innerHTML = "";
  $("cube-box").innerHTML = "";
  $("hint-caption").textContent = "";
  try {
    await drawBoard(options.position, "The side on roll (X) plays from the bottom.");
    const cube = api("/cube", { ...options, plies: cubePlies });
    const hint = dice ? api("/hint", { ...options, dice, plies, candidates: 20 }) : null;
    const [cubeDoc, hintDoc] = await Promise.all([cube, hint]);
    if (mine !== analysing) return;
    showCube(cubeDoc);
    if (hintDoc) showHint(hintDoc, options.position);
    else $("hint-caption").textContent = "(give a roll to rank its plays)";
  } catch (error) {
    if (mine === analysing) $("analyse-error").textContent = error.message;
  }
}

function showHint(doc, position) {
  const body = $("hint-table").querySelector("tbody");
  const unit = doc.match_to ? "EMG" : "points per cube";
  $("hint-caption").textContent =
    `roll ${doc.dice.join("-")}, ${doc.cubeful ? "cubeful" : "cubeless"} equity in ${unit}`;
  if (!doc.moves.length) {
    body.innerHTML = '<tr><td colspan="10">No legal play: the turn passes.</td></tr>';
    return;
  }
  const best = doc.moves[0].equity;
  doc.moves.forEach((move, i) => {
    const row = document.createElement("tr");
    row.dataset.play = move.play;
    row.dataset.after = move.position_id;
    const cells = [i + 1, move.play, move.plies, fixed(move.equity),
      i ? fixed(move.equity - best) : "", ...move.probabilities.map(percent)];
    for (const value of cells) {
      const cell = document.createElement("td");
      cell.textContent = value;
      row.appendChild(cell);
    }
    row.addEventListener("click", () => {
      body.querySelectorAll("tr.chosen").forEach((r) => r.classList.remove("chosen"));
      row.classList.add("chosen");
      drawBoard(move.position_id, `After ${move.play} (X still at the bottom).`)
        .catch((error) => { $("analyse-error").textContent = error.message; });
    });
    body.appendChild(row);
  });
  $("hint-table").dataset.best = doc.moves[0].play;
  $("hint-table").dataset.position = position;
}

function showCube(doc) {
  const rows = [["No double", doc.equities.nd], ["Double, take", doc.equities.dt],
    ["Double, pass", doc.equities.dp]];
  const box = $("cube-box");
  const action = document.createElement("p");
  action.className = "cube-action";
  action.id = "cube-action";
  action.textContent = `${doc.detail} (${doc.cube_plies}-ply)`;
  box.appendChild(action);
  const table = document.createElement("table");
  table.className = "numbers";
  table.innerHTML = "<thead><tr><th></th><th>equity</th><th>diff</th></tr></thead>";
  const body = document.createElement("tbody");
  if (doc.available) {
    for (const [name, value] of rows) {
      const row = document.createElement("tr");
      const diff = value === doc.optimal ? "" : fixed(value - doc.optimal);
      for (const text of [name, fixed(value), diff]) {
        const cell = document.createElement("td");
        cell.textContent = text;
        row.appendChild(cell);
      }
      body.appendChild(row);
    }
  }
  const probabilities = document.createElement("tr");
  probabilities.innerHTML = `<td colspan="3">${NAMES.map(
    (n, i) => `${n} ${percent(doc.probabilities[i])}%`).join(" · ")}</td>`;
  body.appendChild(probabilities);
  table.appendChild(body);
  box.appendChild(table);
}

// --- a match analysed ------------------------------------------------------------------

async function analyseMatch(event) {
  event.preventDefault();
  $("match-error").textContent = "";
  const file = $("mat-file").files[0];
  const mat = file ? await file.text() : $("mat-input").value;
  if (!mat.trim()) {
    $("match-error").textContent = "Choose a .mat file or paste one.";
    return;
  }
  $("match-caption").textContent = "Analysing…";
  try {
    const response = await fetch("/analyse", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ mat, name: file ? file.name.replace(/[^A-Za-z0-9_. -]/g, "_")
        : "pasted.mat", plies: Number($("mat-plies").value) }),
    });
    const doc = await response.json();
    if (!response.ok) throw new Error(doc.detail);
    showMatch(doc);
  } catch (error) {
    $("match-caption").textContent = "";
    $("match-error").textContent = error.message;
  }
}

function showMatch(doc) {
  const what = doc.match_to ? `${doc.match_to}-point match` : "money session";
  $("match-caption").textContent =
    `${doc.path}: ${what}, ${doc.games} game${doc.games === 1 ? "" : "s"}, judged by ` +
    `${doc.judge}; rates in ${doc.unit} per decision.`;
  const [a, b] = doc.players;
  const milli = (x) => (x ? (-x).toFixed(1) : "0.0");
  const rows = [
    ["", a.name, b.name],
    ["Moves (unforced)", `${a.moves} (${a.unforced})`, `${b.moves} (${b.unforced})`],
    ["Marked doubtful / bad / very bad", `${a.doubtful} / ${a.bad} / ${a.very_bad}`,
      `${b.doubtful} / ${b.bad} / ${b.very_bad}`],
    ["Checker error rate", milli(a.checker_rate), milli(b.checker_rate)],
    ["Cube decisions (close)", `${a.cube_decisions} (${a.close_cube})`,
      `${b.cube_decisions} (${b.close_cube})`],
    ["Cube error rate", milli(a.cube_rate), milli(b.cube_rate)],
    ["Overall error rate", milli(a.rate), milli(b.rate)],
    ["Snowie error rate", milli(a.snowie_rate), milli(b.snowie_rate)],
  ];
  const body = $("match-table").querySelector("tbody");
  body.innerHTML = "";
  for (const cells of rows) {
    const row = document.createElement("tr");
    for (const text of cells) {
      const cell = document.createElement(cells === rows[0] ? "th" : "td");
      cell.textContent = text;
      row.appendChild(cell);
    }
    body.appendChild(row);
  }
  const worst = $("worst-table").querySelector("tbody");
  worst.innerHTML = "";
  for (const d of doc.worst) {
    const row = document.createElement("tr");
    const who = doc.players[d.player].name;
    const roll = d.dice ? ` ${d.dice.join("")}` : "";
    for (const text of [(-1000 * d.error).toFixed(1), `${who}${roll}: ${d.made}`, d.best,
      d.mark, `game ${d.game}, line ${d.line}`]) {
      const cell = document.createElement("td");
      cell.textContent = text;
      row.appendChild(cell);
    }
    row.addEventListener("click", () => {
      drawBoard(d.position, `${who}${roll}: played ${d.made}, best ${d.best}.`)
        .catch((error) => { $("match-error").textContent = error.message; });
    });
    worst.appendChild(row);
  }
  $("match-table").dataset.done = "yes";
}

// --- a money game against the bot -----------------------------------------------------

function random() {
  // mulberry32 when the address has ?seed=N (repeatable games), else the browser's.
  const seed = new URLSearchParams(location.search).get("seed");
  if (seed === null) return Math.random;
  let a = Number(seed) >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rng = random();
const die = () => 1 + Math.floor(rng() * 6);

const game = {
  // The position with the human (X) at the bottom, and the same with the bot on roll.
  human: START, bot: START, cube: 1, owner: "centre", turned: false,
  score: { human: 0, bot: 0 },
};

function cubeFor(side) {
  // cube_value / cube_owner as the side on roll sees them (`me` is that side).
  const owner = game.owner === "centre" ? "centre" : game.owner === side ? "me" : "opponent";
  return { cube_value: game.cube, cube_owner: owner };
}

function status(text) { $("game-status").textContent = text; }

function buttons(shown) {
  for (const id of ["roll", "double", "take", "pass"]) $(id).hidden = !shown.includes(id);
  if (!shown.length) $("legal-plays").innerHTML = "";
}

function showScore() {
  $("score-line").textContent = `You ${game.score.human} : ${game.score.bot} bot`;
  const owner = game.owner === "centre" ? "in the middle"
    : game.owner === "human" ? "owned by you" : "owned by the bot";
  $("cube-line").textContent = `Cube ${game.cube}, ${owner}.`;
}

function gameError(error) {
  $("game-error").textContent = error.message;
}

async function newGame() {
  $("game-error").textContent = "";
  Object.assign(game, { human: START, bot: START, cube: 1, owner: "centre", turned: false });
  showScore();
  let mine = die(), theirs = die();
  while (mine === theirs) { mine = die(); theirs = die(); }
  await drawBoard(game.human, "You are X, at the bottom; you move towards your 1-point.",
    null, cubeFor("human"));
  if (mine > theirs) {
    status(`Opening roll: you ${mine}, bot ${theirs}. You start with ${mine}-${theirs}.`);
    await humanRolled([mine, theirs]);
  } else {
    status(`Opening roll: you ${mine}, bot ${theirs}. The bot starts.`);
    await botTurn([theirs, mine]);
  }
}

function humanTurn() {
  const mayDouble = (game.owner === "centre" || game.owner === "human") && game.cube < 64;
  buttons(mayDouble ? ["roll", "double"] : ["roll"]);
  status("Your turn: roll, or double.");
}

async function humanDoubles() {
  buttons([]);
  const cube = await api("/cube", { position: game.human, ...cubeFor("human") });
  if (cube.take || cube.beaver) {
    game.cube *= 2;
    game.owner = "bot";
    game.turned = true;
    showScore();
    status(`The bot takes: the cube is at ${game.cube}. Roll.`);
    buttons(["roll"]);
  } else {
    gameOver("human", game.cube, "The bot passes");
  }
}

async function humanRolled(dice) {
  const doc = await api("/moves", { position: game.human, dice: dice.join("") });
  const list = $("legal-plays");
  list.innerHTML = "";
  buttons([]);
  if (!doc.moves.length) {
    status(`You rolled ${dice.join("-")}: no legal play, the turn passes.`);
    game.bot = await flipped(game.human);
    await botTurn();
    return;
  }
  status(`You rolled ${dice.join("-")}: choose your play.`);
  for (const move of doc.moves) {
    const item = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "legal-play";
    button.textContent = move.play;
    button.addEventListener("click", () => humanPlays(move).catch(gameError));
    button.addEventListener("mouseenter", () => {
      drawBoard(game.human, `Your roll ${dice.join("-")}: ${move.play}`, move.play,
        cubeFor("human"))
        .catch(() => {});
    });
    item.appendChild(button);
    list.appendChild(item);
  }
  await drawBoard(game.human, `You rolled ${dice.join("-")}.`, null, cubeFor("human"));
}

async function humanPlays(move) {
  $("legal-plays").innerHTML = ""; // at once: one click, one play
  game.human = move.position_id;
  game.bot = move.next_position_id;
  await drawBoard(game.human, `You played ${move.play}.`, null, cubeFor("human"));
  if (await finished(game.human, "human")) return;
  await botTurn();
}

async function botTurn(opening) {
  buttons([]);
  if (!opening) {
    const mayDouble = (game.owner === "centre" || game.owner === "bot") && game.cube < 64;
    if (mayDouble) {
      const cube = await api("/cube", { position: game.bot, ...cubeFor("bot") });
      if (cube.double) {
        status(`The bot doubles to ${2 * game.cube}: take or pass?`);
        buttons(["take", "pass"]);
        return; // the answer's button goes on with botRolls
      }
    }
  }
  await botRolls(opening);
}

async function botRolls(opening) {
  const dice = opening || [die(), die()];
  const plies = $("bot-plies").value;
  const doc = await api("/hint", { position: game.bot, dice: dice.join(""), plies,
    candidates: 1, ...cubeFor("bot") });
  if (!doc.moves.length) {
    status(`The bot rolled ${dice.join("-")}: no legal play. Your turn.`);
    game.human = await flipped(game.bot);
    await drawBoard(game.human, `The bot rolled ${dice.join("-")} and cannot move.`, null,
      cubeFor("human"));
  } else {
    const move = doc.moves[0];
    game.bot = move.position_id;
    game.human = move.next_position_id;
    await drawBoard(game.human, `The bot rolled ${dice.join("-")} and played ${move.play}.`,
      null, cubeFor("human"));
    if (await finished(game.bot, "bot")) return;
    status(`The bot rolled ${dice.join("-")} and played ${move.play}. Your turn.`);
  }
  humanTurn();
}

async function flipped(position) {
  // The same position with the other side on roll (after a roll that cannot be played):
  // the board from /show's JSON, turned round and written as wildbg's p0 .. p25.
  const doc = await api("/show", { position, format: "json" });
  const params = { format: "json", p25: doc.board.O[24], p0: -doc.board.X[24] };
  for (let i = 1; i <= 24; i++) params[`p${i}`] = doc.board.O[i - 1] - doc.board.X[24 - i];
  return (await api("/show", params)).position_id;
}

async function finished(position, mover) {
  // Whether the side that just moved (at the bottom of `position`) has borne off all.
  const doc = await api("/show", { position, format: "json" });
  if (doc.off.X < 15) return false;
  const loser = doc.board.O;
  let value = 1;
  if (doc.off.O === 0) {
    value = 2;
    const home = loser.slice(18, 25).reduce((a, b) => a + b, 0);
    if (home > 0) value = 3;
  }
  if (!game.turned) value = 1; // the Jacoby rule: gammons count once the cube is turned
  const names = { 1: "a single game", 2: "a gammon", 3: "a backgammon" };
  gameOver(mover, value * game.cube, `${mover === "human" ? "You win" : "The bot wins"} ${names[value]}`);
  return true;
}

function gameOver(winner, points, how) {
  game.score[winner] += points;
  showScore();
  buttons([]);
  status(`${how}: ${points} point${points > 1 ? "s" : ""} to ${winner === "human" ? "you" : "the bot"}. Game over.`);
  $("game-status").dataset.over = winner;
}

// --- wiring ---------------------------------------------------------------------------

function showTab(name) {
  document.querySelectorAll(".tab").forEach((t) => t.classList.toggle("active", t.dataset.tab === name));
  document.querySelectorAll(".panel").forEach((p) => p.classList.toggle("active", p.id === name));
}

document.querySelectorAll(".tab").forEach((tab) =>
  tab.addEventListener("click", () => showTab(tab.dataset.tab)));
$("position-form").addEventListener("submit", analyse);
$("match-form").addEventListener("submit", analyseMatch);
$("new-game").addEventListener("click", () => {
  delete $("game-status").dataset.over;
  newGame().catch(gameError);
});
$("roll").addEventListener("click", () => {
  buttons([]); // at once: one click, one roll
  humanRolled([die(), die()]).catch(gameError);
});
$("double").addEventListener("click", () => humanDoubles().catch(gameError));
$("take").addEventListener("click", () => {
  buttons([]);
  game.cube *= 2;
  game.owner = "human";
  game.turned = true;
  showScore();
  botRolls().catch(gameError);
});
$("pass").addEventListener("click", () => gameOver("bot", game.cube, "You pass"));
analyse().catch(() => {});
