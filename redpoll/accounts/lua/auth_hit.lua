-- auth_hit: look up an access token by its digest and count one request
-- against the token's fixed rate-limit window, in one round trip. The counter
-- shares the token's hash tag, so both keys are in one slot.
-- KEYS[1]: token hash tok:{digest}
-- KEYS[2]: the token's counter for the current window rl:{digest}:<window>
-- ARGV[1]: milliseconds until the counter may expire ('0' = not rate limited)
-- returns: {} if the token is unknown (or revoked), else
--          {uid ('0' for an app token), client id, scopes, requests counted,
--           its 'chk' mark (false if none: redpoll.accounts.standing),
--           '1' if issued to an account waiting for approval else false}
local t = redis.call('HMGET', KEYS[1], 'uid', 'app', 'scopes', 'chk', 'pend')
if not t[1] then return {} end
local n = 0
if ARGV[1] ~= '0' then
  n = redis.call('INCR', KEYS[2])
  if n == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[1]) end
end
return {t[1], t[2], t[3], n, t[4], t[5]}
