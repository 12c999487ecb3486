-- collection_drop: delete a collection, its record and its items together.
-- KEYS[1]: the owner's collections zset    KEYS[2]: the record hash
-- KEYS[3]: the items hash                  KEYS[4]: the item accounts hash
-- ARGV[1]: collection id
-- returns: the featured account ids (their reverse index entries are
--          removed next), or false if there is no such collection
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return false end
local accounts = redis.call('HKEYS', KEYS[4])
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
return accounts
