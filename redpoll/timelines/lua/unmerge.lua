-- unmerge: remove a followee's (or list member's) status ids from a timeline
-- after an unfollow, unless the follow came back meanwhile. Idempotent.
-- KEYS[1]: timeline list
-- KEYS[2]: guard zset (following:{uid} or list members)
-- ARGV[1]: guard member: the ids are removed only if it is ABSENT
-- ARGV[2..]: status ids to remove
-- returns: number of ids removed, or -1 if the guard member is present again
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return -1 end
if #ARGV < 2 then return 0 end
local drop = {}
for k = 2, #ARGV do drop[ARGV[k]] = true end
local old = redis.call('LRANGE', KEYS[1], 0, -1)
local keep = {}
for _, v in ipairs(old) do
  if not drop[v] then keep[#keep + 1] = v end
end
local removed = #old - #keep
if removed > 0 then
  redis.call('DEL', KEYS[1])
  for k = 1, #keep, 500 do
    redis.call('RPUSH', KEYS[1], unpack(keep, k, math.min(k + 499, #keep)))
  end
end
return removed
