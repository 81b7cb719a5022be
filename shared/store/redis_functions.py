"""The Redis functions of the event store (one library, loaded on every primary): the
append of a stream's events with its partition's feed, and the trim of a partition's feed.
Each takes only keys of one partition's hash tag, so on a Redis Cluster it runs on one node.
"""

from __future__ import annotations

LIBRARY = "cardarena"
APPEND_FUNCTION = "cardarena_append"
TRIM_FUNCTION = "cardarena_trim"

LIBRARY_CODE = """#!lua name=cardarena

-- KEYS: stream, version counter, feed[, idempotency record]
-- ARGV: expected version, game id, kind, schema, fingerprint, ttl, then type/data pairs
local function append(keys, args)
  local stream, counter, feed, idem = keys[1], keys[2], keys[3], keys[4]
  local expected = tonumber(args[1])
  local game_id, kind, schema, fingerprint = args[2], args[3], args[4], args[5]
  if idem then
    local known = redis.call('GET', idem)
    if known then
      local first, last, known_fingerprint = string.match(known, '^(%d+) (%d+) (.*)$')
      if known_fingerprint ~= '' and fingerprint ~= '' and known_fingerprint ~= fingerprint then
        return {'reused'}
      end
      -- Written again (same value, same expiry), so that a WAIT after a replay confirms
      -- that replicas hold the first append too (replication keeps the primary's order).
      redis.call('SET', idem, known, 'KEEPTTL')
      return {'replayed', tonumber(first), tonumber(last)}
    end
  end
  local actual = tonumber(redis.call('GET', counter) or '0')
  if actual ~= expected then
    return {'conflict', actual}
  end
  local now = redis.call('TIME')
  local at = now[1] .. string.format('%03d', math.floor(tonumber(now[2]) / 1000))
  local version = expected
  for i = 7, #args, 2 do
    version = version + 1
    local v = tostring(version)
    local type, data = args[i], args[i + 1]
    redis.call('XADD', stream, '0-' .. v,
      'v', v, 'type', type, 'data', data, 's', schema, 'k', kind, 'at', at)
    redis.call('XADD', feed, '*',
      'v', v, 'type', type, 'data', data, 's', schema, 'k', kind, 'at', at, 'g', game_id)
  end
  redis.call('SET', counter, tostring(version))
  if idem then
    local record = tostring(expected + 1) .. ' ' .. tostring(version) .. ' ' .. fingerprint
    redis.call('SET', idem, record, 'EX', args[6])
  end
  return {'ok', expected + 1, version}
end

redis.register_function('cardarena_append', append)

-- KEYS: a partition's feed, its trim mark. ARGV: the MINID to trim before.
-- The mark keeps the newest id trimmed away (trims only move forward: a lower MINID finds
-- nothing left before it).
local function trim(keys, args)
  local last = redis.call('XREVRANGE', keys[1], '(' .. args[1], '-', 'COUNT', 1)
  if #last == 0 then
    return 0
  end
  local removed = redis.call('XTRIM', keys[1], 'MINID', args[1])
  redis.call('SET', keys[2], last[1][1])
  return removed
end

redis.register_function('cardarena_trim', trim)
"""
