-- fed_keep_actor: write a remote account's record and its actor details
-- together (both in the account's slot), bumping the record's revision (the
-- search index and kept renderings follow it). Counts are left as they are.
-- KEYS[1]: u:{uid}   KEYS[2]: fed:actor:{uid}
-- ARGV[1]: the record's fields (JSON object)   ARGV[2]: the actor's (JSON)
-- ARGV[3]: now (ms), the record's creation time if it is new
-- returns: the record's new revision
local record = cjson.decode(ARGV[1])
local new = redis.call('EXISTS', KEYS[1]) == 0
for name, value in pairs(record) do redis.call('HSET', KEYS[1], name, tostring(value)) end
if new then
  redis.call('HSET', KEYS[1], 'at', ARGV[3], 'followers', 0, 'following', 0, 'posts', 0)
end
for name, value in pairs(cjson.decode(ARGV[2])) do
  redis.call('HSET', KEYS[2], name, tostring(value))
end
return redis.call('HINCRBY', KEYS[1], 'rev', 1)
