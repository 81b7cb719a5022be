// The replay viewer: draws a game at any version from GET /v1/games/{id}/replay.
//
// Plain JavaScript, no build step. Every element a test compares with the API carries a
// `data-testid` and the API's own data: `data-cards` (cards in the API's encoding, in the
// API's order, space-separated) and `data-count` (how many cards, known or not).
"use strict";

(() => {
  const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
  const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
  const RANK_NAMES = { T: "10", J: "jack", Q: "queen", K: "king", A: "ace" };
  const HIDDEN = "??";
  const PLAY_MS = 700;
  const SLIDER_MS = 120;
  const CACHED = 40;
  const LOGGED = 12;

  const page = {
    gameId: decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || ""),
    version: null,
    last: null,
    seat: null,
    seats: [],
    over: false,
    playing: false,
    timer: null,
    ticket: 0,
    cache: new Map(),
    notice: "",
  };

  const byTestId = (id) => document.querySelector(`[data-testid="${id}"]`);

  // DOM helpers ---------------------------------------------------------------------------

  function h(tag, attrs = {}, ...children) {
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

  const turning = (direction) => (direction === 1 ? "clockwise" : "anticlockwise");
  const range = (n) => Array.from({ length: n }, (_, i) => i);
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

  // Cards ---------------------------------------------------------------------------------

  function cardLabel(card) {
    if (card === HIDDEN) return "?";
    if (card[0] === "X") return `★${card.slice(1)}`;
    const rank = card[0] === "T" ? "10" : card[0];
    return rank + (SUITS[card[1]] || card.slice(1));
  }

  function cardName(card) {
    if (card === HIDDEN) return "a hidden card";
    if (card[0] === "X") return `joker ${card.slice(1)}`;
    const rank = RANK_NAMES[card[0]] || card[0];
    return card.length > 1 ? `${rank} of ${SUIT_NAMES[card[1]] || card[1]}` : rank;
  }

  const cardsText = (cards) => cards.map(cardLabel).join(" ");

  function cardEl(card, { faceDown = false } = {}) {
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
      { class: classes.join(" "), "data-card": card, title: name, "aria-label": name },
      cardLabel(card),
    );
  }

  // A row of cards: `cards` known (drawn face up, in order), or null: `count` card backs.
  function cardRow(
    testid,
    cards,
    { count = 0, faceDown = false, fan = true, label = "", attrs = {} } = {},
  ) {
    const known = cards !== null && cards !== undefined;
    const n = known ? cards.length : count;
    const row = h("div", {
      ...attrs,
      class: `cards${fan ? " fan" : ""}`,
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

  function describeRow(cards, count) {
    if (cards === null) return plural(count, "hidden card");
    return cards.length ? cards.map(cardName).join(", ") : "none";
  }

  // A face-down stack drawn as one card with its size: its `top` face up when given.
  function stack(testid, count, { top = null, cards = null, label = "" } = {}) {
    const face =
      count === 0
        ? h("span", { class: "card slot-empty", "aria-hidden": "true" })
        : cardEl(top || HIDDEN);
    return h(
      "div",
      {
        class: "stack",
        "data-testid": testid,
        "data-count": count,
        "data-top": top,
        "data-cards": cards ? cards.join(" ") : null,
        "aria-label": `${label}: ${plural(count, "card")}${top ? `, ${cardName(top)} on top` : ""}`,
      },
      face,
      h("span", { class: "stack-count" }, String(count)),
    );
  }

  const zone = (title, ...content) =>
    h("div", { class: "zone" }, h("span", { class: "zone-title" }, title), ...content);

  function seatName(seat, index) {
    const who = seat.name
      ? `${seat.name}${seat.version ? `@${seat.version}` : ""}`
      : seat.bot || seat.kind;
    return `Seat ${index} · ${who}`;
  }

  function seatPanel(replay, index, toMove, { out = [], extra = [] } = {}, ...zones) {
    const place = replay.result ? replay.result.places[index] : null;
    const moving = toMove.includes(index);
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
      ...zones,
    );
  }

  function turnLine(toMove, detail) {
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

  // Split the seats around the middle of the table: the first half above, the rest below.
  function tableOf(game, panels, middle) {
    const half = Math.ceil(panels.length / 2);
    return [
      h("div", { class: "seats seats-top" }, panels.slice(0, half)),
      h("div", { class: `middle middle-${game}`, "data-testid": "middle" }, middle),
      h("div", { class: "seats seats-bottom" }, panels.slice(half)),
    ];
  }

  // The three games -------------------------------------------------------------------------

  function shithead(replay) {
    const s = replay.state;
    const v = replay.view;
    const t = s || v;
    const players = s ? s.hands.length : v.hand_sizes.length;
    let toMove = [];
    if (!replay.result && t.phase === "swap") toMove = range(players).filter((i) => !t.ready[i]);
    else if (!replay.result && t.phase === "play") toMove = [t.turn];
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

  function autobus(replay) {
    const s = replay.state;
    const v = replay.view;
    const t = s || v;
    const players = s ? s.hands.length : v.hand_sizes.length;
    const toMove = replay.result ? [] : [t.turn];
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
        zone(
          "Draw pile",
          stack("draw", s ? s.draw.length : v.draw_size, { label: "the draw pile" }),
        ),
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

  function beggar(replay) {
    const s = replay.state;
    const v = replay.view;
    const t = s || v;
    const players = s ? s.packs.length : v.pack_sizes.length;
    const toMove = replay.result ? [] : [t.leader];
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
                  h(
                    "span",
                    { class: "turned" },
                    cardEl(card),
                    h("small", {}, `s${trick.seats[k]}`),
                  ),
                ),
              ),
            )
          : null,
      ),
      turnLine(toMove, `${plural(t.cards, "card")} turned, ${plural(t.tricks, "trick")}`),
    ];
    return tableOf("beggar", panels, middle);
  }

  const GAMES = { shithead, autobus, beggar };
  const TITLES = {
    shithead: "Shithead",
    autobus: "Hospodský autobus",
    beggar: "Beggar-my-neighbour",
  };

  // Events in words ---------------------------------------------------------------------------

  const seatOf = (n) => `seat ${n}`;
  const one = (card) => cardLabel(card);
  const ZONES = {
    hand: "the hand",
    face_up: "the face-up cards",
    face_down: "the face-down cards",
    main: "the main pile",
    slot: "a slot",
  };
  const unless = (playable) => (playable ? "" : ", which cannot be played");
  const words = (name) => name.replaceAll("_", " ");

  const DESCRIBE = {
    GameCreated: (d) =>
      `${TITLES[d.game] || d.game} created with ${plural(d.seats.length, "seat")}`,
    GameStarted: (d) => `the cards are dealt to ${plural(d.players, "player")}`,
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
    TrickPlayed: (d) => {
      const end = d.collector === null ? "the cap stops it" : `${seatOf(d.collector)} collects`;
      const out = d.eliminated.length ? `; out: ${d.eliminated.map(seatOf).join(", ")}` : "";
      return `${seatOf(d.leader)} leads a trick of ${plural(d.cards.length, "card")}; ${end}${out}`;
    },
    GameFinished: (d) => `the game is over: ${d.result.reason || d.result.status}`,
  };

  function describe(event) {
    const known = DESCRIBE[event.type];
    if (known) {
      try {
        return known(event.data);
      } catch {
        // An event of an older or newer shape: fall back to its fields.
      }
    }
    const fields = Object.entries(event.data).filter(([key]) => key !== "type");
    return fields
      .map(([key, value]) => `${key.replaceAll("_", " ")}: ${JSON.stringify(value)}`)
      .join(", ");
  }

  // Drawing a replay ----------------------------------------------------------------------------

  function drawEvent(replay) {
    const box = byTestId("event");
    const event = replay.events[replay.events.length - 1];
    box.replaceChildren();
    box.dataset.version = String(event.version);
    box.dataset.type = event.type;
    const data = { ...event.data };
    delete data.type;
    box.append(
      h(
        "h2",
        {},
        `Event ${event.version}: `,
        h("span", { "data-testid": "event-type" }, event.type),
      ),
      h("p", { "data-testid": "event-text" }, describe(event)),
      h("details", {}, h("summary", {}, "data"), h("pre", {}, JSON.stringify(data, null, 1))),
    );
  }

  function drawLog(replay) {
    const log = byTestId("log");
    const items = replay.events.slice(-LOGGED).reverse();
    log.replaceChildren(
      ...items.map((event) =>
        h(
          "li",
          { class: event.version === replay.version ? "current" : null, value: event.version },
          h(
            "button",
            {
              type: "button",
              class: "link",
              "data-version": event.version,
              title: `Go to event ${event.version}`,
            },
            event.type,
          ),
          " ",
          describe(event),
        ),
      ),
    );
  }

  function drawResult(replay) {
    const box = byTestId("result");
    box.hidden = !replay.result;
    box.replaceChildren();
    if (!replay.result) {
      delete box.dataset.status;
      delete box.dataset.places;
      return;
    }
    const { status, places, reason } = replay.result;
    box.dataset.status = status;
    box.dataset.places = places.join(" ");
    box.append(
      h("h2", {}, `Result: ${status}`),
      reason ? h("p", {}, reason) : null,
      h(
        "ol",
        { class: "places" },
        places.map((place, i) =>
          h("li", {}, `${seatName(replay.seats[i] || {}, i)}: place ${place}`),
        ),
      ),
    );
  }

  function drawSeatChoice(replay) {
    const select = byTestId("seat-select");
    const wanted = replay.seat === null ? "" : String(replay.seat);
    if (select.options.length !== replay.seats.length + 1) {
      select.replaceChildren(
        h(
          "option",
          { value: "" },
          replay.finished ? "Spectator (every card)" : "Spectator (after the end)",
        ),
        ...replay.seats.map((seat, i) => h("option", { value: String(i) }, seatName(seat, i))),
      );
    }
    select.options[0].disabled = !replay.finished;
    select.value = wanted;
  }

  function draw(replay) {
    page.version = replay.version;
    page.last = replay.last_version;
    page.seat = replay.seat;
    page.seats = replay.seats;
    page.over = replay.finished;
    const title = TITLES[replay.game] || replay.game;
    document.title = `${title} · event ${replay.version} of ${replay.last_version} · cardarena`;
    byTestId("title").textContent = `${title} replay`;
    byTestId("game-id").textContent = replay.game_id;

    const table = byTestId("table");
    table.className = `table table-${replay.game}`;
    const current = replay.state || replay.view;
    if (current === null) {
      table.replaceChildren(
        h(
          "p",
          { class: "undealt", "data-testid": "undealt" },
          "The game is created; the cards are not dealt yet. Step forward to see the deal.",
        ),
      );
    } else {
      table.replaceChildren(...GAMES[replay.game](replay));
    }
    table.dataset.game = replay.game;
    table.dataset.version = String(replay.version);
    table.dataset.seat = replay.seat === null ? "" : String(replay.seat);
    table.setAttribute("aria-busy", "false");

    const slider = byTestId("slider");
    slider.max = String(replay.last_version);
    slider.value = String(replay.version);
    slider.setAttribute("aria-valuetext", `event ${replay.version} of ${replay.last_version}`);
    const label = byTestId("version");
    label.textContent = `Event ${replay.version} of ${replay.last_version}`;
    label.dataset.version = String(replay.version);
    label.dataset.last = String(replay.last_version);

    byTestId("first").disabled = replay.version <= 1;
    byTestId("back").disabled = replay.version <= 1;
    byTestId("forward").disabled = replay.version >= replay.last_version;
    byTestId("last").disabled = replay.version >= replay.last_version;

    drawSeatChoice(replay);
    drawEvent(replay);
    drawResult(replay);
    drawLog(replay);

    const query = new URLSearchParams({ version: String(replay.version) });
    if (replay.seat !== null) query.set("seat", String(replay.seat));
    history.replaceState(null, "", `${location.pathname}?${query}`);
  }

  // Fetching ------------------------------------------------------------------------------------

  class Problem extends Error {
    constructor(status, body) {
      super((body && (body.detail || body.title)) || `HTTP ${status}`);
      this.status = status;
      this.body = body || {};
    }
  }

  async function getJson(url) {
    const response = await fetch(url, { headers: { accept: "application/json" } });
    const body = await response.json().catch(() => null);
    if (!response.ok) throw new Problem(response.status, body);
    return body;
  }

  function replayAt(version, seat) {
    const key = `${version}:${seat === null ? "" : seat}`;
    if (page.cache.has(key)) return page.cache.get(key);
    const query = new URLSearchParams();
    if (version !== null) query.set("version", String(version));
    if (seat !== null) query.set("seat", String(seat));
    const url = `/v1/games/${encodeURIComponent(page.gameId)}/replay?${query}`;
    const promise = getJson(url);
    // Only a finished game's replays never change; keep a few of them for stepping back.
    if (page.over && version !== null) {
      page.cache.set(key, promise);
      promise.catch(() => page.cache.delete(key));
      if (page.cache.size > CACHED) page.cache.delete(page.cache.keys().next().value);
    }
    return promise;
  }

  // Shows `error`, or (none) the page's standing notice if it has one.
  function showError(error) {
    const box = byTestId("error");
    if (!error) {
      box.hidden = !page.notice;
      box.textContent = page.notice || "";
      return;
    }
    box.hidden = false;
    box.textContent =
      error instanceof Problem ? `${error.status}: ${error.message}` : String(error);
  }

  // Shows `version` (null: the last) as `seat` (null: a spectator); a newer call wins.
  async function show(version, seat) {
    const ticket = ++page.ticket;
    byTestId("table").setAttribute("aria-busy", "true");
    try {
      const replay = await replayAt(version, seat);
      if (ticket !== page.ticket) return;
      showError(null);
      draw(replay);
    } catch (error) {
      if (ticket !== page.ticket) return;
      stop();
      showError(error);
      byTestId("table").setAttribute("aria-busy", "false");
    }
  }

  // Controls ------------------------------------------------------------------------------------

  const clamp = (version) => Math.min(Math.max(version, 1), page.last || 1);
  const go = (version) => show(clamp(version), page.seat);

  function stop() {
    page.playing = false;
    clearTimeout(page.timer);
    const button = byTestId("play");
    button.setAttribute("aria-pressed", "false");
    button.setAttribute("aria-label", "Play");
  }

  async function tick() {
    if (!page.playing) return;
    if (page.version >= page.last) {
      stop();
      return;
    }
    await go(page.version + 1);
    if (page.playing) page.timer = setTimeout(tick, PLAY_MS);
  }

  function play() {
    if (page.playing) {
      stop();
      return;
    }
    if (page.version >= page.last) return;
    page.playing = true;
    const button = byTestId("play");
    button.setAttribute("aria-pressed", "true");
    button.setAttribute("aria-label", "Pause");
    page.timer = setTimeout(tick, PLAY_MS);
  }

  function step(by) {
    stop();
    go(page.version + by);
  }

  function wire() {
    byTestId("first").addEventListener("click", () => {
      stop();
      go(1);
    });
    byTestId("back").addEventListener("click", () => step(-1));
    byTestId("play").addEventListener("click", play);
    byTestId("forward").addEventListener("click", () => step(1));
    byTestId("last").addEventListener("click", () => {
      stop();
      go(page.last);
    });

    const slider = byTestId("slider");
    let pending = null;
    slider.addEventListener("input", () => {
      stop();
      byTestId("version").textContent = `Event ${slider.value} of ${page.last}`;
      clearTimeout(pending);
      pending = setTimeout(() => go(Number(slider.value)), SLIDER_MS);
    });
    slider.addEventListener("change", () => {
      clearTimeout(pending);
      go(Number(slider.value));
    });

    byTestId("seat-select").addEventListener("change", (event) => {
      const value = event.target.value;
      show(page.version, value === "" ? null : Number(value));
    });

    byTestId("log").addEventListener("click", (event) => {
      const target = event.target.closest("button[data-version]");
      if (!target) return;
      stop();
      go(Number(target.dataset.version));
    });

    document.addEventListener("keydown", (event) => {
      if (event.altKey || event.ctrlKey || event.metaKey || page.version === null) return;
      if (event.target.closest("input, select, textarea")) return;
      const moves = {
        ArrowLeft: () => step(-1),
        ArrowRight: () => step(1),
        Home: () => (stop(), go(1)),
        End: () => (stop(), go(page.last)),
      };
      const move = moves[event.key];
      if (!move) return;
      event.preventDefault();
      move();
    });
  }

  // Start: the game's public resource says whether it is over (a spectator may replay only
  // a finished game), then the position the address asks for (default: the last event).
  async function start() {
    wire();
    const query = new URLSearchParams(location.search);
    const version = query.has("version") ? Number(query.get("version")) : null;
    let seat = query.has("seat") && query.get("seat") !== "" ? Number(query.get("seat")) : null;
    try {
      const game = await getJson(`/v1/games/${encodeURIComponent(page.gameId)}`);
      page.over = game.result !== null && game.result !== undefined;
      page.last = game.version;
      if (!page.over && seat === null) {
        seat = 0;
        page.notice =
          "This game is still running: its whole table is public once it is over;" +
          " until then it is shown as a seat.";
      }
    } catch (error) {
      showError(error);
      byTestId("table").setAttribute("aria-busy", "false");
      return;
    }
    await show(Number.isInteger(version) ? clamp(version) : null, seat);
  }

  document.addEventListener("DOMContentLoaded", start);
})();
