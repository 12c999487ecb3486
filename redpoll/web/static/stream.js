// Mastodon streaming over one WebSocket (GET /api/v1/streaming): the token
// travels as the subprotocol (browsers cannot set headers on a WebSocket),
// several streams are multiplexed with subscribe/unsubscribe messages, and a
// dropped connection comes back with a growing delay.
import { session, emit } from './api.js';
import { streamed } from './store.js';

let socket = null;
let wanted = new Map();   // key -> {stream, tag?, list?}
let retry = 1000;
let timer = null;
let stopped = true;

function key(sub) { return [sub.stream, sub.tag || '', sub.list || ''].join('\u0000'); }

function send(message) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

// Whether the live updates are cut off (the socket closed, the browser
// offline): 'stream:lost' once, then 'stream:back' when a socket opens again.
let lost = false;
function setLost(now) {
  if (lost === now) return;
  lost = now;
  emit(now ? 'stream:lost' : 'stream:back');
}

function connect() {
  const token = session.token();
  if (!token || stopped) return;
  if (navigator.onLine === false) { setLost(true); return; }  // 'online' connects again
  const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/api/v1/streaming';
  const ws = new WebSocket(url, token);
  socket = ws;
  ws.addEventListener('open', () => {
    retry = 1000;
    for (const sub of wanted.values()) send({ type: 'subscribe', ...sub });
    emit('stream:open');
    setLost(false);
  });
  ws.addEventListener('message', (e) => {
    let msg;
    try { msg = JSON.parse(e.data); } catch { return; }
    if (!msg || msg.error || !msg.event) return;
    let payload = msg.payload;
    if (typeof payload === 'string' && msg.event !== 'delete') {
      try { payload = JSON.parse(payload); } catch { return; }
    }
    emit('stream', { stream: msg.stream || [], event: msg.event, payload: streamed(msg.event, payload) });
  });
  ws.addEventListener('close', () => {
    if (socket !== ws) return;
    socket = null;
    if (stopped) return;
    setLost(true);
    timer = setTimeout(connect, retry);
    retry = Math.min(retry * 2, 30000);
  });
}

export function startStreaming() {
  if (!stopped) return;
  stopped = false;
  wanted = new Map([[key({ stream: 'user' }), { stream: 'user' }]]);
  connect();
}

export function stopStreaming() {
  stopped = true;
  clearTimeout(timer);
  if (socket) { const ws = socket; socket = null; ws.close(); }
  setLost(false);
}

// the browser knows before the socket does: offline closes it at once, and
// online connects again without waiting out the growing delay
window.addEventListener('offline', () => {
  if (stopped) return;
  clearTimeout(timer);
  if (socket) { const ws = socket; socket = null; ws.close(); }
  setLost(true);
});
window.addEventListener('online', () => {
  if (stopped || socket) return;
  clearTimeout(timer);
  retry = 1000;
  connect();
});

// Subscribe while `signal` is not aborted.
export function subscribe(sub, signal) {
  const k = key(sub);
  if (wanted.has(k)) return;
  wanted.set(k, sub);
  send({ type: 'subscribe', ...sub });
  signal.addEventListener('abort', () => {
    wanted.delete(k);
    send({ type: 'unsubscribe', ...sub });
  });
}

// An open user stream re-reads whom it follows only now and then
// (limits.MEMBERSHIP_REFRESH_S on the server): after a follow or unfollow the
// app subscribes afresh, so the new author's next post arrives at once.
export function resubscribe(sub) {
  if (!wanted.has(key(sub))) return;
  send({ type: 'unsubscribe', ...sub });
  send({ type: 'subscribe', ...sub });
}

// Does a message's stream label match a subscription?
export function matches(label, sub) {
  if (!label.length || label[0] !== sub.stream) return false;
  if (sub.tag) return (label[1] || '').toLowerCase() === sub.tag.toLowerCase();
  if (sub.list) return String(label[1]) === String(sub.list);
  return true;
}
