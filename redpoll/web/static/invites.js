// Invites (Settings → Invite people): links that let someone sign up even
// while registrations are closed or need a moderator's approval, each with
// an expiry and a number of uses; listed with their uses, and revoked
// (Redpoll's /api/v1/redpoll/invites: Mastodon keeps invites out of its client API).
import { api } from './api.js';
import { h, toast, errorText, fullDate, clear } from './ui.js';
import { heading } from './views.js';

const EXPIRES = [['1800', '30 minutes'], ['3600', '1 hour'], ['21600', '6 hours'], ['43200', '12 hours'],
  ['86400', '1 day'], ['604800', '1 week'], ['', 'Never']];
const USES = [['1', '1 use'], ['5', '5 uses'], ['10', '10 uses'], ['25', '25 uses'], ['50', '50 uses'],
  ['100', '100 uses'], ['', 'No limit']];

function select(name, label, options, value) {
  const el = h('select', { name }, ...options.map(([v, l]) => h('option', { value: v }, l)));
  el.value = value;
  return h('label', { class: 'field' }, h('span', {}, label), el);
}

function row(inv, onRevoke) {
  const uses = inv.max_uses === null ? `${inv.uses} used` : `${inv.uses} of ${inv.max_uses} used`;
  const ends = inv.expires_at ? `${inv.valid ? 'expires' : 'ended'} ${fullDate(inv.expires_at)}` : 'never expires';
  const link = h('input', { type: 'text', readonly: true, value: inv.url, 'aria-label': 'Invite link', class: 'invite-link' });
  link.addEventListener('focus', () => link.select());
  const revoke = h('button', { type: 'button', class: 'danger' }, 'Revoke');
  revoke.addEventListener('click', async () => {
    revoke.disabled = true;
    try { await api('/api/v1/redpoll/invites/' + inv.code, { method: 'DELETE' }); toast('Invite revoked'); onRevoke(); } catch (err) { toast(errorText(err), 'error'); revoke.disabled = false; }
  });
  return h('li', { class: 'invite' + (inv.valid ? '' : ' invite-ended'), 'data-code': inv.code },
    link, h('p', { class: 'hint' }, `${inv.valid ? 'Valid' : 'Not valid'} · ${uses} · ${ends}`),
    inv.valid ? revoke : null);
}

export function invitesView(ctx) {
  ctx.title('Invite people');
  const list = h('ul', { class: 'invites', 'aria-label': 'Your invites' });
  const load = async () => {
    try {
      const found = await api('/api/v1/redpoll/invites');
      clear(list);
      if (!found.length) list.append(h('li', { class: 'empty' }, 'No invites yet.'));
      for (const inv of found) list.append(row(inv, load));
    } catch (err) { list.replaceChildren(h('li', { class: 'error' }, errorText(err))); }
  };
  const err = h('p', { class: 'error', role: 'alert' });
  const form = h('form', { class: 'invite-form', onsubmit: async (e) => {
    e.preventDefault();
    err.textContent = '';
    const data = Object.fromEntries(new FormData(form));
    const btn = form.querySelector('button');
    btn.disabled = true;
    try {
      await api('/api/v1/redpoll/invites', { method: 'POST', form: {
        expires_in: data.expires_in || undefined, max_uses: data.max_uses || undefined } });
      toast('Invite made: copy its link');
      await load();
    } catch (e2) { err.textContent = errorText(e2); } finally { btn.disabled = false; }
  } },
  select('expires_in', 'Expires after', EXPIRES, '604800'),
  select('max_uses', 'Can be used', USES, '1'),
  err, h('button', { type: 'submit', class: 'primary' }, 'Make an invite link'));
  load();
  return [heading('Invite people'),
    h('p', { class: 'hint' }, 'Whoever opens an invite link may sign up here, even while sign-ups are closed or need approval.'),
    form, h('h2', {}, 'Your invites'), list, h('p', {}, h('a', { href: '/settings' }, 'Back to settings'))];
}
