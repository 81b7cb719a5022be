// A game's server-sent events (GET /v1/games/{id}/stream) read with fetch, so that the page
// can send a bot's token and `Last-Event-ID` (EventSource sends neither on its first request).

/** Yields each message of `response`'s event stream as `{ event, id, data }`. */
async function* messages(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replaceAll("\r\n", "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const message = { event: "message", id: null, data: [] };
      for (const line of block.split("\n")) {
        if (!line || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") message.event = text;
        else if (field === "id") message.id = text;
        else if (field === "data") message.data.push(text);
      }
      if (message.data.length) yield { ...message, data: message.data.join("\n") };
    }
  }
}

/**
 * Follows the game's stream after version `after` (no snapshot: every event after it, then
 * each new one) until the game's last event, reconnecting while each stream sends events;
 * returns once a stream sent none (the game is over, or quiet for the stream's lifetime).
 * Calls `onEvent(item)` per event item; resolves with the last version seen; rejects with
 * the HTTP status and problem of a refused stream.
 */
export async function follow(
  gameId,
  { after, seat = null, headers = {}, onEvent, stopped, signal = undefined },
) {
  let version = after;
  const query = seat === null ? "" : `?seat=${seat}`;
  const url = `/v1/games/${encodeURIComponent(gameId)}/stream${query}`;
  while (!stopped()) {
    const response = await fetch(url, {
      signal,
      headers: { ...headers, accept: "text/event-stream", "Last-Event-ID": String(version) },
    });
    if (!response.ok) {
      const body = await response.json().catch(() => null);
      throw Object.assign(new Error((body && (body.detail || body.title)) || `HTTP ${response.status}`), {
        status: response.status,
        body,
      });
    }
    let finished = false;
    let received = false;
    for await (const message of messages(response)) {
      if (message.event !== "event") continue;
      const item = JSON.parse(message.data);
      if (item.version <= version) continue;
      version = item.version;
      received = true;
      finished = finished || item.type === "GameFinished" || item.type === "GameAborted";
      onEvent(item);
    }
    // A stream that sent nothing ends at the game's end (or its lifetime): the caller looks.
    if (finished || !received || stopped()) return version;
  }
  return version;
}
