-- remote_kept_drop: forget a kept copy of another server's file, if its
-- entry is still the one the caller read (a copy fetched again meanwhile
-- is another entry, whose files its fetch owns).
-- KEYS[1]: media:{remote}   KEYS[2]: media:{remote}:files   KEYS[3]: media:{remote}:bytes
-- ARGV[1]: the member   ARGV[2]: the entry read ('' whatever it holds)
-- returns: the names it held (to delete), or '' (no entry, or another one)
local old = redis.call('HGET', KEYS[2], ARGV[1])
if not old then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return ''
end
if ARGV[2] ~= '' and old ~= ARGV[2] then return '' end
local size, names = string.match(old, '^(%d+) ?(.*)$')
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('DECRBY', KEYS[3], size or 0)
return names or ''
