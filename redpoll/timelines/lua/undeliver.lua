-- undeliver: take one status id out of many timelines (deleted statuses).
-- Idempotent: removing an absent id is a no-op.
-- KEYS: timeline lists, all in one hash slot
-- ARGV[1]: status id
-- returns: number of timelines that held the id
local removed = 0
for _, key in ipairs(KEYS) do
  removed = removed + redis.call('LREM', key, 0, ARGV[1])
end
return removed
