// The service worker, served at /sw.js (the whole site its scope): shows the
// notifications the server pushes (Web Push: the payload, decrypted by the
// browser, is Mastodon's: title, body, icon, notification_type and _id) and
// opens the notifications page when one is clicked.
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

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
