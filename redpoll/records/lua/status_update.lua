-- status_update: change fields of a live status record (an edit) and give
-- it a new version 'v', which is what makes every process read it again
-- (redpoll.core.memo). status_update_listed.lua is the single server's variant.
-- KEYS[1]: status hash st:{sid}
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
return call('HINCRBY', KEYS[1], 'v', 1)
