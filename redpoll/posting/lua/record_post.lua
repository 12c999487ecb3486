-- record_post: add a new status to its author's profile and count it.
-- Idempotent: recording the same id twice counts it once; and an id its
-- author deleted lately (KEYS[3]) is never recorded again, so a replayed
-- post journal that runs after the delete cannot bring it back.
-- KEYS[1]: profile zset prof:{a}
-- KEYS[2]: user hash u:{a}
-- KEYS[3]: the author's lately deleted ids, zset gone:{a} (delete_own.lua)
-- KEYS[4]: the author's statuses the home rule looks at (keys.ruled_posts)
-- ARGV[1]: status id
-- ARGV[2]: its member of KEYS[4] (what the rule reads of it), or '' for a
--          status that needs no look
-- The author's 'pseq' counts what their profile ever recorded (never
-- down: a delete leaves it): a home merging a large account's statuses
-- catches up when it moves (redpoll.timelines.hybrid.read_home).
-- returns: 1 recorded, 0 already recorded, -1 deleted meanwhile,
--          error 'NOUSER' if a is unknown
if redis.call('HEXISTS', KEYS[2], 'id') == 0 then
  return redis.error_reply('NOUSER')
end
if redis.call('ZSCORE', KEYS[3], ARGV[1]) then return -1 end
if ARGV[2] ~= '' then redis.call('ZADD', KEYS[4], ARGV[1], ARGV[2]) end
if redis.call('ZADD', KEYS[1], 'NX', ARGV[1], ARGV[1]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[2], 'posts', 1)
redis.call('HINCRBY', KEYS[2], 'pseq', 1)
redis.call('HINCRBY', KEYS[2], 'rev', 1)  -- the user record changed (users.current)
return 1
