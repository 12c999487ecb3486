-- tag_posts: a status of one account in (ARGV[1] = '1') or out of ('0') the
-- sets of its hashtags (utag:{uid}:<name>), and its tags noted as used
-- (utags:{uid}, newest kept). Idempotent: ZADD and ZREM of one member.
-- KEYS[1]: utags:{uid}   the tags the account used, by last use
-- KEYS[2..]: utag:{uid}:<name>, one per hashtag of the status
-- ARGV[1]: '1' in, '0' out   ARGV[2]: status id   ARGV[3]: its time (ms)
-- ARGV[4]: how many used tags to keep   ARGV[5..]: the tag names, as KEYS[2..]
-- returns: the number of sets changed
local changed = 0
for i = 2, #KEYS do
  if ARGV[1] == '1' then
    changed = changed + redis.call('ZADD', KEYS[i], ARGV[3], ARGV[2])
    redis.call('ZADD', KEYS[1], 'GT', ARGV[3], ARGV[3 + i])
  else
    changed = changed + redis.call('ZREM', KEYS[i], ARGV[2])
  end
end
if ARGV[1] == '1' then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -1 - tonumber(ARGV[4]))
end
return changed
