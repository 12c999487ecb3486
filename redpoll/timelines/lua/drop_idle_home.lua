-- drop_idle_home: fan-out met followers idle past the period (redpoll.timelines.hybrid):
-- their homes go (the next read rebuilds them from the accounts followed),
-- but only where the user's own record of their last home read, in their
-- slot, is still that old: a read that came back meanwhile keeps its home.
-- Idempotent.
-- KEYS: pairs, each in one user's slot: home:{uid}, hseen:{uid}
-- ARGV[1]: the idle cutoff (ms): a last read before it is idle
-- returns: the home keys dropped
local out, cutoff = {}, tonumber(ARGV[1])
for i = 1, #KEYS, 2 do
  local seen = redis.call('GET', KEYS[i + 1])
  if seen and tonumber(seen) < cutoff then
    redis.call('DEL', KEYS[i])
    out[#out + 1] = KEYS[i]
  end
end
return out
