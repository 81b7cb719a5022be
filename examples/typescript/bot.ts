// A cardarena bot in TypeScript: only `fetch` and the types that openapi-typescript generated
// from the service's OpenAPI document (schema.d.ts: `npm run generate`). It long-polls for its
// turns, posts one of each turn's legal actions at the turn's version with an Idempotency-Key,
// and stops once it has seen GAMES of its games finish.
//
//   CARDARENA_URL=http://127.0.0.1:8000 CARDARENA_TOKEN=<bot token> node dist/bot.js [GAMES]
//
// Without CARDARENA_TOKEN it registers itself first, with the admin key CARDARENA_ADMIN_KEY (none
// for a service in open mode), as an external bot CARDARENA_BOT_NAME (default "ts-bot") of CARDARENA_GAME (default "shithead"),
// and prints the token. CARDARENA_CHOICE=random picks a random legal action (default: the first),
// from a generator seeded with CARDARENA_SEED when it is set, so that a run can be repeated.
// Its last line is a JSON summary: {"bot": ..., "finished": [game ids], "actions": n}.

import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";

import type { components, paths } from "./schema.js";

type Json<T> = T extends { content: { "application/json": infer Body } } ? Body : never;

type RegisterBot = Json<paths["/v1/bots"]["post"]["requestBody"]>;
type RegisteredBot = Json<paths["/v1/bots"]["post"]["responses"][201]>;
type CallingBot = Json<paths["/v1/bots/me"]["get"]["responses"][200]>;
type Turns = Json<paths["/v1/bots/me/turns"]["get"]["responses"][200]>;
type Turn = Turns["turns"][number];
type LegalAction = Turn["legal_actions"][number];
type PostAction = Json<paths["/v1/games/{game_id}/actions"]["post"]["requestBody"]>;
type ActionAccepted = Json<paths["/v1/games/{game_id}/actions"]["post"]["responses"][200]>;
type Game = Json<paths["/v1/games/{game_id}"]["get"]["responses"][200]>;
type Problem = components["schemas"]["Problem"];

/** The API answered with an error: `problem` is its RFC 9457 problem-details body. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(`${status} ${problem.type}: ${problem.detail}`);
  }
}

/** The cardarena API with one credential: the admin key or a bot token. */
class Api {
  constructor(
    private readonly baseUrl: string,
    private readonly credential?: string,
  ) {}

  /** Sends a request; returns the JSON body of a 2xx, throws ApiError with the problem else.
   * A 429 is waited out (its Retry-After) and sent once more. */
  async call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const response = await fetch(new URL(path, this.baseUrl), {
        method,
        headers: {
          ...(this.credential ? { authorization: `Bearer ${this.credential}` } : {}),
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (response.status === 429 && attempt === 0) {
        await sleep(1000 * Number(response.headers.get("retry-after") ?? "1"));
        continue;
      }
      if (!response.ok) {
        throw new ApiError(response.status, (await response.json()) as Problem);
      }
      return (await response.json()) as T;
    }
  }
}

/** Returns a generator of numbers in [0, 1): Math.random, or mulberry32 seeded with `seed`
 * (the same seed, the same choices). */
function generator(seed: string | undefined): () => number {
  if (seed === undefined) {
    return Math.random;
  }
  let state = Number(seed) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Returns the action to post: one of the turn's legal actions, unchanged (a random one when
 * `random` is a generator, else the first). */
function choose(turn: Turn, random: (() => number) | null): LegalAction | undefined {
  const legal = turn.legal_actions;
  return random ? legal[Math.floor(random() * legal.length)] : legal[0];
}

/** Registers an external bot with the admin key (none: a service in open mode); returns its
 * token, which the service shows only this once. */
async function register(baseUrl: string, adminKey: string | undefined, name: string, game: RegisterBot["game"]): Promise<string> {
  const body: RegisterBot = { name, game, kind: "external", version: "1" };
  const bot = await new Api(baseUrl, adminKey).call<RegisteredBot>("POST", "/v1/bots", body);
  if (!bot.token) {
    throw new Error(`the bot ${bot.key} is registered already: pass its token as CARDARENA_TOKEN`);
  }
  console.log(`registered ${bot.key}; token ${bot.token}`);
  return bot.token;
}

/** Plays the turn: posts the chosen action at the turn's version. Returns whether it landed. */
async function act(api: Api, turn: Turn, random: (() => number) | null): Promise<boolean> {
  const action = choose(turn, random);
  if (action === undefined) {
    return false;
  }
  const body: PostAction = { seat: turn.seat, action, expected_version: turn.version };
  // One key per attempt: a retry of this very request (a timeout) cannot apply it twice.
  const headers = { "Idempotency-Key": randomUUID() };
  try {
    const accepted = await api.call<ActionAccepted>("POST", `/v1/games/${turn.game_id}/actions`, body, headers);
    console.log(`${turn.game_id} seat ${turn.seat}: ${String(action.type)} -> version ${accepted.version}`);
    return true;
  } catch (error) {
    // 409: someone moved first or the version moved on; the next poll brings the fresh turn.
    if (error instanceof ApiError && error.status === 409) {
      return false;
    }
    throw error;
  }
}

async function main(): Promise<number> {
  const baseUrl = process.env.CARDARENA_URL ?? "http://127.0.0.1:8000";
  const want = Number(process.argv[2] ?? "1");
  const random =
    process.env.CARDARENA_CHOICE === "random" ? generator(process.env.CARDARENA_SEED) : null;
  const adminKey = process.env.CARDARENA_ADMIN_KEY;
  let token = process.env.CARDARENA_TOKEN;
  if (!token) {
    const game = (process.env.CARDARENA_GAME ?? "shithead") as RegisterBot["game"];
    token = await register(baseUrl, adminKey, process.env.CARDARENA_BOT_NAME ?? "ts-bot", game);
  }
  const api = new Api(baseUrl, token);
  const me = await api.call<CallingBot>("GET", "/v1/bots/me");
  const seen = new Set<string>();
  const finished = new Set<string>();
  let actions = 0;
  while (finished.size < want) {
    const { turns } = await api.call<Turns>("GET", "/v1/bots/me/turns?wait=10");
    for (const turn of turns) {
      seen.add(turn.game_id);
      if (await act(api, turn, random)) {
        actions += 1;
      }
    }
    for (const gameId of seen) {
      if (!finished.has(gameId)) {
        // With the token: a sealed table (a duplicate deal still in play) is read by its seats only.
        const game = await api.call<Game>("GET", `/v1/games/${gameId}`);
        if (game.status !== "playing") {
          finished.add(gameId);
        }
      }
    }
  }
  console.log(JSON.stringify({ bot: me.key, finished: [...finished], actions }));
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof ApiError ? `cardarena refused: ${error.message}` : error);
    process.exit(1);
  },
);
