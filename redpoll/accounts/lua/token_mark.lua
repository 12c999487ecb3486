-- token_mark: mark an access token as one whose user's standing is checked
-- on the requests that need a functional login (redpoll.accounts.standing),
-- if the token still exists (a revoked one is not brought back as a stub).
-- KEYS[1]: token hash tok:{digest}
-- returns: 1 if marked, 0 if the token is gone
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'chk', '1')
return 1
