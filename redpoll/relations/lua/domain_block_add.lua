-- domain_block_add: a member blocks a domain, within the bound.
-- KEYS[1]: dblk:{uid}  the member's blocked domains -> when blocked (µs)
-- ARGV[1]: the domain   ARGV[2]: now (µs)   ARGV[3]: the most kept
-- returns: 1 added, 0 blocked already, -1 the bound is reached
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return -1 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
