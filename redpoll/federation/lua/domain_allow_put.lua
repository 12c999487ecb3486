-- domain_allow_put: allow a host (a field of the domain blocks' hash, so
-- that one read decides a host), giving it the next id, unless it is
-- allowed already: the check, the id and the write in one step.
-- KEYS[1]: keys.DOMAIN_BLOCKS
-- ARGV[1]: the field (keys.DOMAIN_ALLOW_PREFIX .. host)
-- ARGV[2]: the sequence field keys.DOMAIN_ALLOW_SEQ   ARGV[3]: now (ms)
-- returns: the new allow's id; error 'EXISTS' if the host is allowed already
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return redis.error_reply('EXISTS already allowed')
end
local id = redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode({id = id, at = ARGV[3]}))
return id
