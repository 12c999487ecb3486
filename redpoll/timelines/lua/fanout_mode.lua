-- fanout_mode: how one status's fan-out treats the author's followers'
-- homes (redpoll.timelines.hybrid), and the author's switch between the two modes,
-- decided atomically with the follower count it rests on.
-- The mode field (keys.FANOUT_MODE_FIELD of the user record): absent =
-- fanned out; 'big' = not fanned out (each follower's home catches up with
-- the author's statuses when read);
-- 'mark:<sid>' = the fan-out of <sid> is adding the author to every
-- follower's large set (keys.large_following) and turns the mode to 'big'
-- when it has walked them all; 'unmark:<sid>' = the fan-out of <sid> is
-- merging the author's statuses into every follower's home and taking the
-- author out of their large sets, and clears the mode at the end. While
-- either walk runs, statuses are fanned out (a read dedupes by id).
-- A status's first step ('start') may begin a walk; later steps ('step')
-- learn whether they are that walk; its last home step ('end') ends it.
-- Safe to run twice: the walk is named by its status id.
-- KEYS[1]: the author's record u:{uid}; KEYS[2]: their followers fers:{uid}
-- ARGV[1]: status id; ARGV[2]: threshold (more followers: big);
-- ARGV[3]: below this many followers a big author goes back to fan-out;
-- ARGV[4]: 'start' | 'step' | 'end'
-- returns: 'fan' (walk, deliver), 'big' (do not walk), 'mark', 'unmark'
local call = redis.call
local sid, op = ARGV[1], ARGV[4]
if call('EXISTS', KEYS[1]) == 0 then return 'fan' end
local mode = call('HGET', KEYS[1], 'fan') or ''
if mode == 'mark:' .. sid then
  if op == 'end' then call('HSET', KEYS[1], 'fan', 'big'); return 'big' end
  return 'mark'
end
if mode == 'unmark:' .. sid then
  if op == 'end' then call('HDEL', KEYS[1], 'fan'); return 'fan' end
  return 'unmark'
end
if op ~= 'start' then return 'fan' end
local n = call('ZCARD', KEYS[2])
local grow, shrink = n > tonumber(ARGV[2]), n < tonumber(ARGV[3])
if mode == 'big' then
  if shrink then call('HSET', KEYS[1], 'fan', 'unmark:' .. sid); return 'unmark' end
  return 'big'
end
if string.sub(mode, 1, 5) == 'mark:' then
  -- another status is marking: it stops marking once the mode is not its own
  if shrink then call('HSET', KEYS[1], 'fan', 'unmark:' .. sid); return 'unmark' end
  return 'fan'
end
-- fanned out, or another status is unmarking
if grow then call('HSET', KEYS[1], 'fan', 'mark:' .. sid); return 'mark' end
return 'fan'
