-- rate_hit: count one request in a fixed rate-limit window.
-- KEYS[1]: the bucket's counter for the current window rl:{bucket}:<window>
-- ARGV[1]: milliseconds until the counter may expire
-- returns: requests counted in this window, this one included
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n
