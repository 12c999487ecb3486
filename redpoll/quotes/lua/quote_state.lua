-- quote_state: a quote across servers changes state, at once (atomic).
-- Run by redpoll.quotes.quotes.set_state: an Accept or verified
-- authorization (accepted), a Reject (rejected), a revocation (revoked).
-- A revoked quote stays revoked; a rejected one may be accepted later (a
-- QuoteRequest answered again), as Mastodon.
-- KEYS[1]: the quoted status's hash st:{qsid}
-- KEYS[2]: its accepted quotes quotes:{qsid} (zset)
-- KEYS[3]: its revoked quotes qrev:{qsid} (set)
-- KEYS[4]: its quotes' states qst:{qsid} (hash)
-- KEYS[5]: its quotes' approvals qappr:{qsid} (hash)
-- ARGV[1]: the quoting status id
-- ARGV[2]: the state: accepted, rejected or revoked
-- ARGV[3]: (optional) the approving QuoteAuthorization's URI, kept when accepted
-- returns: 1 changed now, 0 already so (or revoked, or the quoted status gone)
local call = redis.call
local sid, state = ARGV[1], ARGV[2]
if call('SISMEMBER', KEYS[3], sid) == 1 then return 0 end
if state == 'revoked' then
  call('ZREM', KEYS[2], sid)
  call('HDEL', KEYS[4], sid)
  call('SADD', KEYS[3], sid)
  return 1
end
if call('EXISTS', KEYS[1]) == 0 or call('HEXISTS', KEYS[1], 'deleted') == 1 then
  return 0
end
if state == 'accepted' then
  if ARGV[3] and ARGV[3] ~= '' then call('HSET', KEYS[5], sid, ARGV[3]) end
  call('HDEL', KEYS[4], sid)
  return call('ZADD', KEYS[2], sid, sid)
end
if state == 'rejected' then
  call('ZREM', KEYS[2], sid)
  if call('HGET', KEYS[4], sid) == 'rejected' then return 0 end
  call('HSET', KEYS[4], sid, 'rejected')
  return 1
end
return redis.error_reply('unknown quote state')
