// The drawing kit every game's module draws its table with: cards, rows, stacks, seats.
//
// Every element a test compares with the API carries a `data-testid` and the API's own data:
// `data-cards` (cards in the API's encoding, in the API's order, space-separated) and
// `data-count` (how many cards, known or not). A game's module draws a table from `replay`:
// `{ game, seats, seat, state, view, events, result, to_move?, clocks? }`, where `state` is the
// whole table (a finished game), `view` what one seat or a spectator may know (`seat` null:
// a spectator's table), `to_move` the seats the game waits for when the page knows them.

export const HIDDEN = "??";
const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const RANK_NAMES = { T: "10", J: "jack", Q: "queen", K: "king", A: "ace" };
const CARD = /^(?:[2-9TJQKA][CDHS]|X\d*|\?\?)$/;

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export const turning = (direction) => (direction === 1 ? "clockwise" : "anticlockwise");
export const range = (n) => Array.from({ length: n }, (_, i) => i);
export const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
export const words = (name) => String(name).replaceAll("_", " ");

// Cards ---------------------------------------------------------------------------------

/** Whether `value` is a card in the API's encoding (`QH`, `TS`, `X1`, `??`). */
export const isCard = (value) => typeof value === "string" && CARD.test(value);

export function cardLabel(card) {
  if (card === HIDDEN) return "?";
  if (card[0] === "X") return `★${card.slice(1)}`;
  const rank = card[0] === "T" ? "10" : card[0];
  return rank + (SUITS[card[1]] || card.slice(1));
}

export function cardName(card) {
  if (card === HIDDEN) return "a hidden card";
  if (card[0] === "X") return `joker ${card.slice(1)}`;
  const rank = RANK_NAMES[card[0]] || card[0];
  return card.length > 1 ? `${rank} of ${SUIT_NAMES[card[1]] || card[1]}` : rank;
}

export const cardsText = (cards) => cards.map(cardLabel).join(" ");

export function cardEl(card, { faceDown = false } = {}) {
  if (card === HIDDEN) {
    return h("span", {
      class: "card back",
      "data-card": HIDDEN,
      role: "img",
      "aria-label": "a face-down card",
    });
  }
  const classes = ["card"];
  if (card[0] === "X") classes.push("joker");
  else if (card[1] === "D" || card[1] === "H") classes.push("red");
  if (faceDown) classes.push("down");
  const name = cardName(card) + (faceDown ? " (face down)" : "");
  return h(
    "span",
    { class: classes.join(" "), "data-card": card, title: name, role: "img", "aria-label": name },
    h("span", { "aria-hidden": "true" }, cardLabel(card)),
  );
}

function describeRow(cards, count) {
  if (cards === null) return plural(count, "hidden card");
  return cards.length ? cards.map(cardName).join(", ") : "none";
}

/** A row of cards: `cards` known (drawn face up, in order), or null: `count` card backs. */
export function cardRow(
  testid,
  cards,
  { count = 0, faceDown = false, fan = true, label = "", attrs = {} } = {},
) {
  const known = cards !== null && cards !== undefined;
  const n = known ? cards.length : count;
  const row = h("div", {
    ...attrs,
    class: `cards${fan ? " fan" : ""}`,
    role: "group",
    "data-testid": testid,
    "data-count": n,
    "data-cards": known ? cards.join(" ") : null,
    "aria-label": `${label ? `${label}: ` : ""}${describeRow(known ? cards : null, n)}`,
  });
  if (n === 0) row.append(h("span", { class: "empty", "aria-hidden": "true" }, "—"));
  else if (known) row.append(...cards.map((card) => cardEl(card, { faceDown })));
  else row.append(...range(n).map(() => cardEl(HIDDEN)));
  return row;
}

/** A face-down stack drawn as one card with its size: its `top` face up when given. */
export function stack(testid, count, { top = null, cards = null, label = "" } = {}) {
  const face =
    count === 0
      ? h("span", { class: "card slot-empty", "aria-hidden": "true" })
      : cardEl(top || HIDDEN);
  return h(
    "div",
    {
      class: "stack",
      role: "group",
      "data-testid": testid,
      "data-count": count,
      "data-top": top,
      "data-cards": cards ? cards.join(" ") : null,
      "aria-label": `${label}: ${plural(count, "card")}${top ? `, ${cardName(top)} on top` : ""}`,
    },
    face,
    h("span", { class: "stack-count", "aria-hidden": "true" }, String(count)),
  );
}

export const zone = (title, ...content) =>
  h("div", { class: "zone" }, h("span", { class: "zone-title" }, title), ...content);

// Seats -----------------------------------------------------------------------------------

export function seatName(seat, index) {
  const who = seat.name
    ? `${seat.name}${seat.version ? `@${seat.version}` : ""}`
    : seat.bot || seat.kind;
  return `Seat ${index} · ${who}`;
}

/** Returns `ms` as `m:ss` (never below 0). */
export function clockText(ms) {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

/** A seat's clock (live pages of timed games): the page's ticker counts `data-deadline` down. */
function clockEl(clock, index) {
  if (!clock || !clock.timed) return null;
  const attrs = {
    class: `clock${clock.deadline ? " running" : ""}${clock.forfeited ? " forfeited" : ""}`,
    "data-testid": `clock-${index}`,
    "data-bank-ms": clock.bank_ms,
    "data-strikes": clock.strikes,
    "data-deadline": clock.deadline ?? null,
  };
  if (clock.forfeited) return h("span", attrs, "forfeited");
  const strikes = clock.strikes ? ` · ${plural(clock.strikes, "strike")}` : "";
  return h(
    "span",
    { ...attrs, role: "timer", "aria-label": `seat ${index}'s clock` },
    h("span", { class: "clock-move" }, clock.deadline ? "…" : "waiting"),
    " · bank ",
    h("span", { class: "clock-bank" }, clockText(clock.bank_ms)),
    strikes,
  );
}

export function seatPanel(replay, index, toMove, { out = [], extra = [] } = {}, ...zones) {
  const place = replay.result ? replay.result.places[index] : null;
  const moving = toMove.includes(index);
  const clock = replay.clocks ? clockEl(replay.clocks[index], index) : null;
  const badges = [
    replay.seat === index ? h("span", { class: "badge you" }, "you") : null,
    moving ? h("span", { class: "badge turn" }, "to move") : null,
    out.includes(index) ? h("span", { class: "badge out" }, "out") : null,
    place !== null && place !== undefined
      ? h("span", { class: "badge place", "data-testid": `place-${index}` }, `place ${place}`)
      : null,
    ...extra,
  ];
  return h(
    "section",
    {
      class: `seat${moving ? " moving" : ""}${replay.seat === index ? " mine" : ""}`,
      "data-testid": `seat-${index}`,
      "data-seat": index,
      "data-to-move": moving ? "true" : "false",
      "aria-label": seatName(replay.seats[index] || {}, index),
    },
    h("h2", {}, seatName(replay.seats[index] || {}, index), ...badges),
    clock,
    ...zones,
  );
}

export function turnLine(toMove, detail) {
  const text = toMove.length
    ? `To move: ${toMove.map((s) => `seat ${s}`).join(", ")}`
    : "Nobody to move";
  return h(
    "p",
    { class: "turn-line", "data-testid": "turn", "data-seats": toMove.join(" ") },
    text,
    detail ? ` · ${detail}` : "",
  );
}

/** Splits the seats around the middle of the table: the first half above, the rest below. */
export function tableOf(game, panels, middle) {
  const half = Math.ceil(panels.length / 2);
  return [
    h("div", { class: "seats seats-top" }, panels.slice(0, half)),
    h("div", { class: `middle middle-${game}`, "data-testid": "middle" }, middle),
    h("div", { class: "seats seats-bottom" }, panels.slice(half)),
  ];
}

/** Returns the table `replay` shows: the whole state, else the seat's or spectator's view. */
export const shownOf = (replay) => replay.state || replay.view;

/** Returns the seats the game waits for: the page's own knowledge, else `fallback()`. */
export const waitingOf = (replay, fallback) =>
  replay.result ? [] : Array.isArray(replay.to_move) ? replay.to_move : fallback();

// Words shared by the games' event descriptions ------------------------------------------

export const seatOf = (n) => `seat ${n}`;
export const unless = (playable) => (playable ? "" : ", which cannot be played");
export const ZONES = {
  hand: "the hand",
  face_up: "the face-up cards",
  face_down: "the face-down cards",
  main: "the main pile",
  slot: "a slot",
};
