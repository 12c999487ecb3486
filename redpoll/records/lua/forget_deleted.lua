-- forget_deleted: the cleanup of a deleted status has taken its id out of
-- every timeline (single server). Its entry in the log of changed statuses
-- is marked done (score -<ms now> instead of -1); delete_mark_listed.lua
-- drops done entries once they are older than a window longer than any job
-- step, so that a fan-out step racing the delete (it delivers, then sees
-- the delete and takes the id back out) cannot show the status meanwhile.
-- KEYS[1]: the log of changed statuses, zset id -> version (< 0 = deleted)
-- ARGV[1]: status id
-- ARGV[2]: now in ms
-- returns: 1 if marked done, 0 if there was no running delete's entry
if redis.call('ZSCORE', KEYS[1], ARGV[1]) ~= '-1' then return 0 end
redis.call('ZADD', KEYS[1], -tonumber(ARGV[2]), ARGV[1])
return 1
