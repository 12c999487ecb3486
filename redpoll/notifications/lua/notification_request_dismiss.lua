-- notification_request_dismiss: dismiss a user's notification request
-- (Mastodon's DismissNotificationRequestService, in one step): every
-- filtered notification of its sender goes (their index entries join the
-- done set, as a dismissed notification's: a repeat does not notify again)
-- and the request with them. A later filtered mention makes a new one.
-- KEYS[1]: notification requests zset nrq:{uid} (sender -> request id)
-- KEYS[2]: request fields hash nrqr:{uid}
-- KEYS[3]: filtered notifications by sender zset ntfl:{uid} (see notify.lua)
-- KEYS[4]: records hash ntr:{uid}
-- KEYS[5]: notification ids zset nt:{uid}
-- KEYS[6]: done zset nti:{uid}:u (see notify.lua)
-- ARGV[1]: sender id
-- ARGV[2]: request id (nothing is done unless it is the sender's request now)
-- returns: 1 dismissed, 0 no such request
local actor = ARGV[1]
local rid = redis.call('ZSCORE', KEYS[1], actor)
if not rid or tonumber(rid) ~= tonumber(ARGV[2]) then return 0 end
local base = string.rep('0', 20 - #actor) .. actor .. '\0'
local lo, hi = '[' .. base, '(' .. base .. '\255'
for _, m in ipairs(redis.call('ZRANGEBYLEX', KEYS[3], lo, hi)) do
  local id = tostring(tonumber(string.sub(m, #base + 1)))
  local raw = redis.call('HGET', KEYS[4], id)
  if raw then
    local r = cjson.decode(raw)
    if type(r['key']) == 'string' then redis.call('ZADD', KEYS[6], id, r['key']) end
  end
  redis.call('HDEL', KEYS[4], id)
  redis.call('ZREM', KEYS[5], id)
end
redis.call('ZREMRANGEBYLEX', KEYS[3], lo, hi)
redis.call('ZREM', KEYS[1], actor)
redis.call('HDEL', KEYS[2], actor .. ':at', actor .. ':upd', actor .. ':last', actor .. ':n')
return 1
