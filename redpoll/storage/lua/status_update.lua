-- status_update: change fields of a live status record (an edit) and give
-- it a new version 'v', which is what makes every process read it again
-- (redpoll.core.memo). status_update_listed.lua is the single server's variant.
-- KEYS[1]: status hash st:{sid}
-- ARGV: field/value pairs to set
-- returns: the new version, or error 'NOTFOUND' (missing or deleted)
local call = redis.call
if call('EXISTS', KEYS[1]) == 0 or call('HEXISTS', KEYS[1], 'deleted') == 1 then
  return redis.error_reply('NOTFOUND')
end
if #ARGV > 0 then call('HSET', KEYS[1], unpack(ARGV)) end
return call('HINCRBY', KEYS[1], 'v', 1)
