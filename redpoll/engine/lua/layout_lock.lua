-- layout_lock: take, renew or release the lock of the process that migrates
-- the database (redpoll.engine.migrate): one process at a time; a holder
-- that died loses it when its time to live runs out.
-- KEYS[1]: the lock keys.LAYOUT_LOCK (string "<token> <host> <pid>", with a TTL)
-- ARGV[1]: 'take', 'renew' or 'release'    ARGV[2]: "<token> <host> <pid>"
-- ARGV[3]: (optional: release leaves it off) time to live, ms
-- returns: 1 if this caller holds it now (take, renew) or let it go
-- (release); 0 if another holds it (or, for renew, nobody: it expired)
local mode, who = ARGV[1], ARGV[2]
local held = redis.call('GET', KEYS[1])
if mode == 'take' then
  if held and held ~= who then return 0 end
  redis.call('SET', KEYS[1], who, 'PX', ARGV[3])
  return 1
end
if held ~= who then return 0 end
if mode == 'renew' then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
else
  redis.call('DEL', KEYS[1])
end
return 1
