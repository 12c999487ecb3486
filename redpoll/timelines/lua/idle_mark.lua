-- idle_mark: after their homes were dropped (drop_idle_home.lua), mark those
-- users in keys.HOME_SEEN with the negative of their last read, so later
-- fan-outs skip them without another look, and their next read still counts
-- as a return from idle (home_seen.lua). Only where the entry is unchanged:
-- a read recorded meanwhile stands.
-- KEYS[1]: keys.HOME_SEEN
-- ARGV: uid, last read (ms), uid, last read, ...
-- returns: how many were marked
local marked = 0
for i = 1, #ARGV, 2 do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score and tonumber(score) == tonumber(ARGV[i + 1]) then
    redis.call('ZADD', KEYS[1], -tonumber(ARGV[i + 1]), ARGV[i])
    marked = marked + 1
  end
end
return marked
