-- notification_dismiss: remove one notification of a user: id, record and
-- group index entry together (its index entry in nti stays, see notify.lua);
-- a filtered one also leaves its sender's filtered ones and request.
-- KEYS[1]: notification ids zset nt:{uid}
-- KEYS[2]: records hash ntr:{uid}
-- KEYS[3]: group index zset ntg:{uid} (see notify.lua)
-- KEYS[4]: done zset nti:{uid}:u (see notify.lua): the index entry joins it
-- KEYS[5]: filtered notifications by sender zset ntfl:{uid} (see notify.lua)
-- KEYS[6]: notification requests zset nrq:{uid}
-- KEYS[7]: request fields hash nrqr:{uid}
-- ARGV[1]: notification id
-- returns: 1 removed, 0 unknown
local FLAG = '{"filtered":1,'
local function pad(v, n) v = tostring(v); return string.rep('0', n - #v) .. v end
local raw = redis.call('HGET', KEYS[2], ARGV[1])
if raw then
  local r = cjson.decode(raw)
  if type(r['key']) == 'string' then redis.call('ZADD', KEYS[4], ARGV[1], r['key']) end
  local gk = r['group_key']
  local sep = type(gk) == 'string' and string.find(gk, '-[0-9]+$')
  if sep then
    redis.call('ZREM', KEYS[3], string.sub(gk, 1, sep - 1) .. '\0'
               .. string.format('%010d', tonumber(string.sub(gk, sep + 1))) .. '\0'
               .. string.format('%016d', tonumber(ARGV[1])) .. '\0' .. tostring(r['actor']))
  end
  if string.sub(raw, 1, #FLAG) == FLAG then
    local actor = tostring(r['actor'])
    redis.call('ZREM', KEYS[5], pad(actor, 20) .. '\0' .. pad(ARGV[1], 16))
    if r['type'] == 'mention' and redis.call('HINCRBY', KEYS[7], actor .. ':n', -1) <= 0 then
      redis.call('ZREM', KEYS[6], actor)
      redis.call('HDEL', KEYS[7], actor .. ':at', actor .. ':upd', actor .. ':last', actor .. ':n')
    end
  end
end
redis.call('HDEL', KEYS[2], ARGV[1])
return redis.call('ZREM', KEYS[1], ARGV[1])
