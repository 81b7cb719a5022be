// A bot as a local program, in JavaScript on Node.js with nothing but its standard library.
//
//   cardarena simulate --game autobus --bots "exec:node examples/local_bot.js",heuristic
//   cardarena connect --server http://127.0.0.1:8000 --token <token> \
//       --bot "exec:node examples/local_bot.js"
//
// It reads one turn per line on its standard input (a JSON object: game_id, game, seat,
// version, view, legal_actions, ...) and writes one action per line on its standard output:
// the first legal action that plays cards, else the first legal action. Its standard error
// is its own log. It ends when its standard input does.
"use strict";

const readline = require("node:readline");

const PLAYS = new Set(["PlayCards", "PlayToSequence"]);

function choose(turn) {
  const plays = turn.legal_actions.filter((action) => PLAYS.has(action.type));
  return plays.length > 0 ? plays[0] : turn.legal_actions[0];
}

const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on("line", (line) => {
  const turn = JSON.parse(line);
  process.stdout.write(JSON.stringify(choose(turn)) + "\n");
});
