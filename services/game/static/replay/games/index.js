// The one place the pages learn how to draw a game: its module when it has one, else the
// generic drawing of its public view. A new game needs no line here to be shown; a module
// (`draw(replay)`, `events`: its events in words) only draws it better.
import * as autobus from "./autobus.js";
import * as beggar from "./beggar.js";
import * as generic from "./generic.js";
import * as shithead from "./shithead.js";

const DRAWN = { autobus, beggar, shithead };

/** Returns the module that draws `game`: its own, else the generic one. */
export const drawingOf = (game) => DRAWN[game] || generic;
