// Settings > Browser notifications: a toggle that asks the browser's
// permission, registers the service worker (/sw.js), subscribes to push with
// the server's VAPID key (the instance's configuration.vapid.public_key) and
// sends the subscription to POST /api/v1/push/subscription (Mastodon's Web
// Push API, RFC 8291 "standard" encryption); off, it unsubscribes both sides.
import { api } from './api.js';
import { has } from './features.js';
import { h, toast, errorText } from './ui.js';

const ALERTS = ['mention', 'status', 'reblog', 'follow', 'follow_request', 'favourite', 'poll', 'update', 'quote', 'quoted_update', 'admin.sign_up', 'admin.report'];
const PATH = '/api/v1/push/subscription';

export function pushSupported() {
  return 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
}

function keyBytes(base64url) {
  const text = base64url.replace(/-/g, '+').replace(/_/g, '/');
  const raw = atob(text + '='.repeat((4 - (text.length % 4)) % 4));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

async function worker() {
  const reg = await navigator.serviceWorker.register('/sw.js', { scope: '/' });
  await navigator.serviceWorker.ready;
  return reg;
}

export async function enablePush() {
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') throw new Error('This browser blocks notifications from this site');
  const reg = await worker();
  const instance = await api('/api/v2/instance');
  const key = instance.configuration?.vapid?.public_key;
  if (!key) throw new Error('This server does not send push notifications');
  let sub = await reg.pushManager.getSubscription();
  if (!sub) sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key) });
  const { endpoint, keys } = sub.toJSON();
  return api(PATH, { method: 'POST', body: {
    subscription: { endpoint, keys: { p256dh: keys.p256dh, auth: keys.auth }, standard: true },
    data: { alerts: Object.fromEntries(ALERTS.map((a) => [a, true])), policy: 'all' } } });
}

export async function disablePush() {
  const reg = await navigator.serviceWorker.getRegistration('/');
  const sub = reg && await reg.pushManager.getSubscription();
  if (sub) await sub.unsubscribe();
  await api(PATH, { method: 'DELETE' });
}

export function pushSection() {
  if (!has('POST', PATH)) return [];
  const toggle = h('input', { type: 'checkbox', name: 'push' });
  const note = h('p', { class: 'hint', role: 'status' });
  const supported = pushSupported();
  toggle.disabled = !supported;
  if (!supported) note.textContent = 'This browser cannot show notifications from websites.';
  else {
    // on when this browser's subscription is the one the server holds
    // (the server is asked only when this browser has a subscription: none is a 404)
    navigator.serviceWorker.getRegistration('/').then(async (reg) => {
      const sub = reg && Notification.permission === 'granted' && await reg.pushManager.getSubscription();
      const held = sub ? await api(PATH).catch(() => null) : null;
      toggle.checked = !!(held && held.endpoint === sub.endpoint);
    }).catch(() => {});
  }
  toggle.addEventListener('change', async () => {
    toggle.disabled = true;
    try {
      if (toggle.checked) {
        await enablePush();
        toast('Browser notifications on');
      } else {
        await disablePush();
        toast('Browser notifications off');
      }
    } catch (err) {
      toggle.checked = !toggle.checked;
      toast(errorText(err), 'error');
    } finally { toggle.disabled = false; }
  });
  return [h('h2', {}, 'Browser notifications'),
    h('label', { class: 'check' }, toggle, ' Alert me in this browser, even when Redpoll is closed'), note];
}
