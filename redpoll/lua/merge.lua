-- merge: add a batch of status ids (follow backfill, refill) to a timeline,
-- keeping it newest-first, duplicate-free and at most `cap` long; only while
-- a guard set still holds a member (the follow or list membership that the
-- ids come from), so a concurrent unfollow wins. Idempotent.
-- KEYS[1]: timeline list
-- KEYS[2]: guard zset (following:{uid} or list members)
-- ARGV[1]: cap
-- ARGV[2]: guard member, or '' for no guard
-- ARGV[3..]: status ids, newest first; an argument may hold several ids
--           separated by commas (one argument for a whole backfill: a client
--           encodes 1,000 arguments far slower than one string)
-- returns: 1 if the guard held (ids merged), 0 if it did not
local key = KEYS[1]
local cap = tonumber(ARGV[1])
if ARGV[2] ~= '' and not redis.call('ZSCORE', KEYS[2], ARGV[2]) then return 0 end
local new = {}
for k = 3, #ARGV do
  for id in string.gmatch(ARGV[k], '[^,]+') do new[#new + 1] = id end
end
if #new == 0 then return 1 end
local old = redis.call('LRANGE', key, 0, -1)
local merged, seen = {}, {}
local i, j = 1, 1
while #merged < cap and (i <= #old or j <= #new) do
  local pick
  if j > #new then pick = old[i]; i = i + 1
  elseif i > #old then pick = new[j]; j = j + 1
  elseif tonumber(old[i]) >= tonumber(new[j]) then pick = old[i]; i = i + 1
  else pick = new[j]; j = j + 1 end
  if not seen[pick] then seen[pick] = true; merged[#merged + 1] = pick end
end
redis.call('DEL', key)
for k = 1, #merged, 500 do
  redis.call('RPUSH', key, unpack(merged, k, math.min(k + 499, #merged)))
end
return 1
