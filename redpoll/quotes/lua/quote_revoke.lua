-- quote_revoke: the quoted author takes a quote of their status back, at
-- once: out of the accepted quotes (quotes_count), into the revoked ones.
-- KEYS[1]: the quoted status's accepted quotes quotes:{qsid} (zset)
-- KEYS[2]: its revoked quotes qrev:{qsid} (set)
-- ARGV[1]: the quoting status id
-- returns: 1 revoked now, 0 revoked already
local call = redis.call
call('ZREM', KEYS[1], ARGV[1])
return call('SADD', KEYS[2], ARGV[1])
