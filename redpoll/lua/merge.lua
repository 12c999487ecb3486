-- merge: add a batch of status ids (follow backfill, refill) to a timeline,
-- keeping it newest-first, duplicate-free and at most `cap` long; only while
-- a guard set still holds a member (the follow or list membership that the
-- ids come from), so a concurrent unfollow wins. Idempotent.
-- KEYS[1]: timeline list
-- KEYS[2]: guard zset (following:{uid} or list members)
-- KEYS[3]: the delivery watermark, single server only (see deliver.lua):
--          raised to the newest id merged in, marked 'm' (merged)
-- ARGV[1]: cap
-- ARGV[2]: guard member, or '' for no guard
-- ARGV[3..]: status ids, newest first; an argument may hold several ids
--           separated by commas (one argument for a whole backfill: a client
--           encodes 1,000 arguments far slower than one string)
-- returns: 1 if the guard held (ids merged), 0 if it did not
local key = KEYS[1]
local cap = tonumber(ARGV[1])
if ARGV[2] ~= '' and not redis.call('ZSCORE', KEYS[2], ARGV[2]) then return 0 end
local new, nn = {}, 0
for k = 3, #ARGV do
  for id in string.gmatch(ARGV[k], '[^,]+') do nn = nn + 1; new[nn] = id end
end
if nn == 0 then return 1 end
if KEYS[3] then
  local top = 0
  for k = 1, nn do local v = tonumber(new[k]); if v > top then top = v end end
  local mark = redis.call('GET', KEYS[3]) or '0:d'
  local wid = tonumber(string.sub(mark, 1, string.find(mark, ':', 1, true) - 1))
  -- 'm': a fan-out of this very id must now look before it pushes
  if top >= wid then redis.call('SET', KEYS[3], string.format('%d', top) .. ':m') end
end
local old = redis.call('LRANGE', key, 0, -1)
local no = #old
-- lengths kept in locals (# is a search in Lua 5.1) and each id converted to
-- a number once, not at every comparison
local merged, seen, m = {}, {}, 0
local i, j = 1, 1
local oi, nj = tonumber(old[1]), tonumber(new[1])
while m < cap and (i <= no or j <= nn) do
  local pick
  if j > nn or (i <= no and oi >= nj) then
    pick = old[i]; i = i + 1; oi = tonumber(old[i])
  else
    pick = new[j]; j = j + 1; nj = tonumber(new[j])
  end
  if not seen[pick] then seen[pick] = true; m = m + 1; merged[m] = pick end
end
redis.call('DEL', key)
for k = 1, m, 500 do
  redis.call('RPUSH', key, unpack(merged, k, math.min(k + 499, m)))
end
return 1
