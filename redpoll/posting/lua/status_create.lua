-- status_create: write a new status's hash, once. Run by the post journal's
-- first step (posting.py), in the posting call and again by a worker that
-- replays the journal after a crash: idempotent, and it never brings back a
-- status deleted meanwhile (the delete leaves a tombstone hash, delete_mark).
-- KEYS[1]: status hash st:{sid}
-- ARGV: field/value pairs of the status
-- returns: 1 written now, 0 already there (a replay), -1 deleted (tombstone)
local call = redis.call
if call('EXISTS', KEYS[1]) == 1 then
  if call('HEXISTS', KEYS[1], 'deleted') == 1 then return -1 end
  return 0
end
call('HSET', KEYS[1], unpack(ARGV))
return 1
