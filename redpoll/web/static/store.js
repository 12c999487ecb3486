// One state per status and per account. Every copy of a status on screen (in
// a timeline, as a boost's original, in a notification, a thread, a
// conversation) renders the one record kept here, and every place an
// account's counts show reads the one account record: an answer of the
// server (a favourite's, a boost's, a follow's) is put here once and each
// element watching that id repaints, with nothing fetched again.
//
// A status from the streaming API is rendered for everyone, not for this
// viewer: where the record is known already, its counts and the viewer's
// own state (favourited, boosted, bookmarked) are kept, the rest taken.

const statuses = new Map();  // id -> the status record
const accounts = new Map();  // id -> the account record
const watchers = { status: new Map(), account: new Map() };  // id -> Set<WeakRef<Element>>
const paints = new WeakMap();  // element -> [paint()]

const OWN = ['favourited', 'reblogged', 'bookmarked', 'pinned', 'muted',
  'favourites_count', 'reblogs_count', 'replies_count'];
const KEEP = 4000;  // records beyond this, with nothing on screen watching, are dropped

function notify(kind, id) {
  const set = watchers[kind].get(String(id));
  if (!set) return;
  for (const ref of [...set]) {
    const el = ref.deref();
    if (!el) { set.delete(ref); continue; }
    for (const paint of paints.get(el) || []) paint();
  }
  if (!set.size) watchers[kind].delete(String(id));
}

function watch(kind, id, el, paint) {
  const key = String(id);
  let set = watchers[kind].get(key);
  if (!set) watchers[kind].set(key, set = new Set());
  if (!paints.has(el)) { paints.set(el, []); set.add(new WeakRef(el)); }
  paints.get(el).push(paint);
}

function trim(map, kind) {
  if (map.size <= KEEP) return;
  for (const id of map.keys()) {
    if (map.size <= KEEP * 0.75) break;
    if (!watchers[kind].has(id)) map.delete(id);
  }
}

// The record of status `s` (and of its boosted original), merged with what
// is known; `streamed`: it came from the streaming API (see above).
export function putStatus(s, { streamed = false } = {}) {
  if (!s || typeof s !== 'object' || !s.id) return s;
  const id = String(s.id);
  if (s.reblog) s.reblog = putStatus(s.reblog, { streamed });
  const known = statuses.get(id);
  if (!known) {
    statuses.set(id, s);
    trim(statuses, 'status');
    return s;
  }
  if (known === s) return known;
  const incoming = { ...s };
  if (streamed) for (const k of OWN) if (k in known) delete incoming[k];
  Object.assign(known, incoming);
  notify('status', id);
  return known;
}

export function getStatus(id) { return statuses.get(String(id)) || null; }

// Change the record of status `id` (a patch object) and repaint every copy.
export function patchStatus(id, patch) {
  const known = statuses.get(String(id));
  if (!known) return null;
  Object.assign(known, patch);
  notify('status', id);
  return known;
}

// `paint` runs whenever status `id` changes, while `el` lives.
export function watchStatus(id, el, paint) { watch('status', id, el, paint); }

export function putAccount(a) {
  if (!a || typeof a !== 'object' || !a.id) return a;
  const id = String(a.id);
  const known = accounts.get(id);
  if (!known) { accounts.set(id, a); trim(accounts, 'account'); return a; }
  if (known !== a) { Object.assign(known, a); notify('account', id); }
  return known;
}

export function getAccount(id) { return accounts.get(String(id)) || null; }

// Change account `id` by `change(record)` (it may be unknown: then nothing).
export function patchAccount(id, change) {
  const known = accounts.get(String(id));
  if (!known) return null;
  change(known);
  notify('account', id);
  return known;
}

export function watchAccount(id, el, paint) { watch('account', id, el, paint); }

// A streaming event's payload with its statuses made the records.
export function streamed(event, payload) {
  if (!payload || typeof payload !== 'object') return payload;
  const opts = { streamed: true };
  if (event === 'update' || event === 'status.update') return putStatus(payload, opts);
  if (event === 'notification' && payload.status) payload.status = putStatus(payload.status, opts);
  if (event === 'conversation' && payload.last_status) payload.last_status = putStatus(payload.last_status, opts);
  return payload;
}
