// The service worker, served at /sw.js (the whole site its scope): keeps
// the app's shell for an offline start, shows the notifications the server
// pushes (Web Push: the payload, decrypted by the browser, is Mastodon's:
// title, body, icon, notification_type and _id) and opens the notifications
// page when one is clicked.
//
// The shell: the document of a page (network first, the last one kept under
// SHELL for when the network is gone) and the versioned files under /assets/
// (cache first: a version's file never changes). Installing keeps the shell
// and the files it names (the browser's HTTP cache holds them already, so
// this costs the wire nothing); a new version's shell drops the old files.
// The API is never answered from here: offline, the app says so (app.js).
const CACHE = 'redpoll-shell';
const SHELL = '/__shell';
// the server's own pages and files, never the app's shell: left to the network
const NOT_APP = /^\/(api|oauth|auth|system|users|actor|inbox|nodeinfo|\.well-known|avatars|headers|health|ready|metrics|openapi\.json|thumbnail\.png)(\/|$)/;

function assetsOf(html) {
  return [...new Set([...html.matchAll(/(?:src|href)='(\/assets\/[^']+)'/g)].map((m) => m[1]))];
}

async function keepShell(response) {
  const cache = await caches.open(CACHE);
  const html = await response.clone().text();
  const wanted = assetsOf(html);
  if (!wanted.some((u) => u.endsWith('/app.js'))) return;  // not the app's shell (a sign-in form, say)
  await cache.put(SHELL, response.clone());
  const version = wanted.length ? wanted[0].split('/')[2] : null;
  if (!version) return;
  for (const req of await cache.keys()) {  // another version's files go
    const path = new URL(req.url).pathname;
    if (path.startsWith('/assets/') && path.split('/')[2] !== version) await cache.delete(req);
  }
  const missing = [];
  for (const url of wanted) if (!(await cache.match(url))) missing.push(url);
  await cache.addAll(missing);
}

self.addEventListener('install', (event) => {
  self.skipWaiting();
  event.waitUntil(fetch('/', { credentials: 'same-origin' }).then((r) => (r.ok ? keepShell(r) : null)).catch(() => {}));
});
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET') return;
  const url = new URL(req.url);
  if (url.origin !== self.location.origin) return;
  if (req.mode === 'navigate' && !NOT_APP.test(url.pathname)) {
    event.respondWith((async () => {
      try {
        const answer = await fetch(req);
        if (answer.ok && (answer.headers.get('content-type') || '').startsWith('text/html')) {
          event.waitUntil(keepShell(answer.clone()).catch(() => {}));
        }
        return answer;
      } catch (err) {
        const kept = await caches.match(SHELL);
        if (kept) return kept;
        throw err;
      }
    })());
  } else if (url.pathname.startsWith('/assets/')) {
    event.respondWith((async () => {
      const cache = await caches.open(CACHE);
      const kept = await cache.match(req);
      if (kept) return kept;
      const answer = await fetch(req);
      if (answer.ok) event.waitUntil(cache.put(req, answer.clone()));
      return answer;
    })());
  }
});

self.addEventListener('push', (event) => {
  let data = {};
  try { data = event.data ? event.data.json() : {}; } catch { data = { body: event.data ? event.data.text() : '' }; }
  const options = { body: data.body || '', data: { type: data.notification_type || '' } };
  if (data.icon) options.icon = data.icon;
  // one notification shown per notification, however often it is pushed
  if (data.notification_id) options.tag = `redpoll-${data.notification_id}`;
  event.waitUntil(self.registration.showNotification(data.title || 'Redpoll', options));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  event.waitUntil((async () => {
    const open = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    for (const client of open) {
      if ('focus' in client) {
        await client.focus();
        if ('navigate' in client) await client.navigate('/notifications');
        return;
      }
    }
    await self.clients.openWindow('/notifications');
  })());
});
