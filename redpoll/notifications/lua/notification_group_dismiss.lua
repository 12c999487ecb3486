-- notification_group_dismiss: remove every notification of one group of a
-- user (POST /api/v2/notifications/:group_key/dismiss): ids, records and
-- group index entries in one step (their nti entries stay, as with one
-- dismissed notification: a repeat of the action does not notify again).
-- KEYS[1]: notification ids zset nt:{uid}
-- KEYS[2]: records hash ntr:{uid}
-- KEYS[3]: group index zset ntg:{uid} (see notify.lua)
-- KEYS[4]: done zset nti:{uid}:u (see notify.lua): their index entries join it
-- ARGV[1]: group key "<prefix>-<bucket>" ("ungrouped-<id>" is one
--          notification: notification_dismiss.lua)
-- returns: how many notifications were removed
local gk = ARGV[1]
local sep = string.find(gk, '-[0-9]+$')
if not sep then return 0 end
local base = string.sub(gk, 1, sep - 1) .. '\0'
  .. string.format('%010d', tonumber(string.sub(gk, sep + 1))) .. '\0'
local lo, hi = '[' .. base, '(' .. base .. '\255'
local removed = 0
for _, m in ipairs(redis.call('ZRANGEBYLEX', KEYS[3], lo, hi)) do
  local id = tostring(tonumber(string.sub(m, #base + 1, #base + 16)))
  local raw = redis.call('HGET', KEYS[2], id)
  if raw then
    local r = cjson.decode(raw)
    if type(r['key']) == 'string' then redis.call('ZADD', KEYS[4], id, r['key']) end
  end
  redis.call('HDEL', KEYS[2], id)
  removed = removed + redis.call('ZREM', KEYS[1], id)
end
redis.call('ZREMRANGEBYLEX', KEYS[3], lo, hi)
return removed
