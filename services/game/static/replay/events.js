// Events in words: the platform's own events, each game's from its module, and any other
// event by its fields (cards drawn as card labels).
import { drawingOf } from "./games/index.js";
import { cardLabel, isCard, plural, seatOf, words } from "./kit.js";

const PLATFORM = {
  GameCreated: (d, title) =>
    `${title(d.game)} created with ${plural(d.seats.length, "seat")}`,
  GameStarted: (d) => `the cards are dealt to ${plural(d.players, "player")}`,
  GameFinished: (d) => `the game is over: ${d.result.reason || d.result.status}`,
  GameAborted: (d) => `the game is aborted (${words(d.reason || "host")})`,
  TurnTimedOut: (d) => `${seatOf(d.seat)} ran out of time (strike ${d.strikes})`,
  DefaultActionPlayed: (d) => `the platform plays ${seatOf(d.seat)}'s default action`,
  SeatForfeited: (d) => `${seatOf(d.seat)} forfeits`,
  SeatResigned: (d) => `${seatOf(d.seat)} resigns`,
  NoteTaken: (d) =>
    d.text ? `${seatOf(d.seat)}'s note: ${d.text}` : `${seatOf(d.seat)} took a private note`,
};

function told(value) {
  if (isCard(value)) return cardLabel(value);
  if (Array.isArray(value) && value.every(isCard)) return value.map(cardLabel).join(" ") || "none";
  if (Array.isArray(value)) return value.map(told).join(" · ");
  return JSON.stringify(value);
}

/** Returns `event` (an item of the API: `type`, `data`) of `game` in words. */
export function describe(game, event, title = (name) => name) {
  const known = PLATFORM[event.type] || drawingOf(game).events[event.type];
  if (known) {
    try {
      return known(event.data, title);
    } catch {
      // An event of an older or newer shape: told by its fields below.
    }
  }
  const fields = Object.entries(event.data).filter(([key]) => !["type", "ruleset"].includes(key));
  const text = fields.map(([key, value]) => `${words(key)}: ${told(value)}`).join(", ");
  const type = event.type.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
  return `${type}${text ? ` (${text})` : ""}`;
}
