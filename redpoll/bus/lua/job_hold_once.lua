-- job_hold_once: job_hold.lua together with an idempotency claim, in one
-- step: the key (Mastodon's Idempotency-Key, per user) is claimed by the very
-- step that journals the post, so a retry after a crash at any point finds
-- either no claim and no journal (and posts), or both (and gets that post).
-- KEYS[1]: held job stream (same slot as the shard's job stream)
-- KEYS[2]: the claim idem:{shard}:<uid>:<digest> (same slot)
-- ARGV[1]: consumer group
-- ARGV[2]: holder (consumer name)
-- ARGV[3]: the claim's value with '%s' where the entry id goes
-- ARGV[4]: seconds the claim is kept
-- ARGV[5..]: field/value pairs of the job
-- returns: {1, entry id} held now, or {0, value of the existing claim}
local call = redis.call
local held = call('GET', KEYS[2])
if held then return {0, held} end
if call('EXISTS', KEYS[1]) == 0 then
  call('XGROUP', 'CREATE', KEYS[1], ARGV[1], '0', 'MKSTREAM')
end
local id = call('XADD', KEYS[1], '*', unpack(ARGV, 5))
call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, id, 'FORCE', 'JUSTID')
call('SET', KEYS[2], string.format(ARGV[3], id), 'EX', ARGV[4])
return {1, id}
