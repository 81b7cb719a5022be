"""The Redis functions of the event store (one library, loaded on every primary): the
append of a stream's events with its partition's feed, and the trim of a partition's feed.
Each takes only keys of one partition's hash tag, so on a Redis Cluster it runs on one node.
"""

from __future__ import annotations

LIBRARY = "cardarena"
APPEND_FUNCTION = "cardarena_append"
APPEND_MANY_FUNCTION = "cardarena_append_many"
TRIM_FUNCTION = "cardarena_trim"

LIBRARY_CODE = """#!lua name=cardarena

-- The store's clock now, in ms: an event's `at`.
local function now_ms()
  local now = redis.call('TIME')
  return now[1] .. string.format('%03d', math.floor(tonumber(now[2]) / 1000))
end

-- Writes `count` events (the type/data pairs of `args` from `from`) after version
-- `expected` to the stream (ids 0-<version>) and to the feed; returns the last version.
local function write_events(stream, feed, game_id, kind, schema, at, expected, args, from, count)
  local version = expected
  for i = from, from + 2 * count - 1, 2 do
    version = version + 1
    local v = tostring(version)
    local type, data = args[i], args[i + 1]
    redis.call('XADD', stream, '0-' .. v,
      'v', v, 'type', type, 'data', data, 's', schema, 'k', kind, 'at', at)
    redis.call('XADD', feed, '*',
      'v', v, 'type', type, 'data', data, 's', schema, 'k', kind, 'at', at, 'g', game_id)
  end
  return version
end

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
  local version = write_events(
    stream, feed, game_id, kind, schema, now_ms(), expected, args, 7, (#args - 6) / 2)
  redis.call('SET', counter, tostring(version))
  if idem then
    local record = tostring(expected + 1) .. ' ' .. tostring(version) .. ' ' .. fingerprint
    redis.call('SET', idem, record, 'EX', args[6])
  end
  return {'ok', expected + 1, version}
end

redis.register_function('cardarena_append', append)

-- Several appends to one stream in one call, as one chain (the platform's bot turns: no
-- fingerprint, so a known key is always a replay): each as `append` would make it in turn
-- while every one before it was written; the first that is not (a conflict or a replay)
-- ends the chain, and each after it is a conflict, neither written nor looked up.
-- KEYS: stream, version counter, feed, then the idempotency record of each append that has one
-- ARGV: game id, kind, schema, ttl, then per append: expected version, the index in KEYS of
-- its idempotency record (0: none), its event count, then its type/data pairs
local function append_many(keys, args)
  local stream, counter, feed = keys[1], keys[2], keys[3]
  local game_id, kind, schema, ttl = args[1], args[2], args[3], args[4]
  local actual = tonumber(redis.call('GET', counter) or '0')
  local at = now_ms()
  local results = {}
  local wrote, broken = false, false
  local i = 5
  while i <= #args do
    local expected, at_key, count = tonumber(args[i]), tonumber(args[i + 1]), tonumber(args[i + 2])
    i = i + 3
    local idem = nil
    if at_key > 0 then
      idem = keys[at_key]
    end
    local known = nil
    if idem and not broken then
      known = redis.call('GET', idem)
    end
    if broken then
      results[#results + 1] = {'conflict', actual}
    elseif known then
      local first, last = string.match(known, '^(%d+) (%d+) ')
      redis.call('SET', idem, known, 'KEEPTTL')
      results[#results + 1] = {'replayed', tonumber(first), tonumber(last)}
      broken = true
    elseif actual ~= expected then
      results[#results + 1] = {'conflict', actual}
      broken = true
    else
      local version = write_events(
        stream, feed, game_id, kind, schema, at, expected, args, i, count)
      if idem then
        local record = tostring(expected + 1) .. ' ' .. tostring(version) .. ' '
        redis.call('SET', idem, record, 'EX', ttl)
      end
      results[#results + 1] = {'ok', expected + 1, version}
      actual = version
      wrote = true
    end
    i = i + 2 * count
  end
  if wrote then
    redis.call('SET', counter, tostring(actual))
  end
  return results
end

redis.register_function('cardarena_append_many', append_many)

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
