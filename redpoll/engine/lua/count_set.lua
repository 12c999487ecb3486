-- count_set: set a counter to the size of what it counts (redpoll check
-- --repair): field ARGV[1] of hash KEYS[1] becomes the sum of the ZCARDs of
-- KEYS[2..], if the hash exists (a counter of a record that is gone is not
-- made again). Atomic on the record's slot and idempotent.
-- KEYS[1]: the hash holding the counter (u:{uid}, cnt:{sid})
-- KEYS[2..]: the sorted sets it counts, in the same slot
-- ARGV[1]: the counter's field    ARGV[2]: '1' to bump field 'rev' when it
--          changes (a user record: readers that keep it compare 'rev')
-- ARGV[3]: '1' if the hash need not exist before (a status's counts)
-- returns: {the counter before (or -1 when absent), after}, or {-1, -1}
-- when the hash is absent (nothing written)
if ARGV[3] ~= '1' and redis.call('EXISTS', KEYS[1]) == 0 then return {-1, -1} end
local n = 0
for k = 2, #KEYS do n = n + redis.call('ZCARD', KEYS[k]) end
local before = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '-1')
if before ~= n then
  redis.call('HSET', KEYS[1], ARGV[1], n)
  if ARGV[2] == '1' then redis.call('HINCRBY', KEYS[1], 'rev', 1) end
end
return {before, n}
