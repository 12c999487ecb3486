-- block_put: add a block to a hash of blocks (e-mail domains, canonical
-- e-mail hashes), giving it the next id, unless that member is blocked
-- already: the check, the id and the write in one step.
-- KEYS[1]: the hash (keys.EMAIL_DOMAIN_BLOCKS or keys.CANONICAL_EMAIL_BLOCKS)
-- ARGV[1]: the member   ARGV[2]: the sequence field   ARGV[3]: now (ms)
-- returns: the new block's id; error 'EXISTS' if the member is blocked
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return redis.error_reply('EXISTS already blocked')
end
local id = redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode({id = id, at = ARGV[3]}))
return id
