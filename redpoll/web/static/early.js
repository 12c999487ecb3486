// Run ahead of the app (its own module in the shell, before app.js, needing
// only api.js): the answers the first screen waits on are asked for at once
// and side by side, while the rest of the app's modules still arrive; the
// app's first requests for them take these answers (api.js prefetch).
import { prefetch, session } from './api.js';

prefetch('/api/v1/redpoll/features', undefined, { token: null });
if (session.token()) {
  prefetch('/api/v1/accounts/verify_credentials');
  if (location.pathname === '/' || location.pathname === '/home') {
    prefetch('/api/v1/timelines/home', { limit: 20 });  // what the home feed asks first
  }
}
