// The Mastodon client API on this origin: fetch with the session's token,
// errors as ApiError, pages with their Link-header cursors.

const SESSION = 'redpoll.session';

export const session = {
  get() {
    try { return JSON.parse(localStorage.getItem(SESSION)); } catch { return null; }
  },
  set(value) { localStorage.setItem(SESSION, JSON.stringify(value)); },
  clear() { localStorage.removeItem(SESSION); },
  token() { return this.get()?.token || null; },
  me() { return this.get()?.me || null; },
};

export const bus = new EventTarget();
export function emit(name, detail) { bus.dispatchEvent(new CustomEvent(name, { detail })); }

export class ApiError extends Error {
  // retryAt: when a refused request (429, 503) may be tried again, in ms, from
  // Retry-After (seconds) or Mastodon's X-RateLimit-Reset (an ISO time)
  constructor(status, body, retryAt = null) {
    const details = body && body.details;
    let message = (body && (body.error_description || body.error)) || `HTTP ${status}`;
    if (details) {
      const first = Object.values(details)[0];
      if (first && first[0] && first[0].description) message = first[0].description;
    }
    super(message);
    this.status = status;
    this.body = body;
    this.retryAt = retryAt;
  }
}

function urlFor(path, query) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query || {})) {
    if (v === null || v === undefined || v === '') continue;
    if (Array.isArray(v)) v.forEach((x) => url.searchParams.append(k + '[]', x));
    else url.searchParams.set(k, v);
  }
  return url;
}

// Answers asked for early (early.js, before the rest of the app's modules
// arrive): what fetch() promised, by URL and token, taken once by the first
// request() for the same URL and token, and dropped after EARLY_KEEP_MS.
const early = new Map();
const EARLY_KEEP_MS = 10000;
const earlyKey = (url, token) => String(url) + ' ' + (token || '');
const fetchOptions = (method, headers, body) => ({ method, headers, body,
  credentials: 'omit', cache: 'no-store', redirect: 'error' });

export function prefetch(path, query, { token } = {}) {
  const t = token === undefined ? session.token() : token;
  const url = urlFor(path, query);
  const key = earlyKey(url, t);
  const headers = { Accept: 'application/json' };
  if (t) headers.Authorization = 'Bearer ' + t;
  const answer = fetch(url, fetchOptions('GET', headers));
  answer.catch(() => {});  // a failure is the taker's to see (it asks again)
  early.set(key, answer);
  setTimeout(() => { if (early.get(key) === answer) early.delete(key); }, EARLY_KEEP_MS);
}

// One request. `body` is sent as JSON (a FormData as multipart/form-data),
// `form` as application/x-www-form-urlencoded.
export async function request(path, { method = 'GET', query, body, form, token, headers } = {}) {
  const h = { Accept: 'application/json', ...(headers || {}) };
  const t = token === undefined ? session.token() : token;
  if (t) h.Authorization = 'Bearer ' + t;
  let payload;
  if (form) payload = new URLSearchParams(Object.entries(form).filter(([, v]) => v !== undefined && v !== null));
  else if (body instanceof FormData) payload = body;
  else if (body !== undefined) { h['Content-Type'] = 'application/json'; payload = JSON.stringify(body); }
  let res;
  const url = urlFor(path, query);
  const asked = method === 'GET' && !headers ? early.get(earlyKey(url, t)) : undefined;
  if (asked) {
    early.delete(earlyKey(url, t));
    try { res = await asked; } catch { res = undefined; }
  }
  if (!res) {
    try {
      res = await fetch(url, fetchOptions(method, h, payload));
    } catch {
      throw new ApiError(0, { error: 'The server cannot be reached' });
    }
  }
  const text = await res.text();
  let data = null;
  if (text) { try { data = JSON.parse(text); } catch { data = { error: text.slice(0, 200) }; } }
  if (res.status === 401 && t && t === session.token()) emit('unauthorized');
  if (!res.ok) throw new ApiError(res.status, data, retryAt(res));
  if (method === 'POST' && data && data.id && MADE_HERE.test(String(path))) {
    madeHere.add(String(data.id));
    emit('made', String(data.id));  // the stream may have brought it first
  }
  return { data, link: parseLink(res.headers.get('Link')) };
}

function retryAt(res) {
  if (res.status !== 429 && res.status !== 503) return null;
  const after = Number(res.headers.get('Retry-After'));
  if (Number.isFinite(after) && after > 0) return Date.now() + after * 1000;
  const reset = Date.parse(res.headers.get('X-RateLimit-Reset') || '');
  return Number.isFinite(reset) ? reset : null;
}

// The statuses this page made (a post, a reply, a boost): arriving again
// from the stream, they are no news to the reader (feed.js)
const MADE_HERE = /^\/api\/v1\/statuses(\/\d+\/reblog)?$/;
export const madeHere = new Set();

export async function api(path, options) { return (await request(path, options)).data; }

// Link: <url>; rel="next", <url>; rel="prev"  ->  {next: '/path?query', prev: ...}
export function parseLink(header) {
  const out = {};
  if (!header) return out;
  for (const part of header.split(',')) {
    const m = part.match(/<([^>]+)>\s*;\s*rel="?(\w+)"?/);
    if (!m) continue;
    try {
      const url = new URL(m[1], location.origin);
      if (url.origin === location.origin) out[m[2]] = url.pathname + url.search;
    } catch { /* ignore a malformed link */ }
  }
  return out;
}

let instance = null;
export async function instanceInfo() {
  if (!instance) instance = api('/api/v2/instance', { token: null }).catch((e) => { instance = null; throw e; });
  return instance;
}
