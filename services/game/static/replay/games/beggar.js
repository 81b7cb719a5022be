// Beggar-my-neighbour's table and its events in words.
import {
  cardEl,
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
} from "../kit.js";

export function draw(replay) {
  const s = replay.state;
  const v = replay.view;
  const t = s || v;
  const players = s ? s.packs.length : v.pack_sizes.length;
  const toMove = waitingOf(replay, () => [t.leader]);
  const panels = range(players).map((i) =>
    seatPanel(
      replay,
      i,
      toMove,
      { out: t.out },
      zone(
        "Pack",
        stack(`pack-${i}`, s ? s.packs[i].length : v.pack_sizes[i], {
          cards: s ? s.packs[i] : null,
          label: "pack",
        }),
      ),
    ),
  );
  const event = replay.events[replay.events.length - 1];
  const trick = event && event.type === "TrickPlayed" ? event.data : null;
  const collected =
    trick && trick.collector !== null ? `, collected by seat ${trick.collector}` : "";
  const middle = [
    h(
      "div",
      { class: "heaps" },
      zone("Pile", cardRow("pile", t.pile, { label: "the pile" })),
      trick
        ? zone(
            `Last trick (led by seat ${trick.leader}${collected})`,
            h(
              "div",
              {
                class: "trick",
                "data-testid": "trick",
                "data-cards": trick.cards.join(" "),
                "data-seats": trick.seats.join(" "),
                "data-collector": trick.collector ?? "",
              },
              trick.cards.map((card, k) =>
                h("span", { class: "turned" }, cardEl(card), h("small", {}, `s${trick.seats[k]}`)),
              ),
            ),
          )
        : null,
    ),
    turnLine(toMove, `${plural(t.cards, "card")} turned, ${plural(t.tricks, "trick")}`),
  ];
  return tableOf("beggar", panels, middle);
}

export const events = {
  TrickPlayed: (d) => {
    const end = d.collector === null ? "the cap stops it" : `${seatOf(d.collector)} collects`;
    const out = d.eliminated.length ? `; out: ${d.eliminated.map(seatOf).join(", ")}` : "";
    return `${seatOf(d.leader)} leads a trick of ${plural(d.cards.length, "card")}; ${end}${out}`;
  },
};
