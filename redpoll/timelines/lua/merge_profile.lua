-- merge_profile: the single server's backfill of a new edge (a follow, a
-- list member) for the member's plain statuses, in the edge's own round
-- trip (a fast-path variant of merge.lua, single server only: the profile,
-- its index and the watermark are slots of their own). The ids are the
-- newest of the member's profile, read here, less those of KEYS[5]: the
-- statuses the home rule must look at (keys.ruled_posts). It decides
-- nothing: the caller asked the rule that the member's plain statuses enter
-- this timeline before sending it, and merges the ruled ones the rule lets
-- in afterwards (merge.lua). The delivery watermark is raised to the newest
-- of them first (as mark_merged.lua does).
-- KEYS[1]: timeline list
-- KEYS[2]: guard zset (following:{uid} or list members)
-- KEYS[3]: the delivery watermark (deliver_fast.lua)
-- KEYS[4]: the profile zset to take the ids from
-- KEYS[5]: the member's ruled statuses (left out), scored by id
-- ARGV[1]: cap
-- ARGV[2]: guard member, or '' for no guard
-- ARGV[3]: how many of the profile's newest ids to look at
-- returns: {1, the lowest id looked at ('' for none)} if the guard held
--          (ids merged), {0, ''} if it did not
local key = KEYS[1]
local cap = tonumber(ARGV[1])
if ARGV[2] ~= '' and not redis.call('ZSCORE', KEYS[2], ARGV[2]) then return {0, ''} end
local ids = redis.call('ZREVRANGEBYSCORE', KEYS[4], '+inf', '-inf', 'LIMIT', 0, tonumber(ARGV[3]))
local lowest = ids[#ids] or ''
if #ids > 0 and redis.call('EXISTS', KEYS[5]) == 1 then
  local ruled = {}
  for _, score in ipairs(redis.call('ZRANGE', KEYS[5], '+inf', lowest, 'BYSCORE', 'REV',
                                    'WITHSCORES')) do
    ruled[score] = true  -- (members and scores alternate; a score is a ruled id)
  end
  local kept = {}
  for k = 1, #ids do
    if not ruled[ids[k]] then kept[#kept + 1] = ids[k] end
  end
  ids = kept
end
local first, last = 1, #ids
if last < first then return {1, lowest} end
-- ids come newest first: ids[first] is the newest
local mark = redis.call('GET', KEYS[3]) or '0:d'
local wid = tonumber(string.sub(mark, 1, string.find(mark, ':', 1, true) - 1))
-- 'm': a fan-out of this very id must now look before it pushes
if tonumber(ids[first]) >= wid then redis.call('SET', KEYS[3], ids[first] .. ':m') end
local no = redis.call('LLEN', key)
if no == 0 or tonumber(ids[first]) < tonumber(redis.call('LINDEX', key, -1)) then
  -- an empty timeline, or all older than the oldest entry (a refill):
  -- append what fits
  local stop = math.min(last, first - 1 + cap - no)
  for k = first, stop, 500 do
    redis.call('RPUSH', key, unpack(ids, k, math.min(k + 499, stop)))
  end
  return {1, lowest}
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
return {1, lowest}
