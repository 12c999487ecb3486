-- poll_vote: one account's vote in a poll, counted, in one step: refused
-- with nothing written when the status is gone, its record changed since
-- the vote was checked against it (an edit may have changed the options),
-- the poll has ended, or the account voted already.
-- KEYS[1]: the status hash st:{sid}
-- KEYS[2]: the counts hash poll:{sid}:<gen> (index -> votes, 'n' -> voters)
-- KEYS[3]: the votes hash pvote:{sid}:<gen> (uid -> choices)
-- ARGV[1]: the record's version 'v' the vote was checked against ('' none)
-- ARGV[2]: the voter's id    ARGV[3]: when the poll ends (ms)
-- ARGV[4]: the choices as stored ('0,2')    ARGV[5..]: each chosen index
-- returns: 1; errors NOTFOUND, CHANGED, ENDED, VOTED
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'deleted') == 1 then
  return redis.error_reply('NOTFOUND status')
end
if (redis.call('HGET', KEYS[1], 'v') or '') ~= ARGV[1] then
  return redis.error_reply('CHANGED status')
end
local t = redis.call('TIME')
if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) >= tonumber(ARGV[3]) then
  return redis.error_reply('ENDED poll')
end
if redis.call('HSETNX', KEYS[3], ARGV[2], ARGV[4]) == 0 then
  return redis.error_reply('VOTED poll')
end
for i = 5, #ARGV do
  redis.call('HINCRBY', KEYS[2], ARGV[i], 1)
end
redis.call('HINCRBY', KEYS[2], 'n', 1)
return 1
