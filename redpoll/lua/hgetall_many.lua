-- hgetall_many: read many hashes in one command (a page of statuses, their
-- authors). One EVALSHA costs the client far less than a pipeline of
-- HGETALLs, each of which it builds, packs and parses on its own.
-- KEYS: the hashes, all in one hash slot (or a single server)
-- returns: for each key, its fields and values as a flat array ({} if absent)
local out = {}
for i = 1, #KEYS do
  out[i] = redis.call('HGETALL', KEYS[i])
end
return out
