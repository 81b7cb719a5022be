// Any game's table, drawn from its public view alone: the fallback of a game with no module.
//
// Every field of the table (the whole state, a seat's view or a spectator's table) is drawn
// by its shape: a list with one item per seat goes to the seats' panels, a list of cards is
// drawn as cards, anything else as a labelled value. Each holder of cards carries the same
// `data-cards` / `data-count` as the games' own modules (`field-<name>`, per seat
// `field-<name>-<seat>`), so a test counts a new game's cards as it counts the others'.
import { cardEl, cardRow, h, isCard, range, seatPanel, shownOf, tableOf, turnLine, waitingOf, words, zone } from "../kit.js";

const SKIPPED = new Set(["ruleset", "result", "seat"]);
const DEPTH = 3;

const isCards = (value) => Array.isArray(value) && value.every(isCard);

/** Draws `value` of the field `name` (test id `testid`) by its shape. */
function value(testid, name, item, depth = 0) {
  if (isCards(item)) return cardRow(testid, item, { label: words(name) });
  if (Array.isArray(item) && item.length && item.every(isCards) && depth < DEPTH) {
    return h(
      "div",
      { class: "generic-rows", "data-testid": testid },
      item.map((cards, k) =>
        h("div", { class: "generic-row" }, h("span", { class: "slot-title" }, String(k)), value(`${testid}-${k}`, `${name} ${k}`, cards, depth + 1)),
      ),
    );
  }
  if (isCard(item)) {
    return h("div", { class: "cards", "data-testid": testid, "data-count": 1, "data-cards": item }, cardEl(item));
  }
  if (item !== null && typeof item === "object" && !Array.isArray(item) && depth < DEPTH) {
    return h(
      "dl",
      { class: "generic-values", "data-testid": testid },
      Object.entries(item).flatMap(([key, inner]) => [
        h("dt", {}, words(key)),
        h("dd", {}, value(`${testid}-${key}`, key, inner, depth + 1)),
      ]),
    );
  }
  const text = item === null || item === undefined ? "–" : typeof item === "object" ? JSON.stringify(item) : String(item);
  return h("span", { class: "generic-value", "data-testid": testid, "data-value": text }, text);
}

export function draw(replay) {
  const table = shownOf(replay);
  const players = replay.seats.length;
  const toMove = waitingOf(replay, () => []);
  const fields = Object.entries(table).filter(([name]) => !SKIPPED.has(name));
  const bySeat = (item) => Array.isArray(item) && players > 0 && item.length === players && !isCards(item);
  const seated = fields.filter(([, item]) => bySeat(item));
  const shared = fields.filter(([, item]) => !bySeat(item));
  const panels = range(players).map((seat) =>
    seatPanel(
      replay,
      seat,
      toMove,
      {},
      ...seated.map(([name, item]) => zone(words(name), value(`field-${name}-${seat}`, name, item[seat]))),
    ),
  );
  const middle = [
    h(
      "div",
      { class: "heaps" },
      shared.map(([name, item]) => zone(words(name), value(`field-${name}`, name, item))),
    ),
    turnLine(toMove, ""),
  ];
  return tableOf(replay.game, panels, middle);
}

export const events = {};
