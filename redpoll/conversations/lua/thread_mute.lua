-- thread_mute: mute a thread for one account, under the cap, once.
-- KEYS[1]: tmute:{uid}   the account's muted threads
-- ARGV[1]: the thread (its first status's id)   ARGV[2]: the cap
-- returns: 1 muted now, 0 muted already, -1 the cap is reached (nothing written)
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 0 end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return -1 end
return redis.call('SADD', KEYS[1], ARGV[1])
