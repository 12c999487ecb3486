-- collection_put: create or update one of an owner's collections.
-- KEYS[1]: the owner's collections zset colls:{uid} (id -> ms created)
-- KEYS[2]: the collection's record hash coll:{uid}:<id>
-- ARGV[1]: 'create' (bounded by ARGV[4] collections) or 'update'
-- ARGV[2]: collection id    ARGV[3]: now (ms)    ARGV[4]: most collections
-- ARGV[5..]: field, value pairs to set
-- returns: 'OK', 'NONE' (update of an unknown collection) or 'FULL'
local exists = redis.call('ZSCORE', KEYS[1], ARGV[2])
if ARGV[1] == 'update' and not exists then return 'NONE' end
if ARGV[1] == 'create' then
  if exists then return 'OK' end
  if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 'FULL' end
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
  redis.call('HSET', KEYS[2], 'ca', ARGV[3])
end
for i = 5, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
end
redis.call('HSET', KEYS[2], 'ua', ARGV[3])
return 'OK'
