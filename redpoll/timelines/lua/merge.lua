-- merge: add a batch of status ids (follow backfill, refill) to a timeline,
-- keeping it newest-first, duplicate-free and at most `cap` long; only while
-- a guard set still holds a member (the follow or list membership that the
-- ids come from), so a concurrent unfollow wins. With a third key (a home's
-- boost record, keys.home_reblogs), the boosts among the ids that are in
-- the home after the merge are recorded there (original -> boost), as
-- deliver_boost.lua records its own, the newest `kept` of them. Idempotent.
-- Which ids come in was decided before (redpoll.timelines.home_rule); this
-- only writes. On a single server, mark_merged.lua runs first in the same
-- pipeline (the watermark).
-- KEYS[1]: timeline list
-- KEYS[2]: guard zset (following:{uid} or list members)
-- KEYS[3]: (optional) the home's boost record
-- ARGV[1]: cap
-- ARGV[2]: guard member, or '' for no guard
-- with KEYS[3]: ARGV[3]: kept; ARGV[4]: p, then p pairs (boost id, original
--          id); then the status ids
-- ARGV[3..] (ARGV[5 + 2p..] with KEYS[3]): status ids, newest first, each once
-- returns: 1 if the guard held (ids merged), 0 if it did not
local key = KEYS[1]
local cap = tonumber(ARGV[1])
if ARGV[2] ~= '' and not redis.call('ZSCORE', KEYS[2], ARGV[2]) then return 0 end
local ids, first, last = ARGV, 3, #ARGV
local pairs_at, pairs = 5, 0
if KEYS[3] then
  pairs = tonumber(ARGV[4])
  first = 5 + 2 * pairs
end

-- the merge itself (returns early where it is done)
local function merge()
  if last < first then return end
  local no = redis.call('LLEN', key)
  if no == 0 or tonumber(ids[first]) < tonumber(redis.call('LINDEX', key, -1)) then
    -- an empty timeline, or all older than the oldest entry (a refill):
    -- append what fits
    local stop = math.min(last, first - 1 + cap - no)
    for k = first, stop, 500 do
      redis.call('RPUSH', key, unpack(ids, k, math.min(k + 499, stop)))
    end
    return
  end
  local old = redis.call('LRANGE', key, 0, -1)
  -- a two-way merge of sorted runs; an id in both is kept once. Each id is
  -- converted to a number once, by arithmetic coercion (`s + 0`: no function
  -- call, unlike tonumber); ids are positive, so -1 marks a run used up and
  -- the loop needs no index checks.
  local i, j = 1, first
  local o, n = old[1] + 0, ids[first] + 0
  -- the entries newer than every id keep their place: the list is trimmed to
  -- them and only what follows is written again
  while o > n do i = i + 1; o = (old[i] or -1) + 0 end
  local keep = math.min(i - 1, cap)  -- (a list longer than the cap is cut)
  local merged, m, room = {}, 0, cap - keep
  while m < room do
    if o > n then
      m = m + 1; merged[m] = old[i]; i = i + 1; o = (old[i] or -1) + 0
    elseif n > o then
      m = m + 1; merged[m] = ids[j]; j = j + 1; n = (ids[j] or -1) + 0
    elseif o < 0 then
      break  -- both runs used up
    else
      m = m + 1; merged[m] = old[i]; i = i + 1; o = (old[i] or -1) + 0
      j = j + 1; n = (ids[j] or -1) + 0
    end
  end
  if keep > 0 then redis.call('LTRIM', key, 0, keep - 1) else redis.call('DEL', key) end
  for k = 1, m, 500 do
    redis.call('RPUSH', key, unpack(merged, k, math.min(k + 499, m)))
  end
end

merge()
if pairs > 0 then
  local kept, recorded = tonumber(ARGV[3]), 0
  for x = pairs_at, pairs_at + 2 * pairs - 1, 2 do
    if redis.call('LPOS', key, ARGV[x], 'MAXLEN', cap) then
      redis.call('ZADD', KEYS[3], ARGV[x], ARGV[x + 1])
      recorded = recorded + 1
    end
  end
  local count = redis.call('ZCARD', KEYS[3])
  if recorded > 0 and count > kept then
    redis.call('ZREMRANGEBYRANK', KEYS[3], 0, count - kept - 1)
  end
end
return 1
