// The moderation area, for staff (loaded only when opened): reports, accounts,
// appeals, domain blocks, the server's rules, settings and sign-up mode, the
// roles, and the audit log, each shown only to a role whose permissions allow it (the
// server refuses the rest anyway); and, for every member, the warnings about
// their own account with their appeal (/settings/warnings).
// The API: Mastodon's /api/v1/admin/* and Redpoll's /api/v1/redpoll/admin/*.
import { api, request, session } from './api.js';
import { h, append, toast, errorText, timeEl, fullDate, clear } from './ui.js';
import { heading } from './views.js';
import { can, moderationSections } from './features.js';

// --- small pieces ---------------------------------------------------------------------
function textOf(html) {
  const tpl = document.createElement('template');
  tpl.innerHTML = html || '';  // inert: only its text is read
  return (tpl.content.textContent || '').trim();
}

function field(label, el, hint) {
  return h('label', { class: 'field' }, h('span', {}, label), el, hint ? h('small', { class: 'hint' }, hint) : null);
}

function checkbox(name, label, checked = false) {
  const input = h('input', { type: 'checkbox', name });
  input.checked = checked;
  return { input, node: h('label', { class: 'check' }, input, ' ' + label) };
}

function select(name, options, value) {
  const el = h('select', { name }, ...options.map(([v, l]) => h('option', { value: v }, l)));
  el.value = value;
  return el;
}

// an element's content replaced (what is null left out)
function refill(el, ...nodes) { clear(el); return append(el, nodes); }

function alertBox() { return h('p', { class: 'error', role: 'alert' }); }

function acctOf(a) { return a ? (a.domain ? `${a.username}@${a.domain}` : a.username) : '?'; }

// the page's tabs: the sections this role may open
function tabs(current) {
  return h('nav', { class: 'tabs mod-tabs', 'aria-label': 'Moderation' },
    ...moderationSections().map(([key, label]) => h('a', { href: '/moderation/' + key,
      'aria-current': key === current ? 'page' : null }, label)));
}

function page(ctx, key, title, ...body) {
  ctx.title(title);
  return [heading(title), tabs(key), ...body];
}

// a section this role may not open: said so, nothing asked of the server
function refused(ctx, key) {
  if (moderationSections().some(([k]) => k === key)) return null;
  ctx.title('Moderation');
  return [heading('Moderation'), tabs(null), h('p', { role: 'alert' }, 'Your role does not allow this.')];
}

// "Show more": a list read page after page through its Link header
function pagedList(ctx, { path, query, label, empty, render }) {
  const list = h('ul', { class: 'mod-list', 'aria-label': label });
  const err = alertBox();
  const more = h('button', { type: 'button', hidden: true }, 'Show more');
  let next = null;
  const load = async (first) => {
    more.disabled = true;
    err.textContent = '';
    try {
      const { data, link } = await request(first ? path : next, { query: first ? query : undefined });
      if (first) clear(list);
      if (first && !data.length) list.append(h('li', { class: 'empty' }, empty));
      for (const item of data) list.append(render(item));
      next = link.next || null;
      more.hidden = !next || !data.length;
    } catch (e) { err.textContent = errorText(e); } finally { more.disabled = false; }
  };
  more.addEventListener('click', () => load(false));
  load(true);
  return { node: h('div', { class: 'mod-paged' }, err, list, more), reload: () => load(true) };
}

// A confirming dialog: what is done, to whom; ``extra`` fields go in the form;
// ``run`` does it (its error shows in the dialog, which stays open).
function confirmDialog({ title, text, extra = [], confirm, danger = false, run, opener }) {
  const err = alertBox();
  const ok = h('button', { type: 'submit', class: danger ? 'danger solid' : 'primary' }, confirm);
  const cancel = h('button', { type: 'button' }, 'Cancel');
  const dialog = h('dialog', { class: 'dialog mod-dialog', 'aria-labelledby': 'mod-dialog-head' });
  const form = h('form', { method: 'dialog', onsubmit: async (e) => {
    e.preventDefault();
    err.textContent = '';
    ok.disabled = true;
    try { await run(); dialog.close(); } catch (e2) { err.textContent = errorText(e2); ok.disabled = false; }
  } }, h('h2', { id: 'mod-dialog-head' }, title), text ? h('p', {}, text) : null, ...extra, err,
  h('div', { class: 'dialog-buttons' }, cancel, ok));
  cancel.addEventListener('click', () => dialog.close());
  dialog.append(form);
  dialog.addEventListener('close', () => { dialog.remove(); if (opener && opener.isConnected) opener.focus(); });
  document.body.append(dialog);
  dialog.showModal();
  (form.querySelector('textarea, input') || ok).focus();
  return dialog;
}

// --- acting on an account (from a report or its page) ----------------------------------
const ACTIONS = [
  ['none', 'Warn', 'Send a warning'],
  ['sensitive', 'Mark sensitive', 'Mark their media sensitive'],
  ['silence', 'Limit', 'Limit (silence) the account'],
  ['disable', 'Freeze', 'Freeze the account (no sign-in)'],
  ['suspend', 'Suspend', 'Suspend the account'],
];

function actionButtons(account, { reportId = null, onDone }) {
  return h('div', { class: 'mod-actions', role: 'group', 'aria-label': 'Act on @' + acctOf(account) },
    ...ACTIONS.map(([type, label, title]) => {
      const btn = h('button', { type: 'button', class: type === 'none' ? '' : 'danger', dataset: { action: type } }, label);
      btn.addEventListener('click', () => {
        const text = h('textarea', { name: 'text', rows: '4', maxlength: '5000' });
        const mail = checkbox('send_email_notification', 'E-mail the member', true);
        confirmDialog({ title: `${title}: @${acctOf(account)}`, opener: btn, confirm: label, danger: type !== 'none',
          text: type === 'none' ? 'The member sees this warning in their app.' : 'The member is told why, with this text.',
          extra: [field(type === 'none' ? 'Warning' : 'Warning text', text), mail.node],
          run: async () => {
            await api(`/api/v1/admin/accounts/${account.id}/action`, { method: 'POST', form: {
              type, report_id: reportId || undefined, text: text.value.trim(),
              send_email_notification: mail.input.checked ? 'true' : 'false' } });
            toast(type === 'none' ? `Warning sent to @${acctOf(account)}` : `Done: @${acctOf(account)}`);
            onDone();
          } });
      });
      return btn;
    }));
}

function stateOf(a) {
  return [a.suspended && 'suspended', a.disabled && 'frozen', a.silenced && 'limited', a.sensitized && 'sensitive',
    !a.approved && 'pending'].filter(Boolean);
}

function accountLine(a) {
  const states = stateOf(a);
  return h('span', { class: 'mod-account' }, h('a', { href: '/moderation/accounts/' + a.id }, '@' + acctOf(a)),
    states.length ? h('span', { class: 'mod-states' }, ...states.map((s) => h('span', { class: 'mod-state' }, s))) : null);
}

// --- reports ---------------------------------------------------------------------------
const CATEGORY = { spam: 'Spam', violation: 'Breaks the rules', legal: 'Illegal', other: 'Other' };

function reportBody(r) {
  return [
    h('p', { class: 'mod-meta' }, CATEGORY[r.category] || r.category, ' · reported by ',
      r.account ? '@' + acctOf(r.account) : 'someone', ' · ', timeEl(r.created_at),
      r.assigned_account ? ` · assigned to @${acctOf(r.assigned_account)}` : '',
      r.action_taken ? ' · resolved' : ''),
    r.comment ? h('blockquote', { class: 'mod-comment' }, r.comment) : null,
    r.rules && r.rules.length ? h('ul', { class: 'mod-rules', 'aria-label': 'Rules broken' },
      ...r.rules.map((x) => h('li', {}, x.text))) : null,
    r.statuses && r.statuses.length ? h('ul', { class: 'mod-statuses', 'aria-label': 'Reported posts' },
      ...r.statuses.map((s) => h('li', { class: 'report-status' },
        s.spoiler_text ? h('strong', {}, s.spoiler_text + ' ') : null,
        textOf(s.content).slice(0, 500) || '(media only)'))) : null,
  ];
}

export function reports(ctx, resolved = false) {
  const no = refused(ctx, 'reports');
  if (no) return no;
  const list = pagedList(ctx, { path: '/api/v1/admin/reports', query: { resolved: resolved ? 'true' : undefined, limit: 20 },
    label: resolved ? 'Resolved reports' : 'Open reports',
    empty: resolved ? 'No resolved reports.' : 'No open reports: nothing to do.',
    render: (r) => h('li', { class: 'mod-item report-item', dataset: { id: r.id } },
      h('h2', { class: 'mod-item-head' }, h('a', { href: '/moderation/reports/' + r.id },
        `Report #${r.id} about @${acctOf(r.target_account)}`)),
      ...reportBody(r)) });
  const filter = h('nav', { class: 'tabs mod-subtabs', 'aria-label': 'Reports' },
    h('a', { href: '/moderation/reports', 'aria-current': resolved ? null : 'page' }, 'Open'),
    h('a', { href: '/moderation/reports?resolved=1', 'aria-current': resolved ? 'page' : null }, 'Resolved'));
  return page(ctx, 'reports', 'Reports', filter, list.node);
}

export function report(ctx, id) {
  const no = refused(ctx, 'reports');
  if (no) return no;
  const box = h('div', { class: 'mod-report' }, h('p', { class: 'loading' }, 'Loading…'));
  const show = (r) => {
    const me = session.me();
    const mine = r.assigned_account && me && r.assigned_account.id === me.id;
    const verb = async (v, btn) => {
      btn.disabled = true;
      try { show(await api(`/api/v1/admin/reports/${r.id}/${v}`, { method: 'POST' })); toast('Report updated'); } catch (e) {
        toast(errorText(e), 'error'); btn.disabled = false;
      }
    };
    const button = (label, v) => { const b = h('button', { type: 'button' }, label); b.addEventListener('click', () => verb(v, b)); return b; };
    const target = r.target_account;
    refill(box,
      h('h2', {}, `Report #${r.id} about `, target ? accountLine(target) : '?'),
      ...reportBody(r),
      h('div', { class: 'mod-buttons' },
        mine ? button('Unassign', 'unassign') : button('Assign to me', 'assign_to_self'),
        r.action_taken ? button('Reopen', 'reopen') : button('Resolve', 'resolve')),
      target ? h('h3', {}, 'Act on @' + acctOf(target)) : null,
      target ? actionButtons(target, { reportId: r.id, onDone: () => load() }) : null);
  };
  const load = async () => {
    try { show(await api('/api/v1/admin/reports/' + id)); } catch (e) {
      box.replaceChildren(h('p', { role: 'alert', class: 'error' }, errorText(e)));
    }
  };
  load();
  return page(ctx, 'reports', `Report #${id}`, box, h('p', {}, h('a', { href: '/moderation/reports' }, 'All reports')));
}

// --- accounts ----------------------------------------------------------------------------
const STATUSES = [['', 'Any'], ['active', 'Active'], ['pending', 'Pending approval'], ['disabled', 'Frozen'],
  ['silenced', 'Limited'], ['suspended', 'Suspended']];

export function accounts(ctx) {
  const no = refused(ctx, 'accounts');
  if (no) return no;
  const q = new URLSearchParams(location.search);
  const username = h('input', { type: 'search', name: 'username', value: q.get('username') || '' });
  const origin = select('origin', [['', 'Any'], ['local', 'This server'], ['remote', 'Other servers']], q.get('origin') || '');
  const status = select('status', STATUSES, q.get('status') || '');
  const form = h('form', { class: 'inline-form mod-filter', role: 'search', onsubmit: (e) => {
    e.preventDefault();
    const p = new URLSearchParams(Object.entries({ username: username.value.trim(), origin: origin.value, status: status.value })
      .filter(([, v]) => v));
    ctx.go('/moderation/accounts' + (p.size ? '?' + p : ''));
  } }, field('Username', username), field('Origin', origin), field('Status', status),
  h('button', { type: 'submit', class: 'primary' }, 'Search'));
  const list = pagedList(ctx, { path: '/api/v2/admin/accounts', label: 'Accounts', empty: 'No accounts match.',
    query: { username: q.get('username'), origin: q.get('origin'), status: q.get('status'), limit: 40 },
    render: (a) => {
      const li = h('li', { class: 'mod-item', dataset: { id: a.id } }, accountLine(a),
        h('p', { class: 'mod-meta' }, 'Joined ', timeEl(a.created_at), a.email ? ' · ' + a.email : ''));
      if (!a.approved && !a.domain) {
        if (a.invite_request) li.append(h('blockquote', { class: 'mod-comment' }, a.invite_request));
        const decide = (verb, label) => {
          const b = h('button', { type: 'button', class: verb === 'reject' ? 'danger' : 'primary' }, label);
          b.addEventListener('click', async () => {
            b.disabled = true;
            try {
              await api(`/api/v1/admin/accounts/${a.id}/${verb}`, { method: 'POST' });
              li.replaceChildren(h('p', { role: 'status' }, `@${acctOf(a)} ${verb === 'approve' ? 'approved' : 'rejected'}.`));
            } catch (e) { toast(errorText(e), 'error'); b.disabled = false; }
          });
          return b;
        };
        li.append(h('div', { class: 'mod-buttons' }, decide('approve', 'Approve'), decide('reject', 'Reject')));
      }
      return li;
    } });
  return page(ctx, 'accounts', 'Accounts', form, list.node);
}

const UNDO = [['suspended', 'unsuspend', 'Lift the suspension'], ['disabled', 'enable', 'Unfreeze'],
  ['silenced', 'unsilence', 'Lift the limit'], ['sensitized', 'unsensitive', 'Stop marking sensitive']];

export function account(ctx, id) {
  const no = refused(ctx, 'accounts');
  if (no) return no;
  const box = h('div', { class: 'mod-account-page' }, h('p', { class: 'loading' }, 'Loading…'));
  const warnings = h('ul', { class: 'mod-list', 'aria-label': 'Warnings' });
  const load = async () => {
    try {
      const a = await api('/api/v1/admin/accounts/' + id);
      const undo = UNDO.filter(([flag]) => a[flag]).map(([, verb, label]) => {
        const b = h('button', { type: 'button' }, label);
        b.addEventListener('click', async () => {
          b.disabled = true;
          try { await api(`/api/v1/admin/accounts/${a.id}/${verb}`, { method: 'POST' }); toast('Done'); load(); } catch (e) {
            toast(errorText(e), 'error'); b.disabled = false;
          }
        });
        return b;
      });
      refill(box, h('h2', {}, accountLine(a)),
        h('dl', { class: 'mod-facts' },
          h('dt', {}, 'Joined'), h('dd', {}, fullDate(a.created_at)),
          a.email ? [h('dt', {}, 'E-mail'), h('dd', {}, a.email)] : null,
          h('dt', {}, 'Role'), h('dd', {}, a.role?.name || 'None'),
          h('dt', {}, 'Profile'), h('dd', {}, h('a', { href: '/@' + acctOf(a) }, '@' + acctOf(a)))),
        undo.length ? h('div', { class: 'mod-buttons', role: 'group', 'aria-label': 'Undo' }, ...undo) : null,
        can('manage_roles') && !a.domain ? roleChooser(a, load) : null,
        a.suspended ? null : h('h3', {}, 'Act on this account'),
        a.suspended ? null : actionButtons(a, { onDone: load }));
      const found = await api(`/api/v1/redpoll/admin/accounts/${a.id}/warnings`).catch(() => []);
      warnings.replaceChildren(...(found.length ? found.map((w) => h('li', { class: 'mod-item' }, warningBody(w)))
        : [h('li', { class: 'empty' }, 'No warnings.')]));
    } catch (e) { box.replaceChildren(h('p', { role: 'alert', class: 'error' }, errorText(e))); }
  };
  load();
  return page(ctx, 'accounts', 'Account', box, h('h2', {}, 'Warnings'), warnings,
    h('p', {}, h('a', { href: '/moderation/accounts' }, 'All accounts')));
}

// giving the account of an account page a role (manage_roles)
function roleChooser(a, onDone) {
  const choose = h('select', { name: 'role_id' });
  const btn = h('button', { type: 'submit' }, 'Give role');
  const form = h('form', { class: 'mod-inline', onsubmit: async (e) => {
    e.preventDefault();
    btn.disabled = true;
    try {
      await api(`/api/v1/redpoll/admin/accounts/${a.id}/role`, { method: 'PUT', form: { role_id: choose.value } });
      toast('Role given');
      onDone();
    } catch (e2) { toast(errorText(e2), 'error'); btn.disabled = false; }
  } }, field('Role', choose), btn);
  api('/api/v1/redpoll/admin/roles').then((found) => {
    refill(choose, ...found.map((r) => h('option', { value: r.id }, r.everyone ? 'No role' : r.name)));
    choose.value = a.role?.id || '-99';
  }).catch(() => form.remove());
  return form;
}

// --- warnings (staff and members) -----------------------------------------------------------
const ACTION_TEXT = { none: 'Warning', disable: 'Account frozen', sensitive: 'Media marked sensitive',
  mark_statuses_as_sensitive: 'Posts marked sensitive', delete_statuses: 'Posts removed',
  silence: 'Account limited', suspend: 'Account suspended' };
const APPEAL_STATE = { pending: 'Appeal pending', approved: 'Appeal approved', rejected: 'Appeal rejected' };

function warningBody(w) {
  return [h('p', { class: 'mod-meta' }, h('strong', {}, ACTION_TEXT[w.action] || w.action), ' · ', timeEl(w.created_at),
    w.appeal ? ' · ' + (APPEAL_STATE[w.appeal.state] || w.appeal.state) : ''),
  w.text ? h('blockquote', { class: 'mod-comment' }, w.text) : null,
  w.appeal ? h('p', { class: 'hint' }, 'Appeal: ' + w.appeal.text) : null];
}

// Settings → Warnings about your account (the server says until when each
// may be appealed: appealable, appealable_until)
export function myWarnings(ctx) {
  ctx.title('Warnings about your account');
  const list = h('ul', { class: 'mod-list', 'aria-label': 'Warnings' });
  const err = alertBox();
  const load = async () => {
    try {
      const found = await api('/api/v1/redpoll/warnings');
      list.replaceChildren(...(found.length ? found.map(item) : [h('li', { class: 'empty' }, 'No warnings: all is well.')]));
    } catch (e) { err.textContent = errorText(e); }
  };
  const item = (w) => {
    const li = h('li', { class: 'mod-item warning', dataset: { id: w.id } }, ...warningBody(w));
    if (w.appealable) {
      const b = h('button', { type: 'button' }, 'Appeal');
      b.addEventListener('click', () => {
        const text = h('textarea', { name: 'text', rows: '4', maxlength: '2000', required: true });
        confirmDialog({ title: 'Appeal this decision', opener: b, confirm: 'Send appeal',
          text: 'Say why the moderators should change it. You can appeal once.', extra: [field('Your appeal', text)],
          run: async () => {
            if (!text.value.trim()) throw new Error('Write your appeal first.');
            await api(`/api/v1/redpoll/warnings/${w.id}/appeal`, { method: 'POST', form: { text: text.value.trim() } });
            toast('Appeal sent');
            load();
          } });
      });
      li.append(h('div', { class: 'mod-buttons' }, b,
        h('small', { class: 'hint' }, ' You may appeal until ', fullDate(w.appealable_until), '.')));
    }
    return li;
  };
  load();
  return [heading('Warnings about your account'),
    h('p', { class: 'hint' }, "The moderators' decisions about your account. You may appeal each once, until the date shown beside it."),
    err, list, h('p', {}, h('a', { href: '/settings' }, 'Back to settings'))];
}

// --- appeals --------------------------------------------------------------------------------
export function appeals(ctx) {
  const no = refused(ctx, 'appeals');
  if (no) return no;
  const state = new URLSearchParams(location.search).get('state') || 'pending';
  const list = h('ul', { class: 'mod-list', 'aria-label': 'Appeals' });
  const err = alertBox();
  const load = async () => {
    try {
      const found = await api('/api/v1/redpoll/admin/appeals', { query: { state } });
      list.replaceChildren(...(found.length ? found.map(item) : [h('li', { class: 'empty' }, 'No appeals.')]));
    } catch (e) { err.textContent = errorText(e); }
  };
  const item = (w) => {
    const li = h('li', { class: 'mod-item', dataset: { id: w.id } },
      w.target_account ? h('p', {}, h('a', { href: '/moderation/accounts/' + w.target_account.id }, '@' + w.target_account.acct)) : null,
      ...warningBody(w));
    if (w.appeal?.state === 'pending') {
      const decide = (verb, label) => {
        const b = h('button', { type: 'button', class: verb === 'approve' ? 'primary' : 'danger' }, label);
        b.addEventListener('click', async () => {
          b.disabled = true;
          try { await api(`/api/v1/redpoll/admin/appeals/${w.id}/${verb}`, { method: 'POST' }); toast(`Appeal ${verb}d`); load(); } catch (e) {
            toast(errorText(e), 'error'); b.disabled = false;
          }
        });
        return b;
      };
      li.append(h('div', { class: 'mod-buttons' }, decide('approve', 'Approve (undo the action)'), decide('reject', 'Reject')));
    }
    return li;
  };
  load();
  const filter = h('nav', { class: 'tabs mod-subtabs', 'aria-label': 'Appeals' }, ...['pending', 'approved', 'rejected'].map((s) =>
    h('a', { href: '/moderation/appeals?state=' + s, 'aria-current': s === state ? 'page' : null }, s[0].toUpperCase() + s.slice(1))));
  return page(ctx, 'appeals', 'Appeals', filter, err, list);
}

// --- domain blocks ---------------------------------------------------------------------------
const SEVERITY = [['silence', 'Limit'], ['suspend', 'Suspend'], ['noop', 'None (only the options below)']];

export function domains(ctx) {
  const no = refused(ctx, 'domains');
  if (no) return no;
  const list = h('ul', { class: 'mod-list', 'aria-label': 'Blocked domains' });
  const err = alertBox();
  const load = async () => {
    try {
      const found = await api('/api/v1/admin/domain_blocks', { query: { limit: 200 } });
      list.replaceChildren(...(found.length ? found.map(item) : [h('li', { class: 'empty' }, 'No domain is blocked.')]));
    } catch (e) { err.textContent = errorText(e); }
  };
  const item = (b) => {
    const remove = h('button', { type: 'button', class: 'danger' }, 'Remove');
    remove.setAttribute('aria-label', 'Remove the block of ' + b.domain);
    remove.addEventListener('click', () => confirmDialog({ title: 'Unblock ' + b.domain, opener: remove, confirm: 'Remove',
      text: 'Its servers may deliver here again.', run: async () => {
        await api('/api/v1/admin/domain_blocks/' + b.id, { method: 'DELETE' }); toast(b.domain + ' unblocked'); load();
      } }));
    const edit = h('button', { type: 'button' }, 'Edit');
    edit.setAttribute('aria-label', 'Edit the block of ' + b.domain);
    edit.addEventListener('click', () => {
      const sev = select('severity', SEVERITY, b.severity);
      const m = checkbox('reject_media', 'Reject media files', b.reject_media);
      const r = checkbox('reject_reports', 'Reject reports', b.reject_reports);
      const o = checkbox('obfuscate', 'Obfuscate the domain in the public list', b.obfuscate);
      const pc = h('input', { name: 'private_comment', maxlength: '1000', value: b.private_comment || '' });
      const uc = h('input', { name: 'public_comment', maxlength: '1000', value: b.public_comment || '' });
      confirmDialog({ title: 'Edit the block of ' + b.domain, opener: edit, confirm: 'Save',
        extra: [field('Severity', sev), m.node, r.node, o.node, field('Private comment (staff only)', pc),
          field('Public comment', uc)],
        run: async () => {
          await api('/api/v1/admin/domain_blocks/' + b.id, { method: 'PUT', form: { severity: sev.value,
            reject_media: String(m.input.checked), reject_reports: String(r.input.checked),
            obfuscate: String(o.input.checked), private_comment: pc.value.trim(), public_comment: uc.value.trim() } });
          toast(b.domain + ' updated');
          load();
        } });
    });
    const opts = [SEVERITY.find(([v]) => v === b.severity)?.[1] || b.severity, b.reject_media && 'media rejected',
      b.reject_reports && 'reports rejected', b.obfuscate && 'obfuscated'].filter(Boolean);
    return h('li', { class: 'mod-item', dataset: { domain: b.domain } }, h('p', { class: 'mod-item-head' }, h('strong', {}, b.domain)),
      h('p', { class: 'mod-meta' }, opts.join(' · '), ' · ', timeEl(b.created_at)),
      b.private_comment ? h('p', { class: 'hint' }, 'Private: ' + b.private_comment) : null,
      b.public_comment ? h('p', { class: 'hint' }, 'Public: ' + b.public_comment) : null,
      h('div', { class: 'mod-buttons' }, edit, remove));
  };
  const domain = h('input', { name: 'domain', required: true, placeholder: 'example.com', autocapitalize: 'none', spellcheck: 'false' });
  const severity = select('severity', SEVERITY, 'suspend');
  const media = checkbox('reject_media', 'Reject media files');
  const rep = checkbox('reject_reports', 'Reject reports');
  const obf = checkbox('obfuscate', 'Obfuscate the domain in the public list');
  const priv = h('input', { name: 'private_comment', maxlength: '1000' });
  const pub = h('input', { name: 'public_comment', maxlength: '1000' });
  const formErr = alertBox();
  const form = h('form', { class: 'settings mod-form', 'aria-labelledby': 'block-head', onsubmit: async (e) => {
    e.preventDefault();
    formErr.textContent = '';
    const btn = form.querySelector('button[type=submit]');
    btn.disabled = true;
    try {
      const made = await api('/api/v1/admin/domain_blocks', { method: 'POST', form: { domain: domain.value.trim(),
        severity: severity.value, reject_media: String(media.input.checked), reject_reports: String(rep.input.checked),
        obfuscate: String(obf.input.checked), private_comment: priv.value.trim(), public_comment: pub.value.trim() } });
      toast(made.domain + ' blocked');
      form.reset();
      severity.value = 'suspend';
      load();
    } catch (e2) { formErr.textContent = errorText(e2); } finally { btn.disabled = false; }
  } }, h('h2', { id: 'block-head' }, 'Block a domain'), field('Domain', domain), field('Severity', severity),
  media.node, rep.node, obf.node, field('Private comment (staff only)', priv), field('Public comment', pub), formErr,
  h('button', { type: 'submit', class: 'primary' }, 'Block'));
  load();
  return page(ctx, 'domains', 'Domain blocks', form, h('h2', {}, 'Blocked domains'), err, list);
}

// --- the server: rules, settings, registrations ----------------------------------------------
function rulesSection() {
  const list = h('ol', { class: 'mod-rules-list', 'aria-label': 'Rules' });
  const err = alertBox();
  const load = async () => {
    try {
      const found = await api('/api/v1/redpoll/admin/rules');
      list.replaceChildren(...found.map((r) => {
        const b = h('button', { type: 'button', class: 'danger', 'aria-label': 'Remove rule: ' + r.text }, 'Remove');
        b.addEventListener('click', async () => {
          b.disabled = true;
          try { await api('/api/v1/redpoll/admin/rules/' + r.id, { method: 'DELETE' }); load(); } catch (e) { err.textContent = errorText(e); b.disabled = false; }
        });
        return h('li', {}, h('span', {}, r.text, r.hint ? h('small', { class: 'hint' }, ' ' + r.hint) : null), b);
      }));
      if (!found.length) list.append(h('li', { class: 'empty' }, 'No rules yet.'));
    } catch (e) { err.textContent = errorText(e); }
  };
  const text = h('input', { name: 'text', required: true, maxlength: '300' });
  const hint = h('input', { name: 'hint', maxlength: '300' });
  const form = h('form', { class: 'mod-inline', onsubmit: async (e) => {
    e.preventDefault();
    err.textContent = '';
    try {
      await api('/api/v1/redpoll/admin/rules', { method: 'POST', form: { text: text.value.trim(), hint: hint.value.trim() } });
      form.reset(); load();
    } catch (e2) { err.textContent = errorText(e2); }
  } }, field('New rule', text), field('Explanation (optional)', hint), h('button', { type: 'submit' }, 'Add rule'));
  load();
  return h('section', { class: 'settings-section', 'aria-labelledby': 'rules-head' }, h('h2', { id: 'rules-head' }, 'Rules'),
    list, form, err);
}

function settingsSection() {
  const title = h('input', { name: 'title', maxlength: '100' });
  const short = h('textarea', { name: 'short_description', rows: '2', maxlength: '500' });
  const extended = h('textarea', { name: 'extended_description', rows: '6' });
  const email = h('input', { type: 'email', name: 'email' });
  const err = alertBox();
  const fill = (s) => { title.value = s.title; short.value = s.short_description; extended.value = s.extended_description; email.value = s.email; };
  api('/api/v1/redpoll/admin/settings').then(fill).catch((e) => { err.textContent = errorText(e); });
  const form = h('form', { class: 'settings-section', 'aria-labelledby': 'server-settings-head', onsubmit: async (e) => {
    e.preventDefault();
    err.textContent = '';
    const btn = form.querySelector('button');
    btn.disabled = true;
    try {
      fill(await api('/api/v1/redpoll/admin/settings', { method: 'PUT', form: { title: title.value, short_description: short.value,
        extended_description: extended.value, email: email.value.trim() } }));
      toast('Server settings saved');
    } catch (e2) { err.textContent = errorText(e2); } finally { btn.disabled = false; }
  } }, h('h2', { id: 'server-settings-head' }, 'About this server'), field('Title', title, 'Empty: the default'),
  field('Short description', short), field('Extended description', extended), field('Contact e-mail', email), err,
  h('button', { type: 'submit', class: 'primary' }, 'Save'));
  return form;
}

function registrationsSection() {
  const mode = select('mode', [['open', 'Anyone can sign up'], ['approval', 'Sign-ups need approval'],
    ['closed', 'Nobody can sign up (invites only)']], 'open');
  const message = h('textarea', { name: 'message', rows: '2', maxlength: '2000' });
  const reason = checkbox('reason_required', 'Ask a reason of those awaiting approval');
  const err = alertBox();
  const fill = (r) => { mode.value = r.mode; message.value = r.message; reason.input.checked = r.reason_required; };
  api('/api/v1/redpoll/admin/registrations').then(fill).catch((e) => { err.textContent = errorText(e); });
  const form = h('form', { class: 'settings-section', 'aria-labelledby': 'registrations-head', onsubmit: async (e) => {
    e.preventDefault();
    err.textContent = '';
    const btn = form.querySelector('button');
    btn.disabled = true;
    try {
      fill(await api('/api/v1/redpoll/admin/registrations', { method: 'PUT', form: { mode: mode.value,
        message: message.value, reason_required: String(reason.input.checked) } }));
      toast('Sign-up mode saved');
    } catch (e2) { err.textContent = errorText(e2); } finally { btn.disabled = false; }
  } }, h('h2', { id: 'registrations-head' }, 'Sign-ups'), field('Who can sign up', mode),
  field('Message while closed', message), reason.node, err, h('button', { type: 'submit', class: 'primary' }, 'Save'));
  return form;
}

export function server(ctx) {
  const no = refused(ctx, 'server');
  if (no) return no;
  return page(ctx, 'server', 'Server', can('manage_rules') ? rulesSection() : null,
    can('manage_settings') ? settingsSection() : null, can('manage_settings') ? registrationsSection() : null);
}

// --- roles (Redpoll's /api/v1/redpoll/admin/roles: Mastodon keeps them in its web pages) ------
// Mastodon's UserRole::FLAGS, with what each allows
const PERMISSION_TEXT = [
  ['administrator', 1, 'Administrator (every permission)'],
  ['view_dashboard', 1 << 3, 'View the dashboard'],
  ['view_audit_log', 1 << 2, 'View the audit log'],
  ['view_devops', 1 << 1, 'DevOps'],
  ['manage_reports', 1 << 4, 'Manage reports'],
  ['manage_users', 1 << 10, 'Manage users (see and act on accounts)'],
  ['manage_user_access', 1 << 18, 'Manage user access'],
  ['delete_user_data', 1 << 19, 'Delete user data'],
  ['manage_appeals', 1 << 9, 'Manage appeals'],
  ['manage_federation', 1 << 5, 'Manage federation (domain blocks)'],
  ['manage_blocks', 1 << 7, 'Manage e-mail and IP blocks'],
  ['manage_taxonomies', 1 << 8, 'Manage trends and hashtags'],
  ['manage_invites', 1 << 11, 'Manage invites'],
  ['invite_users', 1 << 16, 'Invite people'],
  ['manage_rules', 1 << 12, 'Manage the rules'],
  ['manage_settings', 1 << 6, 'Manage the settings'],
  ['manage_roles', 1 << 17, 'Manage roles'],
  ['manage_announcements', 1 << 13, 'Manage announcements'],
  ['manage_custom_emojis', 1 << 14, 'Manage custom emojis'],
  ['manage_webhooks', 1 << 15, 'Manage webhooks'],
];

function roleName(r) { return r.everyone ? 'Everyone' : r.name; }

// a role's colour (set through the CSSOM: the page's CSP allows no inline style)
function swatch(color) {
  const el = h('span', { class: 'role-swatch', 'aria-hidden': 'true' });
  el.style.backgroundColor = color.startsWith('#') ? color : '#' + color;
  return el;
}

// the permission boxes of a role's form: a box the member's own role lacks is disabled
// (the server refuses to give what one does not hold); the everyone role: inviting only
function permissionBoxes(bits, everyone = false) {
  const boxes = PERMISSION_TEXT.filter(([name]) => !everyone || name === 'invite_users').map(([name, bit, label]) => {
    const box = checkbox('permission', label, (bits & bit) !== 0);
    box.input.value = String(bit);
    if (!can(name) && !box.input.checked) box.input.disabled = true;
    return box;
  });
  const node = h('fieldset', { class: 'mod-permissions' }, h('legend', {}, 'Permissions'), ...boxes.map((b) => b.node));
  const value = () => String(boxes.reduce((sum, b) => (b.input.checked ? sum + Number(b.input.value) : sum), 0));
  return { node, value };
}

function roleFields(r = null) {
  const name = h('input', { name: 'name', required: true, maxlength: '60', value: r ? r.name : '' });
  const position = h('input', { name: 'position', type: 'number', min: '0', max: '100000', required: true,
    value: r ? String(r.position) : '' });
  const color = h('input', { name: 'color', maxlength: '7', placeholder: '#rrggbb', value: r ? r.color : '' });
  const highlighted = checkbox('highlighted', 'Show it on its holders\u2019 profiles', r ? r.highlighted : false);
  const perms = permissionBoxes(r ? Number(r.permissions) : 0, r?.everyone);
  const nodes = r?.everyone ? [perms.node] : [field('Name', name), field('Position', position,
    'Higher acts on lower: a role acts only on accounts and roles below it (Moderator 10, Admin 100, Owner 1000).'),
  field('Colour', color, '# and 3 or 6 hexadecimal digits (optional)'), highlighted.node, perms.node];
  const form = () => (r?.everyone ? { permissions: perms.value() } : { name: name.value.trim(), position: position.value,
    color: color.value.trim(), highlighted: String(highlighted.input.checked), permissions: perms.value() });
  return { nodes, form };
}

export function roles(ctx) {
  const no = refused(ctx, 'roles');
  if (no) return no;
  const list = h('ul', { class: 'mod-list', 'aria-label': 'Roles' });
  const err = alertBox();
  const choose = h('select', { name: 'role_id' });
  const load = async () => {
    try {
      const found = await api('/api/v1/redpoll/admin/roles');
      list.replaceChildren(...found.map(item));
      refill(choose, ...found.map((r) => h('option', { value: r.id }, r.everyone ? 'No role' : r.name)));
    } catch (e) { err.textContent = errorText(e); }
  };
  const item = (r) => {
    const names = PERMISSION_TEXT.filter(([, bit]) => (Number(r.permissions) & bit) !== 0).map(([, , label]) => label);
    const li = h('li', { class: 'mod-item role-item', dataset: { id: r.id } },
      h('p', { class: 'mod-item-head' }, r.color ? swatch(r.color) : null,
        h('strong', {}, roleName(r)), r.everyone ? ' (accounts without a role)' : ` · position ${r.position}`,
        r.built_in ? ' · built-in' : '', r.highlighted ? ' · shown on profiles' : ''),
      h('p', { class: 'mod-meta' }, names.join(' · ') || 'No permissions'));
    if (r.built_in) return li;
    const edit = h('button', { type: 'button' }, 'Edit');
    edit.setAttribute('aria-label', 'Edit the role ' + roleName(r));
    edit.addEventListener('click', () => {
      const f = roleFields(r);
      confirmDialog({ title: 'Edit the role ' + roleName(r), opener: edit, confirm: 'Save', extra: f.nodes,
        run: async () => {
          await api('/api/v1/redpoll/admin/roles/' + r.id, { method: 'PUT', form: f.form() });
          toast(roleName(r) + ' saved');
          load();
        } });
    });
    const buttons = [edit];
    if (!r.everyone) {
      const del = h('button', { type: 'button', class: 'danger' }, 'Delete');
      del.setAttribute('aria-label', 'Delete the role ' + r.name);
      del.addEventListener('click', () => confirmDialog({ title: 'Delete the role ' + r.name, opener: del, confirm: 'Delete',
        danger: true, text: 'Its holders keep their accounts and hold no role.', run: async () => {
          await api('/api/v1/redpoll/admin/roles/' + r.id, { method: 'DELETE' });
          toast(r.name + ' deleted');
          load();
        } }));
      buttons.push(del);
    }
    li.append(h('div', { class: 'mod-buttons' }, ...buttons));
    return li;
  };
  const fields = roleFields();
  const formErr = alertBox();
  const form = h('form', { class: 'settings mod-form', 'aria-labelledby': 'role-head', onsubmit: async (e) => {
    e.preventDefault();
    formErr.textContent = '';
    const btn = form.querySelector('button[type=submit]');
    btn.disabled = true;
    try {
      const made = await api('/api/v1/redpoll/admin/roles', { method: 'POST', form: fields.form() });
      toast('Role ' + made.name + ' defined');
      form.reset();
      load();
    } catch (e2) { formErr.textContent = errorText(e2); } finally { btn.disabled = false; }
  } }, h('h2', { id: 'role-head' }, 'Define a role'), ...fields.nodes, formErr,
  h('button', { type: 'submit', class: 'primary' }, 'Define'));
  const who = h('input', { name: 'acct', required: true, placeholder: 'username', autocapitalize: 'none', spellcheck: 'false' });
  const giveErr = alertBox();
  const give = h('form', { class: 'settings mod-form', 'aria-labelledby': 'give-head', onsubmit: async (e) => {
    e.preventDefault();
    giveErr.textContent = '';
    try {
      const acct = who.value.trim().replace(/^@/, '');
      const account = await api('/api/v1/accounts/lookup', { query: { acct } });
      const done = await api(`/api/v1/redpoll/admin/accounts/${account.id}/role`, { method: 'PUT', form: { role_id: choose.value } });
      toast(`@${acct}: ${done.role && done.role.id !== '-99' ? done.role.name : 'no role'}`);
      give.reset();
      load();
    } catch (e2) { giveErr.textContent = errorText(e2); }
  } }, h('h2', { id: 'give-head' }, 'Give an account a role'), field('Account', who), field('Role', choose), giveErr,
  h('button', { type: 'submit', class: 'primary' }, 'Give role'));
  load();
  return page(ctx, 'roles', 'Roles', err, list, form, give);
}

// --- the audit log ---------------------------------------------------------------------------
export function audit(ctx) {
  const no = refused(ctx, 'audit');
  if (no) return no;
  const list = h('ul', { class: 'mod-list', 'aria-label': 'Audit log' });
  const err = alertBox();
  const more = h('button', { type: 'button', hidden: true }, 'Show more');
  let before = null;
  const load = async () => {
    more.disabled = true;
    try {
      const found = await api('/api/v1/redpoll/admin/audit_log', { query: { limit: 50, before } });
      if (!before && !found.length) list.append(h('li', { class: 'empty' }, 'Nothing yet.'));
      for (const e of found) {
        list.append(h('li', { class: 'mod-item audit-entry' }, h('p', {},
          h('strong', {}, e.account ? '@' + e.account.acct : 'The operator'), ` ${e.action} ${e.target_type} `,
          h('span', { class: 'mod-target' }, e.target || e.target_id), ' · ', timeEl(e.created_at)),
        e.text ? h('p', { class: 'hint' }, e.text) : null));
      }
      before = found.length ? found[found.length - 1].id : null;
      more.hidden = found.length < 50;
    } catch (e) { err.textContent = errorText(e); } finally { more.disabled = false; }
  };
  more.addEventListener('click', load);
  load();
  return page(ctx, 'audit', 'Audit log', err, list, more);
}

// /moderation: the first section this role may open
export function index(ctx) {
  const first = moderationSections()[0];
  if (first) { queueMicrotask(() => ctx.go('/moderation/' + first[0], { replace: true })); return [h('p', { class: 'loading' }, 'Loading…')]; }
  return page(ctx, null, 'Moderation', h('p', { role: 'alert' }, 'Your role does not allow moderation.'));
}
