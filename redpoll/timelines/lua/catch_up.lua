-- catch_up: a home catches up with the large accounts it merges
-- (redpoll.timelines.hybrid.catch_up): the statuses the home rule let in
-- (decided before, in Python: redpoll.timelines.home_rule) go into the home,
-- newest first and once each, and each account's mark moves to the profile
-- sequence they were read at; only for an account the user still follows
-- (a guard of the write: a concurrent unfollow wins, its unmerge.lua then
-- finds nothing or what it removes). A boost put in is remembered in
-- KEYS[4] as deliver_boost.lua remembers its own; the boosts the rule took
-- out (the home held them, and their original now comes in within the
-- window below them) leave the home. Decides nothing.
-- Atomic, and idempotent (ids already there are kept once; a mark set
-- again to the same value; a boost taken out twice is gone once): a
-- catch-up cut short leaves the marks where they were, and the next page
-- catches up again. On a single server, mark_merged.lua runs just before
-- it in the same pipeline (Topology.catch_up).
-- KEYS[1]: keys.home(uid); KEYS[2]: keys.following(uid);
-- KEYS[3]: keys.large_marks(uid); KEYS[4]: keys.home_reblogs(uid)
-- ARGV[1]: the home's cap
-- ARGV[2]: boosts remembered per home (limits.HOME_REBLOGS_KEPT)
-- ARGV[3]: n, the accounts; then n times: account id, its pseq, k, then k
--          status ids (any order)
-- then m, and m pairs of (boost id, original id): the boosts among those ids
-- ARGV[after]: ids of boosts to take out of the home
-- returns: how many entries of the home changed (ids put in that were not
--          there, boosts taken out)
local key = KEYS[1]
local cap, kept = tonumber(ARGV[1]), tonumber(ARGV[2])
local n, at = tonumber(ARGV[3]), 4
local ids, seen = {}, {}
for _ = 1, n do
  local uid, seq, k = ARGV[at], ARGV[at + 1], tonumber(ARGV[at + 2])
  if redis.call('ZSCORE', KEYS[2], uid) then
    for x = at + 3, at + 2 + k do
      local v = ARGV[x]
      if not seen[v] then seen[v] = true; ids[#ids + 1] = v + 0 end
    end
    redis.call('HSET', KEYS[3], uid, seq)
  end
  at = at + 3 + k
end
local m = tonumber(ARGV[at])
for x = at + 1, at + 2 * m, 2 do
  if seen[ARGV[x]] then  -- its account still followed: it goes in (or is there)
    redis.call('ZADD', KEYS[4], ARGV[x], ARGV[x + 1])
  end
end
if m > 0 then
  local count = redis.call('ZCARD', KEYS[4])
  if count > kept then redis.call('ZREMRANGEBYRANK', KEYS[4], 0, count - kept - 1) end
end
at = at + 1 + 2 * m
local added = 0
if #ids > 0 then
  table.sort(ids, function(a, b) return a > b end)
  local lowest = ids[#ids]
  -- the head of the home down to the first entry below every id: only it
  -- is written again (new statuses go near the top)
  local size, head = 64, nil
  while true do
    head = redis.call('LRANGE', key, 0, size - 1)
    if #head < size or head[#head] + 0 < lowest then break end
    size = size * 4
  end
  local merged, i, j = {}, 1, 1
  while (i <= #head or j <= #ids) and #merged < cap do
    local o = head[i] and head[i] + 0 or -1
    local v = ids[j] or -1
    if o > v then
      merged[#merged + 1] = head[i]; i = i + 1
    elseif v > o then
      merged[#merged + 1] = string.format('%d', v); j = j + 1; added = added + 1
    else
      merged[#merged + 1] = head[i]; i = i + 1; j = j + 1
    end
  end
  redis.call('LTRIM', key, #head, -1)
  for k = #merged, 1, -500 do
    local from = math.max(1, k - 499)
    local part = {}
    for x = k, from, -1 do part[#part + 1] = merged[x] end
    redis.call('LPUSH', key, unpack(part))
  end
  redis.call('LTRIM', key, 0, cap - 1)
end
for x = at, #ARGV do
  added = added + redis.call('LREM', key, 1, ARGV[x])
end
return added
