-- status_update_listed: status_update.lua on a single server, where the new
-- version also goes into the log of changed statuses (keys.CHANGED_STATUSES)
-- in the same step: pages take versions from there (read_page_listed.lua).
-- KEYS[1]: status hash st:{sid}
-- KEYS[2]: the log of changed statuses, zset id -> version
-- ARGV[1], ARGV[2]: a field and the value it must hold ('' for none: no check)
-- ARGV[3..]: field/value pairs to set
-- returns: the new version, or error 'NOTFOUND' (missing or deleted), 'CHANGED'
-- (the field of ARGV[1] holds another value: nothing written)
local call = redis.call
if call('EXISTS', KEYS[1]) == 0 or call('HEXISTS', KEYS[1], 'deleted') == 1 then
  return redis.error_reply('NOTFOUND')
end
if ARGV[1] ~= '' and call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then
  return redis.error_reply('CHANGED')
end
if #ARGV > 2 then call('HSET', KEYS[1], unpack(ARGV, 3)) end
local v = call('HINCRBY', KEYS[1], 'v', 1)
call('ZADD', KEYS[2], v, call('HGET', KEYS[1], 'id'))
return v
