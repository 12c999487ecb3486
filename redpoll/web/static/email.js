// Settings: one's e-mail address (Redpoll's /api/v1/redpoll/email: Mastodon
// keeps this in its web settings, not its client API). Changing it takes the
// current password; the new address is sent a link, and the change takes
// effect only once that link is followed (the old address is told).
import { api } from './api.js';
import { has } from './features.js';
import { h, toast, errorText } from './ui.js';

export function emailSection() {
  if (!has('GET', '/api/v1/redpoll/email')) return [];
  const now = h('p', { class: 'hint', 'aria-live': 'polite' }, 'Loading…');
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'email', required: true, maxlength: '254' });
  const current = h('input', { type: 'password', name: 'current_password', autocomplete: 'current-password', required: true, maxlength: '1024' });
  const err = h('p', { class: 'error', role: 'alert' });
  const show = (state) => {
    const waiting = state.unconfirmed_email ? ` ${state.unconfirmed_email} waits for its link to be followed.` : '';
    now.textContent = `Your address: ${state.email || 'none'}.${waiting}`;
    const off = !state.enabled || !has('POST', '/api/v1/redpoll/email');
    for (const el of form.elements) el.disabled = off;
    if (!state.enabled) now.textContent += ' This server sends no e-mail, so the address cannot be changed here.';
  };
  const form = h('form', { class: 'settings-section', 'aria-labelledby': 'email-head', onsubmit: async (e) => {
    e.preventDefault();
    err.textContent = '';
    const btn = form.querySelector('button[type=submit]');
    btn.disabled = true;
    try {
      const state = await api('/api/v1/redpoll/email', { method: 'POST', form: { current_password: current.value, email: email.value } });
      form.reset();
      show(state);
      toast(`Check ${state.unconfirmed_email}: the change takes effect when you follow the link sent there`);
    } catch (e2) {
      const details = e2.body?.details || {};
      err.textContent = details.current_password ? 'The current password is not right.'
        : details.email?.[0]?.error === 'ERR_TAKEN' ? 'Another account uses this address.' : errorText(e2);
    } finally { btn.disabled = false; }
  } },
  h('h2', { id: 'email-head' }, 'E-mail address'), now,
  h('label', { class: 'field' }, h('span', {}, 'New e-mail address'), email),
  h('label', { class: 'field' }, h('span', {}, 'Password, to confirm it is you'), current),
  err, h('button', { type: 'submit', class: 'primary' }, 'Change e-mail'));
  api('/api/v1/redpoll/email').then(show).catch((e2) => { now.textContent = errorText(e2); });
  return [form];
}

// What to say when signing up or in is refused because the address awaits
// confirmation (Mastodon's 403 from verify_credentials); null for any other error.
export const UNCONFIRMED = 'Your login is missing a confirmed e-mail address';
export function confirmationText(err) {
  if (!err || err.status !== 403 || err.body?.error !== UNCONFIRMED) return null;
  return 'Almost there: follow the link just mailed to your e-mail address to confirm it, then sign in.';
}
