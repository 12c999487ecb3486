-- poll_vote_one: one choice of an account of another server in a local
-- poll (its server sends each choice as a note of its own), counted in one
-- step: refused with nothing written when the status is gone, its record
-- changed since the vote was checked against it, the poll has ended, the
-- account voted already (a single-choice poll) or chose this option
-- already (a multiple-choice one). Its voters count the account once; its
-- server's inbox joins those told of the poll's counts.
-- KEYS[1]: the status hash st:{sid}
-- KEYS[2]: the counts hash poll:{sid}:<gen> (index -> votes, 'n' -> voters)
-- KEYS[3]: the votes hash pvote:{sid}:<gen> (uid -> choices)
-- KEYS[4]: the set pinbox:{sid}:<gen> (the inboxes of remote voters)
-- ARGV[1]: the record's version 'v' the vote was checked against ('' none)
-- ARGV[2]: the voter's id    ARGV[3]: when the poll ends (ms)
-- ARGV[4]: the chosen index  ARGV[5]: '1' a multiple-choice poll
-- ARGV[6]: the voter's inbox ('' none)
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
local had = redis.call('HGET', KEYS[3], ARGV[2])
if had then
  if ARGV[5] ~= '1' then
    return redis.error_reply('VOTED poll')
  end
  for c in string.gmatch(had, '[^,]+') do
    if c == ARGV[4] then
      return redis.error_reply('VOTED poll')
    end
  end
  redis.call('HSET', KEYS[3], ARGV[2], had .. ',' .. ARGV[4])
else
  redis.call('HSET', KEYS[3], ARGV[2], ARGV[4])
  redis.call('HINCRBY', KEYS[2], 'n', 1)
end
redis.call('HINCRBY', KEYS[2], ARGV[4], 1)
if ARGV[6] ~= '' then
  redis.call('SADD', KEYS[4], ARGV[6])
end
return 1
