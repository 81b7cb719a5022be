#!/usr/bin/env bash
# A cardarena bot with no library at all: curl and jq. It long-polls for its turns and
# posts the first legal action of each, at the turn's version, with an Idempotency-Key.
#
#   CARDARENA_URL=http://127.0.0.1:8000 CARDARENA_TOKEN=<bot token> examples/curl_bot.sh [GAMES]
#
# It stops once GAMES of its games have finished (default 1).
set -euo pipefail
url="${CARDARENA_URL:-http://127.0.0.1:8000}"
auth="Authorization: Bearer ${CARDARENA_TOKEN:?set CARDARENA_TOKEN}"
want="${1:-1}"
declare -A seen=()
finished=0
while [ "$finished" -lt "$want" ]; do
  turns=$(curl -sf -H "$auth" "$url/v1/bots/me/turns?wait=10")
  while IFS= read -r row; do
    [ -n "$row" ] || continue
    game=$(jq -r .game_id <<<"$row")
    seen[$game]=1
    body=$(jq -c '{seat, expected_version: .version, action: .legal_actions[0]}' <<<"$row")
    # A 409 (the game moved on) is fine: the next poll brings the fresh turn.
    curl -s -o /dev/null -H "$auth" -H 'content-type: application/json' \
         -H "Idempotency-Key: $(cat /proc/sys/kernel/random/uuid)" \
         -d "$body" "$url/v1/games/$game/actions"
  done < <(jq -c '.turns[]' <<<"$turns")
  finished=0
  for game in "${!seen[@]}"; do
    status=$(curl -sf "$url/v1/games/$game" | jq -r .status)
    [ "$status" != "playing" ] && finished=$((finished + 1))
  done
done
echo "$finished games finished"
