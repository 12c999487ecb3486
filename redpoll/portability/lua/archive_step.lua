-- archive_step: advance a member's archive's cursor after a step of its job,
-- only if the cursor is still where that step began (a step done twice moves
-- it once); with a size, the pack is done: the archive is ready.
-- KEYS[1]: the archive's record hash
-- ARGV[1]: the phase the step began in    ARGV[2]: its page    ARGV[3]: its cursor
-- ARGV[4]: the phase after it    ARGV[5]: the page after it    ARGV[6]: the cursor after it
-- ARGV[7]: (optional) the ZIP's size: the archive is ready    ARGV[8]: (optional) now (ms)
-- returns: 1 if advanced, 0 if another run of the step had already
if redis.call('HGET', KEYS[1], 'state') ~= 'processing' then return 0 end
if redis.call('HGET', KEYS[1], 'phase') ~= ARGV[1] then return 0 end
if redis.call('HGET', KEYS[1], 'page') ~= ARGV[2] then return 0 end
if (redis.call('HGET', KEYS[1], 'after') or '') ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[1], 'phase', ARGV[4], 'page', ARGV[5], 'after', ARGV[6])
if #ARGV > 6 then
  redis.call('HSET', KEYS[1], 'state', 'ready', 'size', ARGV[7], 'finished', ARGV[8])
end
return 1
