-- notification_request_accept: accept a user's notification request
-- (Mastodon's AcceptNotificationRequestService, in one step): every
-- filtered notification of its sender joins the list as any other (its
-- record unmarked; it stays ungrouped), the sender is accepted from now on
-- and the request goes.
-- KEYS[1]: notification requests zset nrq:{uid} (sender -> request id)
-- KEYS[2]: request fields hash nrqr:{uid}
-- KEYS[3]: filtered notifications by sender zset ntfl:{uid} (see notify.lua)
-- KEYS[4]: records hash ntr:{uid}
-- KEYS[5]: accepted senders set nperm:{uid}
-- ARGV[1]: sender id
-- ARGV[2]: request id (nothing is done unless it is the sender's request now)
-- returns: 1 accepted, 0 no such request
local FLAG = '{"filtered":1,'
local actor = ARGV[1]
local rid = redis.call('ZSCORE', KEYS[1], actor)
if not rid or tonumber(rid) ~= tonumber(ARGV[2]) then return 0 end
local base = string.rep('0', 20 - #actor) .. actor .. '\0'
local lo, hi = '[' .. base, '(' .. base .. '\255'
for _, m in ipairs(redis.call('ZRANGEBYLEX', KEYS[3], lo, hi)) do
  local id = tostring(tonumber(string.sub(m, #base + 1)))
  local raw = redis.call('HGET', KEYS[4], id)
  if raw and string.sub(raw, 1, #FLAG) == FLAG then
    redis.call('HSET', KEYS[4], id, '{' .. string.sub(raw, #FLAG + 1))
  end
end
redis.call('ZREMRANGEBYLEX', KEYS[3], lo, hi)
redis.call('SADD', KEYS[5], actor)
redis.call('ZREM', KEYS[1], actor)
redis.call('HDEL', KEYS[2], actor .. ':at', actor .. ':upd', actor .. ':last', actor .. ':n')
return 1
