-- media_drop: turn upload records into tombstones (redpoll/media/uploads.py)
-- and name their files for deletion. A tombstone keeps the file names for
-- ARGV[3] seconds, so a replayed step (a status delete's journal, a sweep
-- cut short) gets them again and deletes them again; files are deleted
-- after this step, never before, and deleting one twice is harmless.
-- KEYS[1..n]: records of one owner (one slot)
-- ARGV[1]: which records go: 'status' those attached to status ARGV[2];
--          'stale' those never attached nor held for a scheduled status
--          (media_hold.lua), uploaded before ARGV[2] (ms);
--          'void' one whose upload was given up (not ready: a missing one
--          gets a tombstone too, which refuses a late media_create);
--          'any' every one (an account's purge)
-- ARGV[3]: seconds a tombstone is kept
-- ARGV[4]: (optional, 'void') why the upload was given up, kept on the
--          tombstone for its owner to read (media_update.lua)
-- returns: the 'files' value (space-separated names) of every record dropped
--          now or found dropped before
local mode, arg, out = ARGV[1], ARGV[2], {}
for _, key in ipairs(KEYS) do
  local state, sid, at, files, sched = unpack(redis.call('HMGET', key, 'state', 'sid', 'at',
                                                        'files', 'sched'))
  local drop = false
  if state == 'gone' then
    if files and files ~= '' then out[#out + 1] = files end
  elseif mode == 'status' then
    drop = state ~= false and sid == arg
  elseif mode == 'stale' then
    drop = state ~= false and not sid and not sched and tonumber(at or '0') < tonumber(arg)
  elseif mode == 'void' then
    drop = state ~= 'ready'
  elseif mode == 'any' then
    drop = state ~= false
  end
  if drop then
    redis.call('DEL', key)
    redis.call('HSET', key, 'state', 'gone', 'files', files or '')
    if ARGV[4] and ARGV[4] ~= '' then redis.call('HSET', key, 'err', ARGV[4]) end
    redis.call('EXPIRE', key, ARGV[3])
    if files and files ~= '' then out[#out + 1] = files end
  end
end
return out
