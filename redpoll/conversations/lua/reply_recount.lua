-- reply_recount: set a status's reply count from its public and unlisted
-- replies (conversation.recount_replies), for counts kept before only
-- those were counted. Atomic on the status's slot and idempotent; safe
-- beside reply_link: a reply deleted meanwhile has left KEYS[1] and is not
-- put back, one posted meanwhile linked itself.
-- KEYS[1]: the parent's replies zset rep:{parent}
-- KEYS[2]: the parent's counted replies zset rpc:{parent}
-- KEYS[3]: the parent's counts hash cnt:{parent}
-- ARGV: the ids of its replies that are public or unlisted
for _, id in ipairs(ARGV) do
  if redis.call('ZSCORE', KEYS[1], id) then
    redis.call('ZADD', KEYS[2], 'NX', id, id)
  end
end
local counted = redis.call('ZCARD', KEYS[2])
if counted > 0 or redis.call('HEXISTS', KEYS[3], 'p') == 1 then
  redis.call('HSET', KEYS[3], 'p', counted)
end
return counted
