// Hospodský autobus's table and its events in words.
import {
  cardLabel as one,
  cardRow,
  h,
  plural,
  range,
  seatOf,
  seatPanel,
  stack,
  tableOf,
  turnLine,
  waitingOf,
  zone,
  ZONES,
} from "../kit.js";

export function draw(replay) {
  const s = replay.state;
  const v = replay.view;
  const t = s || v;
  const players = s ? s.hands.length : v.hand_sizes.length;
  const toMove = waitingOf(replay, () => [t.turn]);
  const panels = range(players).map((i) => {
    const main = s ? s.mains[i] : null;
    const mainSize = s ? main.length : v.main_sizes[i];
    const mainTop = s ? main[0] || null : v.main_tops[i] || null;
    const slots = range(t.slots[i].length).map((j) =>
      h(
        "div",
        { class: "slot" },
        h("span", { class: "slot-title" }, `slot ${j}`),
        cardRow(`slot-${i}-${j}`, t.slots[i][j], {
          label: `slot ${j}`,
          attrs: { "data-rank": t.slot_ranks[i][j] ?? "" },
        }),
      ),
    );
    return seatPanel(
      replay,
      i,
      toMove,
      {},
      h(
        "div",
        { class: "zones-row" },
        zone(
          "Main pile",
          stack(`main-${i}`, mainSize, { top: mainTop, cards: main, label: "main pile" }),
        ),
        zone(
          "Hand",
          cardRow(`hand-${i}`, s ? s.hands[i] : i === v.seat ? v.hand : null, {
            count: v ? v.hand_sizes[i] : 0,
            label: "hand",
          }),
        ),
      ),
      zone("Slots", h("div", { class: "slots" }, slots)),
    );
  });
  const sequences = t.sequences.map((cards, k) =>
    h(
      "div",
      { class: "sequence" },
      h("span", { class: "slot-title" }, `sequence ${k}`),
      cardRow(`sequence-${k}`, cards, { label: `sequence ${k}` }),
    ),
  );
  const middle = [
    h(
      "div",
      { class: "heaps" },
      zone("Draw pile", stack("draw", s ? s.draw.length : v.draw_size, { label: "the draw pile" })),
      zone(
        "Completed",
        stack("completed", s ? s.completed.length : v.completed_size, {
          label: "completed stock",
        }),
      ),
      zone(
        "Sequences",
        h(
          "div",
          { class: "sequences", "data-testid": "sequences", "data-count": t.sequences.length },
          sequences.length ? sequences : h("span", { class: "empty" }, "none yet"),
        ),
      ),
    ),
    turnLine(toMove, `${plural(t.turns, "turn")} played`),
  ];
  return tableOf("autobus", panels, middle);
}

export const events = {
  CardPlayed: (d) => {
    const from = d.source === "slot" ? `slot ${d.slot}` : ZONES[d.source];
    const onto = d.opened ? "opening a new sequence" : `onto sequence ${d.sequence}`;
    return `${seatOf(d.seat)} plays ${one(d.card)} from ${from} ${onto}`;
  },
  MainTopRevealed: (d) => `${seatOf(d.seat)} turns up ${one(d.card)} on the main pile`,
  SequenceCompleted: (d) =>
    `sequence ${d.sequence} is complete (${plural(d.cards.length, "card")}) and leaves the table`,
  StockReshuffled: (d) => `the completed stock becomes the draw pile (reshuffle ${d.number})`,
  CardDiscarded: (d) => `${seatOf(d.seat)} ends the turn with ${one(d.card)} onto slot ${d.slot}`,
  CardUnderTheBus: (d) => `${seatOf(d.seat)} ends the turn with ${one(d.card)} under the bus`,
  TurnEnded: (d) => `${seatOf(d.seat)} ends the turn`,
};
