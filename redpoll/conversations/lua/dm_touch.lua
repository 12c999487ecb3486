-- dm_touch: a direct status reaches one participant's conversation list
-- (direct_messages.after_post). Idempotent and order-proof: an older
-- status (a late replay) never replaces a newer last status.
-- KEYS[1]: the participant's conversations zset dm:{uid} (conversation id -> last status id)
-- KEYS[2]: the participant's conversation states hash dm:{uid}:s (conversation id -> '<last status id>:<unread 1/0>')
-- ARGV[1]: conversation id
-- ARGV[2]: the status id
-- ARGV[3]: '1' unread (a recipient), '0' read (its author)
-- ARGV[4]: conversations kept per user (the oldest beyond are forgotten)
-- returns: 1 if the conversation moved to this status, 0 if it held a newer one
local last = redis.call('ZSCORE', KEYS[1], ARGV[1])
if last and tonumber(last) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ':' .. ARGV[3])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[4])
if over > 0 then
  local old = redis.call('ZRANGE', KEYS[1], 0, over - 1)
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, over - 1)
  redis.call('HDEL', KEYS[2], unpack(old))
end
return 1
