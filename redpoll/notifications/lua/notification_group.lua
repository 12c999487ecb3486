-- notification_group: one notification group of a user, whole (GET
-- /api/v2/notifications/:group_key): its notifications newest first, at
-- most ARGV[2] of them, each with its record. "ungrouped-<id>" is that one
-- notification. Read only.
-- KEYS[1]: records hash ntr:{uid}
-- KEYS[2]: group index zset ntg:{uid} (see notify.lua)
-- ARGV[1]: group key
-- ARGV[2]: most notifications returned
-- returns: {total count, {id, record, id, record, ...}}
local gk = ARGV[1]
local single = string.match(gk, '^ungrouped%-([0-9]+)$')
if single then
  local raw = redis.call('HGET', KEYS[1], single)
  if not raw then return {0, {}} end
  return {1, {single, raw}}
end
local sep = string.find(gk, '-[0-9]+$')
if not sep then return {0, {}} end
local base = string.sub(gk, 1, sep - 1) .. '\0'
  .. string.format('%010d', tonumber(string.sub(gk, sep + 1))) .. '\0'
local lo, hi = '[' .. base, '(' .. base .. '\255'
local total = redis.call('ZLEXCOUNT', KEYS[2], lo, hi)
local out = {}
for _, m in ipairs(redis.call('ZREVRANGEBYLEX', KEYS[2], hi, lo, 'LIMIT', 0, tonumber(ARGV[2]))) do
  local id = tostring(tonumber(string.sub(m, #base + 1, #base + 16)))
  local raw = redis.call('HGET', KEYS[1], id)
  if raw then out[#out + 1] = id; out[#out + 1] = raw end
end
return {total, out}
