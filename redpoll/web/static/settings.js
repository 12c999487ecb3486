// Settings beyond the profile's name and bio: profile fields (up to 4
// name/value pairs, saved with the profile form), the apps and devices
// signed in to the account (/api/v1/redpoll/sessions) with Revoke for each,
// changing the password, two-factor sign-in and deleting the account
// (Redpoll's own small endpoints: Mastodon keeps these out of its client API).
import { api, session } from './api.js';
import { has } from './features.js';
import { h, toast, errorText, statusContent, fullDate } from './ui.js';

const FIELDS_MAX = 4;

// --- profile fields --------------------------------------------------------------------
// The editor inside the profile form: changes(now) gives what to send when
// a row differs from the account's (all rows: the server drops blank ones).
export function fieldsEditor(me) {
  const current = (me.source?.fields || me.fields || []).map((f) => [f.name || '', f.value || '']);
  const rows = [];
  for (let i = 0; i < FIELDS_MAX; i++) {
    const [name, value] = current[i] || ['', ''];
    const n = h('input', { name: `field-${i}-name`, 'aria-label': `Field ${i + 1} label`, placeholder: 'Label', maxlength: '255', value: name });
    const v = h('input', { name: `field-${i}-value`, 'aria-label': `Field ${i + 1} content`, placeholder: 'Content', maxlength: '255', value });
    rows.push([n, v]);
  }
  const node = h('fieldset', { class: 'profile-fields' },
    h('legend', {}, 'Profile fields'),
    h('p', { class: 'hint' }, 'Up to 4 items shown as a table on your profile: a website, pronouns, where you are…'),
    ...rows.map(([n, v]) => h('div', { class: 'field-row' }, n, v)));
  const changes = (now) => {
    const was = (now.source?.fields || now.fields || []).map((f) => [f.name || '', f.value || '']);
    const typed = rows.map(([n, v]) => [n.value.trim(), v.value.trim()]);
    const kept = typed.filter(([n, v]) => n || v);
    if (JSON.stringify(kept) === JSON.stringify(was)) return {};
    const out = {};
    typed.forEach(([n, v], i) => {
      out[`fields_attributes[${i}][name]`] = n;
      out[`fields_attributes[${i}][value]`] = v;
    });
    return out;
  };
  return { node, changes };
}

// A profile's fields as a table (name, value with its links).
export function fieldsList(account) {
  const fields = (account.fields || []).filter((f) => f.name || f.value);
  if (!fields.length) return null;
  return h('dl', { class: 'profile-fields-list', 'aria-label': 'Profile fields' },
    ...fields.flatMap((f) => [h('dt', {}, f.name), h('dd', {}, statusContent(f.value))]));
}

// --- sessions ------------------------------------------------------------------------------
const SCOPE_WORDS = { read: 'read', write: 'post and change', follow: 'follow', push: 'push notifications', profile: 'profile' };

function scopesText(scopes) {
  return [...new Set(scopes.map((s) => SCOPE_WORDS[s] || s.replace(':', ' ')))].join(', ');
}

export function sessionsSection(ctx) {
  if (!has('GET', '/api/v1/redpoll/sessions')) return [];
  const list = h('ul', { class: 'sessions', 'aria-label': 'Signed-in apps and devices' });
  const load = async () => {
    try {
      const found = await api('/api/v1/redpoll/sessions');
      if (ctx.signal.aborted) return;
      list.replaceChildren(...found.map(row));
    } catch (err) { list.replaceChildren(h('li', { class: 'error' }, errorText(err))); }
  };
  const row = (s) => {
    const when = fullDate(s.created_at);
    const btn = s.current
      ? h('button', { type: 'button', onclick: () => ctx.signOut() }, 'Sign out')
      : h('button', { type: 'button', class: 'danger', 'aria-label': `Revoke ${s.app_name}, signed in ${when}` }, 'Revoke');
    if (!s.current) {
      btn.disabled = !has('DELETE', '/api/v1/redpoll/sessions/{}');
      btn.addEventListener('click', async () => {
        btn.disabled = true;
        try {
          await api(`/api/v1/redpoll/sessions/${encodeURIComponent(s.id)}`, { method: 'DELETE' });
          toast(`${s.app_name} signed out`);
          await load();
        } catch (err) { btn.disabled = false; toast(errorText(err), 'error'); }
      });
    }
    return h('li', { class: 'session', dataset: { id: s.id } },
      h('div', {},
        h('div', { class: 'session-name' }, s.app_name, s.current ? h('span', { class: 'this' }, ' · this browser') : null),
        h('p', { class: 'session-meta' }, `Signed in ${when}`, s.website ? ` · ${s.website}` : '', ` · ${scopesText(s.scopes)}`)),
      btn);
  };
  load();
  return [h('section', { class: 'settings-section', 'aria-labelledby': 'sessions-head' },
    h('h2', { id: 'sessions-head' }, 'Apps and devices'),
    h('p', { class: 'hint' }, 'Everything signed in to your account. Revoke one to sign it out at once.'),
    list)];
}

// --- password -----------------------------------------------------------------------------
function passwordInput(label, name, autocomplete) {
  const input = h('input', { type: 'password', name, autocomplete, required: true, maxlength: '1024' });
  return [input, h('label', { class: 'field' }, h('span', {}, label), input)];
}

export function passwordSection() {
  if (!has('POST', '/api/v1/redpoll/password')) return [];
  const [current, currentField] = passwordInput('Current password', 'current_password', 'current-password');
  const [fresh, freshField] = passwordInput('New password', 'password', 'new-password');
  const [again, againField] = passwordInput('New password again', 'password_again', 'new-password');
  fresh.minLength = 8;
  const err = h('p', { class: 'error', role: 'alert' });
  const me = session.me() || {};
  const form = h('form', { class: 'settings-section', 'aria-labelledby': 'password-head', onsubmit: async (e) => {
    e.preventDefault();
    err.textContent = '';
    if (fresh.value !== again.value) { err.textContent = 'The two new passwords differ.'; again.focus(); return; }
    const btn = form.querySelector('button[type=submit]');
    btn.disabled = true;
    try {
      await api('/api/v1/redpoll/password', { method: 'POST', form: { current_password: current.value, password: fresh.value } });
      form.reset();
      toast('Password changed; your other apps and devices are signed out');
    } catch (e2) {
      err.textContent = e2.status === 422 && e2.body?.details?.current_password
        ? 'The current password is not right.' : errorText(e2);
    } finally { btn.disabled = false; }
  } },
  h('h2', { id: 'password-head' }, 'Change password'),
  // for password managers: whose password this is
  h('input', { type: 'text', name: 'username', autocomplete: 'username', value: me.acct || '', hidden: true, readonly: true, tabindex: '-1', 'aria-hidden': 'true' }),
  currentField, freshField, againField, err,
  h('button', { type: 'submit', class: 'primary' }, 'Change password'));
  return [form];
}

// --- two-factor sign-in -------------------------------------------------------------------------
// /api/v1/redpoll/two_factor: set up (the secret as a QR code and as text,
// on only once a code from the app is right, then the recovery codes shown
// once), new recovery codes (the password), removal (a code or the password).
const TFA = '/api/v1/redpoll/two_factor';

function recoveryList(codes) {
  return h('div', { class: 'tfa-codes' },
    h('p', {}, 'Your recovery codes: each signs you in once if you lose your phone. Keep them somewhere safe; they are not shown again.'),
    h('ol', { class: 'tfa-code-list', 'aria-label': 'Recovery codes' }, ...codes.map((c) => h('li', {}, h('code', {}, c)))));
}

export function twoFactorSection() {
  if (!has('GET', TFA)) return [];
  const body = h('div', { class: 'tfa-body' });
  const err = () => h('p', { class: 'error', role: 'alert' });
  const busy = async (btn, fail, call) => {
    btn.disabled = true;
    fail.textContent = '';
    try { await call(); } catch (e) { fail.textContent = e.status === 422 ? (e.body?.error || errorText(e)).replace(/^Validation failed: /, '') : errorText(e); } finally { btn.disabled = false; }
  };
  const load = async () => {
    try { show(await api(TFA)); } catch (e) { body.replaceChildren(h('p', { class: 'error' }, errorText(e))); }
  };
  const show = (st) => (st.enabled ? on(st) : off());
  const off = () => {
    const fail = err();
    const start = h('button', { type: 'button', class: 'primary' }, 'Set up two-factor authentication');
    start.disabled = !has('POST', `${TFA}/setup`);
    start.addEventListener('click', () => busy(start, fail, async () => setup(await api(`${TFA}/setup`, { method: 'POST' }))));
    body.replaceChildren(
      h('p', { class: 'hint' }, 'Off. With it on, signing in asks for a code from an authenticator app on your phone after your password.'),
      start, fail);
  };
  const setup = (s) => {
    const code = h('input', { name: 'code', autocomplete: 'one-time-code', inputmode: 'numeric', required: true, maxlength: '64', autocapitalize: 'none' });
    const fail = err();
    const cancel = h('button', { type: 'button', onclick: off }, 'Cancel');
    const form = h('form', { class: 'tfa-setup', onsubmit: (e) => {
      e.preventDefault();
      busy(form.querySelector('button[type=submit]'), fail, async () => {
        const done = await api(`${TFA}/enable`, { method: 'POST', form: { code: code.value.trim() } });
        toast('Two-factor authentication is on');
        const ok = h('button', { type: 'button', class: 'primary', onclick: load }, 'I have kept them');
        body.replaceChildren(recoveryList(done.recovery_codes), ok);
        ok.focus();
      });
    } },
    h('p', {}, 'Scan this QR code with your authenticator app, or type the key below into it; then enter the code it shows.'),
    h('img', { class: 'tfa-qr', src: s.qr_svg, alt: 'QR code of your two-factor key', width: '200', height: '200' }),
    h('p', {}, 'Key: ', h('code', { class: 'tfa-secret' }, s.secret)),
    h('label', { class: 'field' }, h('span', {}, 'Code from the app'), code),
    fail,
    h('div', { class: 'auth-buttons' }, h('button', { type: 'submit', class: 'primary' }, 'Enable'), cancel));
    body.replaceChildren(form);
    code.focus();
  };
  const on = (st) => {
    const proof = h('input', { type: 'password', name: 'two_factor_proof', autocomplete: 'one-time-code', required: true, maxlength: '1024' });
    const failOff = err();
    const remove = h('form', { class: 'tfa-remove', onsubmit: (e) => {
      e.preventDefault();
      busy(remove.querySelector('button[type=submit]'), failOff, async () => {
        const typed = proof.value.trim();
        // six digits are a code (a password is at least 8 characters)
        const form = /^\d{6}$/.test(typed) ? { code: typed } : { password: proof.value };
        await api(`${TFA}/disable`, { method: 'POST', form });
        toast('Two-factor authentication is off');
        await load();
      });
    } },
    h('label', { class: 'field' }, h('span', {}, 'A code from your app, or your password'), proof),
    failOff,
    h('button', { type: 'submit', class: 'danger' }, 'Turn off two-factor authentication'));
    const password = h('input', { type: 'password', name: 'recovery_password', autocomplete: 'current-password', required: true, maxlength: '1024' });
    const failCodes = err();
    const codesOut = h('div', {});
    const fresh = h('form', { class: 'tfa-recovery', onsubmit: (e) => {
      e.preventDefault();
      busy(fresh.querySelector('button[type=submit]'), failCodes, async () => {
        const done = await api(`${TFA}/recovery_codes`, { method: 'POST', form: { password: password.value } });
        password.value = '';
        codesOut.replaceChildren(recoveryList(done.recovery_codes));
      });
    } },
    h('label', { class: 'field' }, h('span', {}, 'Your password'), password),
    failCodes,
    h('button', { type: 'submit' }, 'New recovery codes'), codesOut);
    body.replaceChildren(
      h('p', { class: 'tfa-on' }, `On · ${st.recovery_codes_left} recovery code${st.recovery_codes_left === 1 ? '' : 's'} left`),
      remove,
      h('h3', {}, 'Recovery codes'),
      h('p', { class: 'hint' }, 'New codes replace the old ones.'),
      fresh);
  };
  load();
  return [h('section', { class: 'settings-section two-factor', 'aria-labelledby': 'two-factor-head' },
    h('h2', { id: 'two-factor-head' }, 'Two-factor authentication'), body)];
}

// --- deleting the account ---------------------------------------------------------------------
export function deleteSection(ctx) {
  if (!has('POST', '/api/v1/redpoll/delete_account')) return [];
  const [password, passwordField] = passwordInput('Your password', 'password', 'current-password');
  const err = h('p', { class: 'error', role: 'alert' });
  const cancel = h('button', { type: 'button' }, 'Cancel');
  const confirm = h('button', { type: 'submit', class: 'danger solid' }, 'Delete for good');
  const dialog = h('dialog', { class: 'dialog', 'aria-labelledby': 'delete-head' },
    h('form', { method: 'dialog', onsubmit: async (e) => {
      e.preventDefault();
      err.textContent = '';
      confirm.disabled = true;
      try {
        await api('/api/v1/redpoll/delete_account', { method: 'POST', form: { password: password.value } });
        dialog.close();
        session.clear();  // every token of the account is gone already
        await ctx.signOut();
        toast('Your account was deleted');
      } catch (e2) {
        err.textContent = e2.status === 422 ? 'The password is not right.' : errorText(e2);
        confirm.disabled = false;
        password.focus();
      }
    } },
    h('h2', { id: 'delete-head' }, 'Delete your account?'),
    h('p', {}, 'Your posts, follows, favourites and boosts go, and your apps and devices are signed out. This cannot be undone.'),
    passwordField, err,
    h('div', { class: 'dialog-buttons' }, cancel, confirm)));
  cancel.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => { password.value = ''; err.textContent = ''; open.focus(); });
  const open = h('button', { type: 'button', class: 'danger' }, 'Delete account…');
  open.addEventListener('click', () => { dialog.showModal(); password.focus(); });
  return [h('section', { class: 'settings-section danger-zone', 'aria-labelledby': 'delete-account-head' },
    h('h2', { id: 'delete-account-head' }, 'Delete account'),
    h('p', { class: 'hint' }, 'Removes your account and everything in it from this server.'),
    open, dialog)];
}

// Settings > Export: Mastodon's CSV files of one's follows, lists, blocks,
// mutes, blocked domains and bookmarks (/api/v1/redpoll/exports/*.csv),
// fetched with the session's token and saved as the file the server names.
const EXPORTS = [
  ['follows', 'Follows', 'following_accounts.csv'],
  ['lists', 'Lists', 'lists.csv'],
  ['blocks', 'Blocked accounts', 'blocked_accounts.csv'],
  ['mutes', 'Muted accounts', 'muted_accounts.csv'],
  ['domain_blocks', 'Blocked domains', 'blocked_domains.csv'],
  ['bookmarks', 'Bookmarks', 'bookmarks.csv'],
];

export function exportSection() {
  const offered = EXPORTS.filter(([kind]) => has('GET', `/api/v1/redpoll/exports/${kind}.csv`));
  if (!offered.length) return [];
  const err = h('p', { class: 'error', role: 'alert' });
  const save = async (btn, kind, file) => {
    err.textContent = '';
    btn.disabled = true;
    try {
      const res = await fetch(`/api/v1/redpoll/exports/${kind}.csv`, {
        headers: { Authorization: 'Bearer ' + session.token() }, credentials: 'omit', cache: 'no-store' });
      if (!res.ok) throw new Error(`The export failed (${res.status})`);
      const url = URL.createObjectURL(await res.blob());
      const a = h('a', { href: url, download: file, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
      toast(`Saved ${file}`);
    } catch (e) {
      err.textContent = e instanceof TypeError ? 'The server cannot be reached' : (e.message || errorText(e));
    } finally { btn.disabled = false; }
  };
  const buttons = offered.map(([kind, label, file]) => {
    const btn = h('button', { type: 'button', 'data-export': kind }, label);
    btn.addEventListener('click', () => save(btn, kind, file));
    return h('li', {}, btn);
  });
  return [h('section', { class: 'settings-section', 'aria-labelledby': 'export-head' },
    h('h2', { id: 'export-head' }, 'Export your data'),
    h('p', { class: 'hint' }, 'CSV files as Mastodon makes them, to import on another server.'),
    h('ul', { class: 'export-list' }, ...buttons), err)];
}

// Settings > Import: one of Mastodon's CSV files (the exports above, from
// here or another server) imported by the server in the background
// (/api/v1/redpoll/imports); the list says how far each import is, read
// again every few seconds while one is under way.
const IMPORT_KINDS = [
  ['follows', 'Follows'],
  ['lists', 'Lists'],
  ['blocks', 'Blocked accounts'],
  ['mutes', 'Muted accounts'],
  ['domain_blocks', 'Blocked domains'],
  ['bookmarks', 'Bookmarks'],
];
const IMPORT_STATES = { scheduled: 'waiting', in_progress: 'under way', pruning: 'removing the rest', finished: 'done' };
const IMPORT_POLL_MS = 2000;

export function importSection() {
  if (!has('POST', '/api/v1/redpoll/imports')) return [];
  const err = h('p', { class: 'error', role: 'alert' });
  const kind = h('select', { id: 'import-type', name: 'type' },
    ...IMPORT_KINDS.map(([value, label]) => h('option', { value }, label)));
  const file = h('input', { id: 'import-file', type: 'file', name: 'data', accept: '.csv,text/csv', required: true });
  const merge = h('input', { type: 'radio', name: 'mode', value: 'merge', id: 'import-merge', checked: true });
  const overwrite = h('input', { type: 'radio', name: 'mode', value: 'overwrite', id: 'import-overwrite' });
  const submit = h('button', { type: 'submit' }, 'Import');
  const list = h('ul', { class: 'import-list', 'aria-live': 'polite', 'aria-label': 'Your imports' });
  let timer = null;
  const label = (k) => (IMPORT_KINDS.find(([v]) => v === k) || [k, k])[1];
  const show = async () => {
    clearTimeout(timer);
    let found = [];
    try { found = await api('/api/v1/redpoll/imports'); } catch { return; }
    list.replaceChildren(...found.map((i) => h('li', { 'data-import': i.id, 'data-state': i.state },
      `${label(i.type)} (${i.mode === 'overwrite' ? 'overwrite' : 'merge'}), ${IMPORT_STATES[i.state] || i.state}: `
      + `${i.processed_items} of ${i.total_items} read, ${i.imported_items} imported`
      + (i.failed_items ? `, ${i.failed_items} not found or refused` : ''))));
    if (found.some((i) => i.state !== 'finished') && list.isConnected) timer = setTimeout(show, IMPORT_POLL_MS);
  };
  const form = h('form', { class: 'import-form', 'aria-labelledby': 'import-head' },
    h('label', { for: 'import-type' }, 'What the file holds'), kind,
    h('label', { for: 'import-file' }, 'CSV file'), file,
    h('fieldset', {}, h('legend', {}, 'Mode'),
      h('label', { for: 'import-merge' }, merge, ' Merge: add to what you have'),
      h('label', { for: 'import-overwrite' }, overwrite, ' Overwrite: keep only what the file names')),
    submit, err);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    err.textContent = '';
    if (!file.files.length) { err.textContent = 'Choose a CSV file first'; return; }
    const body = new FormData();
    body.append('type', kind.value);
    body.append('mode', overwrite.checked ? 'overwrite' : 'merge');
    body.append('data', file.files[0]);
    body.append('filename', file.files[0].name);
    submit.disabled = true;
    try {
      await api('/api/v1/redpoll/imports', { method: 'POST', body });
      file.value = '';
      toast('Import started');
      await show();
    } catch (e) {
      err.textContent = errorText(e);
    } finally { submit.disabled = false; }
  });
  show();
  return [h('section', { class: 'settings-section', 'aria-labelledby': 'import-head' },
    h('h2', { id: 'import-head' }, 'Import data'),
    h('p', { class: 'hint' }, 'CSV files as Mastodon makes them: follows, lists, blocks, mutes, blocked domains, bookmarks.'),
    form, list)];
}
