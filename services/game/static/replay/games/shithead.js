// Shithead's table and its events in words.
import {
  cardEl,
  cardRow,
  cardsText,
  cardLabel as one,
  h,
  plural,
  range,
  seatPanel,
  stack,
  tableOf,
  turnLine,
  turning,
  unless,
  waitingOf,
  words,
  zone,
  seatOf,
  HIDDEN,
  ZONES,
} from "../kit.js";

export function draw(replay) {
  const s = replay.state;
  const v = replay.view;
  const t = s || v;
  const players = s ? s.hands.length : v.hand_sizes.length;
  const toMove = waitingOf(replay, () => {
    if (t.phase === "swap") return range(players).filter((i) => !t.ready[i]);
    return t.phase === "play" ? [t.turn] : [];
  });
  const panels = range(players).map((i) =>
    seatPanel(
      replay,
      i,
      toMove,
      {
        out: t.out,
        extra:
          t.phase === "swap" && t.ready[i] ? [h("span", { class: "badge ready" }, "ready")] : [],
      },
      zone(
        "Hand",
        cardRow(`hand-${i}`, s ? s.hands[i] : i === v.seat ? v.hand : null, {
          count: v ? v.hand_sizes[i] : 0,
          label: "hand",
        }),
      ),
      zone("Face up", cardRow(`face-up-${i}`, t.face_up[i], { fan: false, label: "face up" })),
      zone(
        "Face down",
        cardRow(`face-down-${i}`, s ? s.face_down[i] : null, {
          count: v ? v.face_down_sizes[i] : 0,
          faceDown: true,
          fan: false,
          label: "face down",
        }),
      ),
    ),
  );
  const pile = t.pile;
  const top = pile.length ? pile[pile.length - 1] : null;
  const deckSize = s ? s.deck.length : v.deck_size;
  const middle = [
    h(
      "div",
      { class: "heaps" },
      zone("Deck", stack("deck", deckSize, { label: "the deck" })),
      zone(
        "Pile",
        h(
          "div",
          { class: "pile-top", "data-testid": "pile-top", "data-card": top || "" },
          top ? cardEl(top) : h("span", { class: "card slot-empty", "aria-hidden": "true" }),
        ),
        cardRow("pile", pile, { label: "the pile" }),
      ),
      zone("Burnt", stack("burnt", t.burnt.length, { label: "burnt cards" })),
    ),
    turnLine(toMove, `phase: ${t.phase}, ${turning(t.direction)}, ${plural(t.moves, "move")}`),
  ];
  return tableOf("shithead", panels, middle);
}

export const events = {
  CardsSwapped: (d) =>
    `${seatOf(d.seat)} puts ${one(d.hand_card)} face up` +
    ` and takes ${one(d.face_up_card)} into the hand`,
  PlayerReady: (d) => `${seatOf(d.seat)} is ready`,
  PlayStarted: (d) => {
    const rank = d.rank ? `, must play ${d.rank}` : "";
    return `play starts: ${seatOf(d.seat)} leads (${words(d.rule)}${rank})`;
  },
  CardsPlayed: (d) =>
    `${seatOf(d.seat)} plays ${cardsText(d.cards)} from ${ZONES[d.source] || d.source}`,
  FaceDownRevealed: (d) =>
    `${seatOf(d.seat)} turns face-down card ${d.index}: ${one(d.card)}${unless(d.playable)}`,
  DeckCardTurned: (d) =>
    `${seatOf(d.seat)} turns ${one(d.card)} from the deck${unless(d.playable)}`,
  CardsDrawn: (d) => {
    const cards = d.cards.includes(HIDDEN) ? "" : `: ${cardsText(d.cards)}`;
    const reason = d.reason ? ` (${words(d.reason)})` : "";
    return `${seatOf(d.seat)} draws ${plural(d.cards.length, "card")}${cards}${reason}`;
  },
  DirectionReversed: (d) => `the direction of play turns ${turning(d.direction)}`,
  PileBurned: (d) => {
    const why = d.reason === "run" ? "a run of one rank" : "the burn rank";
    return `${seatOf(d.seat)} burns the pile of ${plural(d.count, "card")} (${why})`;
  },
  PilePickedUp: (d) =>
    `${seatOf(d.seat)} picks up the pile: ${cardsText(d.cards)} (${words(d.reason)})`,
  PlayerOut: (d) => `${seatOf(d.seat)} is out, in place ${d.place}`,
  TurnPassed: (d) => `it is ${seatOf(d.seat)}'s turn`,
};
