-- import_step: advance a CSV import's cursor after a step of its job, only
-- if the cursor is still where that step began (a step done twice counts once).
-- KEYS[1]: the import's record hash    KEYS[2]: the set of what it found
-- KEYS[3]: the import's rows list    KEYS[4]: what its prune undoes (a list)
--   (the three dropped once it is finished)
-- ARGV[1]: the row position the step began at    ARGV[2]: the position after it
-- ARGV[3]: rows the step imported    ARGV[4]: the state after it
--   ('in_progress' | 'pruning' | 'finished')    ARGV[5]: now (ms)
-- ARGV[6]: the prune cursor the step began at ('' before the prune)
-- ARGV[7]: the prune cursor after it ('' outside the prune)
-- ARGV[8..]: (optional) what the step found, added to KEYS[2]
-- returns: 1 if advanced, 0 if another run of the step had already
if redis.call('HGET', KEYS[1], 'pos') ~= ARGV[1] then return 0 end
if (redis.call('HGET', KEYS[1], 'cursor') or '') ~= ARGV[6] then return 0 end
redis.call('HSET', KEYS[1], 'pos', ARGV[2], 'processed', ARGV[2], 'state', ARGV[4],
  'cursor', ARGV[7])
redis.call('HINCRBY', KEYS[1], 'imported', ARGV[3])
if #ARGV > 7 then redis.call('SADD', KEYS[2], unpack(ARGV, 8)) end
if ARGV[4] == 'finished' then
  redis.call('HSET', KEYS[1], 'finished', ARGV[5])
  redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
end
return 1
