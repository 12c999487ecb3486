// A member's own lists and choices, as Mastodon's web app has them:
// filtered notifications (the notification policy's requests: each sender's
// filtered notifications, Accept or Dismiss, and the policy in Settings),
// a profile's featured hashtags and featured accounts, Feature on profile
// (endorse) and the private note on another's profile, and the Settings pages
// for featured and followed hashtags, muted and blocked accounts and
// blocked domains. Lists the API pages go on by its Link header (feed.js).
import { api, emit } from './api.js';
import { h, icon, toast, errorText, fullDate, plural, displayName, timeEl } from './ui.js';
import { renderAccountRow, authorLine, profilePath } from './status.js';
import { feed } from './feed.js';
import { has } from './features.js';
import { heading, renderNotification } from './views.js';

function textOf(html) {
  const tpl = document.createElement('template');
  tpl.innerHTML = html;  // inert: only its text is read
  return (tpl.content.textContent || '').trim();
}

// a FeaturedTag's last_status_at ("2026-12-03", a day in UTC) as a date in words
function dayText(day) {
  return new Date(day + 'T00:00:00Z').toLocaleDateString(undefined, { dateStyle: 'medium', timeZone: 'UTC' });
}

function backToSettings() { return h('p', {}, h('a', { href: '/settings' }, 'Back to settings')); }

// a button that does one thing: disabled while it runs, the error as a toast
function act(btn, run) {
  btn.addEventListener('click', async () => {
    btn.disabled = true;
    try { await run(); } catch (err) { toast(errorText(err), 'error'); } finally { btn.disabled = false; }
  });
  return btn;
}

// --- filtered notifications ------------------------------------------------------------
// "Filtered notifications (3)" above the notifications, from the policy's summary
export function filteredEntry(ctx) {
  if (!has('GET', '/api/v2/notifications/policy') || !has('GET', '/api/v1/notifications/requests')) return null;
  const count = h('span', { class: 'filtered-count' });
  const link = h('a', { href: '/notifications/requests', class: 'filtered-entry', hidden: true },
    icon('shield'), h('span', {}, 'Filtered notifications'), ' ', count);
  api('/api/v2/notifications/policy').then((p) => {
    if (ctx.signal.aborted) return;
    const n = p.summary?.pending_requests_count || 0;
    count.textContent = `(${n})`;
    link.setAttribute('aria-label', `Filtered notifications: ${plural(n, 'request', 'requests')}`);
    link.hidden = n === 0;
  }).catch(() => {});
  return link;
}

// Accept and Dismiss of one request; once answered, what happened instead
function requestChoices(r) {
  const a = r.account;
  const accept = h('button', { type: 'button', class: 'primary', 'aria-label': `Accept notifications from @${a.acct}` }, 'Accept');
  const dismiss = h('button', { type: 'button', 'aria-label': `Dismiss notifications from @${a.acct}` }, 'Dismiss');
  const choices = h('div', { class: 'choices' }, accept, dismiss);
  const done = (text) => {
    choices.replaceChildren(h('span', { class: 'meta', role: 'status' }, text));
    choices.dispatchEvent(new Event('answered', { bubbles: true }));
  };
  choices.answer = done;  // the bulk buttons of the list say it too
  act(accept, async () => {
    await api(`/api/v1/notifications/requests/${r.id}/accept`, { method: 'POST' });
    toast(`Notifications from @${a.acct} accepted`);
    done('Accepted: their notifications are in your list');
  });
  act(dismiss, async () => {
    await api(`/api/v1/notifications/requests/${r.id}/dismiss`, { method: 'POST' });
    toast(`Notifications from @${a.acct} dismissed`);
    done('Dismissed');
  });
  return choices;
}

function requestRow(r, ctx, onSelect) {
  const a = r.account;
  const item = h('div', { class: 'request', dataset: { id: r.id } });
  const pick = h('input', { type: 'checkbox', class: 'request-pick', 'aria-label': `Select @${a.acct}` });
  pick.addEventListener('change', onSelect);
  item.addEventListener('answered', () => { pick.checked = false; pick.disabled = true; onSelect(); });
  const count = Number(r.notifications_count || 0);
  const last = r.last_status;
  item.append(
    authorLine(a, h('a', { href: `/notifications/requests/${r.id}`, class: 'request-count',
      'aria-label': `${plural(count, 'notification', 'notifications')} from @${a.acct}: open` }, plural(count, 'notification', 'notifications'))),
    last ? h('a', { href: `/notifications/requests/${r.id}`, class: 'request-preview', tabindex: '-1' },
      last.spoiler_text ? `CW: ${last.spoiler_text}` : textOf(last.content) || '(attachments only)') : null,
    h('div', { class: 'request-foot' }, pick, requestChoices(r), timeEl(r.updated_at || r.created_at)));
  return item;
}

export function requestsView(ctx) {
  ctx.title('Filtered notifications');
  const head = heading('Filtered notifications');
  head.classList.add('with-back');
  head.prepend(h('button', { type: 'button', class: 'back', 'aria-label': 'Back', title: 'Back',
    onclick: () => ctx.back() }, icon('back')));
  // the ticked ones, answered at once (the bulk routes)
  const acceptAll = h('button', { type: 'button', class: 'primary', disabled: true }, 'Accept selected');
  const dismissAll = h('button', { type: 'button', disabled: true }, 'Dismiss selected');
  const picked = () => [...f.list.querySelectorAll('.request-pick:checked')].map((c) => c.closest('.request'));
  const paintBulk = () => {
    const n = picked().length;
    acceptAll.disabled = dismissAll.disabled = n === 0;
    acceptAll.textContent = n ? `Accept ${n}` : 'Accept selected';
    dismissAll.textContent = n ? `Dismiss ${n}` : 'Dismiss selected';
  };
  const bulk = (verb, said) => async () => {
    const rows = picked();
    if (!rows.length) return;
    acceptAll.disabled = dismissAll.disabled = true;
    try {
      await api(`/api/v1/notifications/requests/${verb}`, { method: 'POST', query: { id: rows.map((r) => r.dataset.id) } });
      for (const row of rows) row.querySelector('.choices').answer(said);
      toast(`${plural(rows.length, 'request', 'requests')} ${verb === 'accept' ? 'accepted' : 'dismissed'}`);
    } catch (err) { toast(errorText(err), 'error'); } finally { paintBulk(); }
  };
  acceptAll.addEventListener('click', bulk('accept', 'Accepted: their notifications are in your list'));
  dismissAll.addEventListener('click', bulk('dismiss', 'Dismissed'));
  const f = feed({ path: '/api/v1/notifications/requests', signal: ctx.signal, label: 'Notification requests',
    empty: 'No filtered notifications.', render: (r) => requestRow(r, ctx, paintBulk) });
  const bar = h('div', { class: 'bulk-bar', role: 'group', 'aria-label': 'Selected requests' }, acceptAll, dismissAll);
  return [head,
    h('p', { class: 'hint' }, 'Notifications from people your notification policy filters. Accept to see them with the others; dismiss to drop them. ',
      h('a', { href: '/settings#notification-policy-head' }, 'Change the policy')),
    has('POST', '/api/v1/notifications/requests/accept') ? bar : null, f.root];
}

export function requestView(ctx, id) {
  ctx.title('Filtered notifications');
  const head = heading('Filtered notifications');
  head.classList.add('with-back');
  head.prepend(h('button', { type: 'button', class: 'back', 'aria-label': 'Back', title: 'Back',
    onclick: () => ctx.back() }, icon('back')));
  const box = h('div', { class: 'request-page' }, h('p', { role: 'status' }, 'Loading…'));
  api(`/api/v1/notifications/requests/${id}`).then((r) => {
    if (ctx.signal.aborted) return;
    const a = r.account;
    head.querySelector('h1').textContent = `From ${displayName(a)}`;
    ctx.title(`Filtered notifications from @${a.acct}`);
    const choices = requestChoices(r);
    const notes = feed({ path: '/api/v1/notifications', query: { account_id: a.id, include_filtered: 'true' },
      signal: ctx.signal, label: `Notifications from @${a.acct}`, empty: 'No notifications.',
      render: (n) => renderNotification(n, ctx) });
    box.replaceChildren(renderAccountRow(a), choices, notes.root);
  }).catch((err) => box.replaceChildren(h('p', { class: 'error', role: 'alert' },
    err.status === 404 ? 'This request was accepted or dismissed already.' : errorText(err))));
  return [head, box];
}

// Settings: who gets filtered (Mastodon 4.3's v2 policy: accept, filter or drop each)
const POLICY = [
  ['for_not_following', 'People you don\'t follow', 'Until you manually approve them'],
  ['for_not_followers', 'People not following you', 'Including people who have been following you fewer than 3 days'],
  ['for_new_accounts', 'New accounts', 'Created within the past 30 days'],
  ['for_private_mentions', 'Unsolicited private mentions', 'Filtered unless it\'s in reply to your own mention or if you follow the sender'],
  ['for_limited_accounts', 'Moderated accounts', 'Limited by server moderators'],
];
const POLICY_ACTIONS = [['accept', 'Accept'], ['filter', 'Filter'], ['drop', 'Ignore']];

export function policySection() {
  if (!has('GET', '/api/v2/notifications/policy')) return [];
  const canSave = has('PATCH', '/api/v2/notifications/policy');
  const rows = POLICY.map(([name, label, hint]) => {
    const select = h('select', { name, disabled: true, 'aria-describedby': `${name}-hint` },
      ...POLICY_ACTIONS.map(([v, l]) => h('option', { value: v }, l)));
    select.addEventListener('change', async () => {
      select.disabled = true;
      try {
        const p = await api('/api/v2/notifications/policy', { method: 'PATCH', form: { [name]: select.value } });
        select.value = p[name];
        toast('Notification policy saved');
      } catch (err) { toast(errorText(err), 'error'); } finally { select.disabled = !canSave; }
    });
    return [name, select, h('div', { class: 'policy-row' },
      h('label', { class: 'policy-label', for: `policy-${name}` }, h('strong', {}, label),
        h('span', { class: 'hint', id: `${name}-hint` }, hint)), select)];
  });
  for (const [name, select] of rows) select.id = `policy-${name}`;
  api('/api/v2/notifications/policy').then((p) => {
    for (const [name, select] of rows) { if (p[name]) select.value = p[name]; select.disabled = !canSave; }
  }).catch((err) => toast(errorText(err), 'error'));
  return [h('section', { class: 'settings-section', 'aria-labelledby': 'notification-policy-head' },
    h('h2', { id: 'notification-policy-head' }, 'Filter notifications from'),
    h('p', { class: 'hint' }, 'Filtered notifications wait under "Filtered notifications" in Notifications; ignored ones are dropped.'),
    ...rows.map(([, , row]) => row))];
}

// --- profiles ---------------------------------------------------------------------------
// Featured hashtags and featured accounts under a profile's card
export function profileFeatured(ctx, account, tagged = null) {
  const box = h('div', { class: 'profile-featured' });
  if (has('GET', '/api/v1/accounts/{}/featured_tags')) {
    api(`/api/v1/accounts/${account.id}/featured_tags`).then((tags) => {
      if (ctx.signal.aborted || !tags.length) return;
      box.prepend(h('section', { class: 'featured-tags', 'aria-labelledby': 'featured-tags-head' },
        h('h2', { id: 'featured-tags-head' }, 'Featured hashtags'),
        h('ul', { class: 'tag-chips' }, ...tags.map((t) => h('li', {},
          h('a', { href: `${profilePath(account)}/tagged/${encodeURIComponent(t.name)}`, class: 'tag-chip',
            'aria-current': tagged && tagged.toLowerCase() === t.name.toLowerCase() ? 'page' : null },
            h('strong', {}, '#' + t.name), ' ',
            h('span', { class: 'meta' }, plural(Number(t.statuses_count || 0), 'post', 'posts'),
              t.last_status_at ? ` · last ${dayText(t.last_status_at)}` : '')))))));
    }).catch(() => {});
  }
  if (has('GET', '/api/v1/accounts/{}/endorsements')) {
    api(`/api/v1/accounts/${account.id}/endorsements`, { query: { limit: 40 } }).then((people) => {
      if (ctx.signal.aborted || !people.length) return;
      box.append(h('section', { class: 'endorsed', 'aria-labelledby': 'endorsed-head' },
        h('h2', { id: 'endorsed-head' }, 'Featured accounts'),
        h('div', { class: 'accounts' }, ...people.map((a) => renderAccountRow(a)))));
    }).catch(() => {});
  }
  return box;
}

// "Feature on profile" / "Remove from featured" (for an account one follows,
// as Mastodon: it features only those), in the profile's … menu
export function profileMenu(account, getRel, setRel) {
  const id = 'profile-menu-' + account.id;
  const endorse = h('button', { type: 'button', class: 'action' });
  const muteFor = h('button', { type: 'button', class: 'action' }, 'Mute for a while…');
  const list = h('div', { class: 'post-menu-list', id, role: 'group', 'aria-label': 'More', hidden: true }, endorse, muteFor);
  const btn = h('button', { type: 'button', class: 'profile-menu-button', 'aria-label': `More for @${account.acct}`,
    title: 'More', 'aria-expanded': 'false', 'aria-controls': id }, icon('more'));
  const box = h('div', { class: 'post-menu profile-menu' }, btn, list);
  const paint = () => {
    const rel = getRel();
    endorse.textContent = rel.endorsed ? 'Remove from featured' : 'Feature on profile';
    endorse.disabled = !rel.endorsed && !rel.following;
    endorse.title = endorse.disabled ? 'Follow them first: you feature people you follow' : '';
    endorse.hidden = !has('POST', '/api/v1/accounts/{}/endorse');
    muteFor.hidden = !!rel.muting || !has('POST', '/api/v1/accounts/{}/mute');
    box.hidden = endorse.hidden && muteFor.hidden;
  };
  const set = (open) => {
    if (open) paint();
    btn.setAttribute('aria-expanded', String(open));
    list.hidden = !open;
    if (open) document.addEventListener('click', outside, true);
    else document.removeEventListener('click', outside, true);
  };
  const outside = (e) => { if (!box.contains(e.target)) set(false); };
  btn.addEventListener('click', () => {
    const open = btn.getAttribute('aria-expanded') !== 'true';
    set(open);
    if (open) list.querySelector('button:not(:disabled)')?.focus();
  });
  box.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && !list.hidden) { e.preventDefault(); e.stopPropagation(); set(false); btn.focus(); }
  });
  endorse.addEventListener('click', async () => {
    const on = !getRel().endorsed;
    set(false);
    btn.focus();
    try {
      const rel = await api(`/api/v1/accounts/${account.id}/${on ? 'endorse' : 'unendorse'}`, { method: 'POST' });
      setRel(rel);
      toast(on ? `@${account.acct} is featured on your profile` : `@${account.acct} is no longer featured`);
    } catch (err) { toast(errorText(err), 'error'); }
  });
  muteFor.addEventListener('click', () => {
    set(false);
    openMute(account, btn, setRel);
  });
  paint();
  return { node: box, paint };
}

// Mastodon's Mute dialog: for how long, and whether their notifications go too
const MUTE_FOR = [['0', 'Indefinitely'], ['300', '5 minutes'], ['1800', '30 minutes'], ['3600', '1 hour'],
  ['21600', '6 hours'], ['86400', '1 day'], ['259200', '3 days'], ['604800', '7 days']];

function openMute(account, opener, setRel) {
  const duration = h('select', { name: 'duration' }, ...MUTE_FOR.map(([v, l]) => h('option', { value: v }, l)));
  const notes = h('input', { type: 'checkbox', name: 'notifications', checked: true });
  const yes = h('button', { type: 'submit', class: 'primary' }, 'Mute');
  const no = h('button', { type: 'button' }, 'Cancel');
  const dialog = h('dialog', { class: 'dialog', 'aria-labelledby': 'mute-head' },
    h('form', { method: 'dialog', onsubmit: async (e) => {
      e.preventDefault();
      yes.disabled = true;
      try {
        const rel = await api(`/api/v1/accounts/${account.id}/mute`, { method: 'POST',
          form: { duration: duration.value, notifications: notes.checked ? 'true' : 'false' } });
        setRel(rel);
        dialog.close();
        toast(`@${account.acct} muted${duration.value === '0' ? '' : ' for ' + duration.selectedOptions[0].textContent}`);
      } catch (err) { yes.disabled = false; toast(errorText(err), 'error'); }
    } },
    h('h2', { id: 'mute-head' }, `Mute @${account.acct}?`),
    h('p', { class: 'hint' }, 'You won\'t see their posts or boosts; they can still see yours and follow you, and won\'t know they are muted.'),
    h('label', { class: 'field' }, h('span', {}, 'Duration'), duration),
    h('label', { class: 'check' }, notes, ' Hide notifications from them'),
    h('div', { class: 'dialog-buttons' }, no, yes)));
  no.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => { dialog.remove(); if (opener.isConnected) opener.focus(); });
  document.body.append(dialog);
  dialog.showModal();
  duration.focus();
}

// The private note: only its writer sees it (relationship.note); saved when
// the box loses focus, or with Ctrl+Enter
export function privateNote(account, rel) {
  if (!has('POST', '/api/v1/accounts/{}/note')) return null;
  let saved = rel.note || '';
  const id = 'note-' + account.id;
  const text = h('textarea', { id, class: 'private-note-text', rows: '2', maxlength: '2000',
    placeholder: 'Click to add a note', 'aria-describedby': id + '-hint' });
  text.value = saved;
  const state = h('span', { class: 'meta', role: 'status' });
  const save = async () => {
    if (text.value === saved) return;
    const value = text.value;
    state.textContent = 'Saving…';
    try {
      const r = await api(`/api/v1/accounts/${account.id}/note`, { method: 'POST', form: { comment: value } });
      saved = r.note ?? value;
      state.textContent = 'Saved';
    } catch (err) { state.textContent = ''; toast(errorText(err), 'error'); }
  };
  text.addEventListener('blur', save);
  text.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); save(); }
    if (e.key === 'Escape') { text.value = saved; text.blur(); }
  });
  text.addEventListener('input', () => { state.textContent = ''; });
  return h('div', { class: 'private-note' },
    h('label', { for: id, class: 'private-note-label' }, 'Note ', h('span', { class: 'meta', id: id + '-hint' }, '(only you see it)'), ' ', state),
    text);
}

// The posts of one account with one hashtag (a featured hashtag's link)
export function taggedPosts(ctx, account, tag, render) {
  return h('section', { class: 'tagged-posts' },
    h('p', { class: 'tagged-head' }, `Posts with #${tag} · `, h('a', { href: profilePath(account) }, 'All posts')),
    feed({ path: `/api/v1/accounts/${account.id}/statuses`, query: { tagged: tag }, signal: ctx.signal,
      label: `Posts by ${displayName(account)} with #${tag}`, empty: `No posts with #${tag}.`, render }).root);
}

// --- Settings pages ----------------------------------------------------------------------
export const SETTINGS_PAGES = [
  ['featured_tags', 'Featured hashtags', 'GET', '/api/v1/featured_tags'],
  ['followed_tags', 'Followed hashtags', 'GET', '/api/v1/followed_tags'],
  ['mutes', 'Muted accounts', 'GET', '/api/v1/mutes'],
  ['blocks', 'Blocked accounts', 'GET', '/api/v1/blocks'],
  ['domain_blocks', 'Blocked domains', 'GET', '/api/v1/domain_blocks'],
];

export function settingsLinks() {
  const offered = SETTINGS_PAGES.filter(([, , m, p]) => has(m, p));
  if (!offered.length) return [];
  return [h('nav', { class: 'settings-section settings-links', 'aria-labelledby': 'your-lists-head' },
    h('h2', { id: 'your-lists-head' }, 'Your lists'),
    h('ul', {}, ...offered.map(([key, label]) => h('li', {}, h('a', { href: `/settings/${key}` }, label)))))];
}

function page(ctx, label, ...nodes) {
  ctx.title(label);
  return [heading(label), ...nodes, backToSettings()];
}

export function settingsPage(ctx, key) {
  const known = SETTINGS_PAGES.find(([k]) => k === key);
  if (!known) return [heading('Not found'), h('p', {}, 'There is nothing at this address.')];
  return { featured_tags: featuredTags, followed_tags: followedTags, mutes, blocks, domain_blocks: domainBlocks }[key](ctx, known[1]);
}

function featuredTags(ctx, label) {
  const list = h('ul', { class: 'setting-list', 'aria-label': label });
  const offers = h('ul', { class: 'tag-chips suggestions', 'aria-label': 'Suggestions' });
  const offersHead = h('h2', { hidden: true }, 'Suggestions: hashtags you used lately');
  const load = async () => {
    try {
      const [tags, suggested] = await Promise.all([api('/api/v1/featured_tags'),
        has('GET', '/api/v1/featured_tags/suggestions') ? api('/api/v1/featured_tags/suggestions') : []]);
      if (ctx.signal.aborted) return;
      list.replaceChildren(...(tags.length ? tags.map((t) => h('li', { class: 'setting-row' },
        h('div', {}, h('a', { href: '/tags/' + encodeURIComponent(t.name.toLowerCase()) }, h('strong', {}, '#' + t.name)),
          h('p', { class: 'meta' }, plural(Number(t.statuses_count || 0), 'post', 'posts'),
            t.last_status_at ? ` · last used ${dayText(t.last_status_at)}` : '')),
        act(h('button', { type: 'button', class: 'danger', 'aria-label': `Remove #${t.name}` }, 'Remove'), async () => {
          await api(`/api/v1/featured_tags/${t.id}`, { method: 'DELETE' });
          toast(`#${t.name} is no longer featured`);
          await load();
        }))) : [h('li', { class: 'empty' }, 'No featured hashtags yet.')]));
      offers.replaceChildren(...suggested.map((t) => h('li', {},
        act(h('button', { type: 'button', class: 'tag-chip', 'aria-label': `Feature #${t.name}` }, '+ #' + t.name), async () => {
          await add(t.name);
        }))));
      offersHead.hidden = offers.hidden = !suggested.length;
    } catch (err) { list.replaceChildren(h('li', { class: 'error' }, errorText(err))); }
  };
  const add = async (name) => {
    await api('/api/v1/featured_tags', { method: 'POST', form: { name } });
    toast(`#${name} is featured on your profile`);
    await load();
  };
  const input = h('input', { name: 'name', 'aria-label': 'Hashtag to feature', placeholder: '#hashtag', required: true, maxlength: '101', autocomplete: 'off' });
  const form = h('form', { class: 'inline-form', onsubmit: async (e) => {
    e.preventDefault();
    const name = input.value.trim().replace(/^#/, '');
    if (!name) return;
    try { await add(name); input.value = ''; } catch (err) { toast(errorText(err), 'error'); }
  } }, input, h('button', { type: 'submit', class: 'primary' }, 'Feature'));
  load();
  return page(ctx, label, h('p', { class: 'hint' }, 'Shown on your profile, each a link to your posts with it (up to 10).'),
    has('POST', '/api/v1/featured_tags') ? form : null, list, offersHead, offers);
}

function followedTags(ctx, label) {
  const f = feed({ path: '/api/v1/followed_tags', signal: ctx.signal, label, keyOf: (t) => t.id || t.name,
    empty: 'You follow no hashtags. Follow one from its page: its posts come to your home.',
    render: (t) => {
      const btn = h('button', { type: 'button', 'aria-label': `Unfollow #${t.name}`, 'aria-pressed': 'true' }, 'Unfollow');
      let following = true;
      act(btn, async () => {
        const r = await api(`/api/v1/tags/${encodeURIComponent(t.name)}/${following ? 'unfollow' : 'follow'}`, { method: 'POST' });
        following = !!r.following;
        btn.textContent = following ? 'Unfollow' : 'Follow';
        btn.setAttribute('aria-label', `${following ? 'Unfollow' : 'Follow'} #${t.name}`);
        btn.setAttribute('aria-pressed', String(following));
        toast(following ? `Following #${t.name}` : `Unfollowed #${t.name}`);
      });
      return h('div', { class: 'setting-row' },
        h('a', { href: '/tags/' + encodeURIComponent(t.name) }, h('strong', {}, '#' + t.name)), btn);
    } });
  return page(ctx, label, f.root);
}

// an account with its Undo button (Unmute, Unblock): once undone, the button puts it back
function undoableRow(a, [off, on, offDone, onDone], extra = null) {
  let active = true;
  const btn = h('button', { type: 'button', 'aria-label': `${off} @${a.acct}` }, off);
  act(btn, async () => {
    const rel = await api(`/api/v1/accounts/${a.id}/${(active ? off : on).toLowerCase()}`, { method: 'POST' });
    emit('relationship', rel);
    active = !active;
    btn.textContent = active ? off : on;
    btn.setAttribute('aria-label', `${active ? off : on} @${a.acct}`);
    toast(`@${a.acct} ${active ? onDone : offDone}`);
  });
  return h('div', { class: 'setting-account' }, renderAccountRow(a, h('div', { class: 'setting-account-side' }, extra, btn)));
}

function mutes(ctx, label) {
  const f = feed({ path: '/api/v1/mutes', signal: ctx.signal, label, empty: 'You mute nobody.',
    render: (a) => undoableRow(a, ['Unmute', 'Mute', 'unmuted', 'muted again'],
      h('span', { class: 'meta' }, a.mute_expires_at ? `Until ${fullDate(a.mute_expires_at)}` : 'Indefinitely')) });
  return page(ctx, label, h('p', { class: 'hint' }, 'You don\'t see their posts; they can still see yours and follow you.'), f.root);
}

function blocks(ctx, label) {
  const f = feed({ path: '/api/v1/blocks', signal: ctx.signal, label, empty: 'You block nobody.',
    render: (a) => undoableRow(a, ['Unblock', 'Block', 'unblocked', 'blocked again']) });
  return page(ctx, label, h('p', { class: 'hint' }, 'They can\'t follow you or see your posts, and you don\'t see theirs.'), f.root);
}

// Mastodon's warning before blocking a whole domain
function confirmDomainBlock(domain, opener) {
  return new Promise((resolve) => {
    const yes = h('button', { type: 'submit', class: 'danger solid' }, 'Block entire domain');
    const no = h('button', { type: 'button' }, 'Cancel');
    const dialog = h('dialog', { class: 'dialog', 'aria-labelledby': 'domain-block-head', 'aria-describedby': 'domain-block-text' },
      h('form', { method: 'dialog', onsubmit: (e) => { e.preventDefault(); resolve(true); dialog.close(); } },
        h('h2', { id: 'domain-block-head' }, `Block ${domain}?`),
        h('div', { id: 'domain-block-text' },
          h('p', {}, 'Are you really, really sure you want to block the entire ', h('strong', {}, domain),
            '? In most cases a few targeted blocks or mutes are sufficient and preferable.'),
          h('p', {}, 'You will not see content from that domain in any public timelines or your notifications. ' +
            'Your followers from that domain will be removed.')),
        h('div', { class: 'dialog-buttons' }, no, yes)));
    no.addEventListener('click', () => dialog.close());
    dialog.addEventListener('close', () => { resolve(false); dialog.remove(); if (opener?.isConnected) opener.focus(); });
    document.body.append(dialog);
    dialog.showModal();
    no.focus();
  });
}

function domainBlocks(ctx, label) {
  let f;
  const render = (domain) => {
    const btn = h('button', { type: 'button', 'aria-label': `Unblock ${domain}` }, 'Unblock');
    const row = h('div', { class: 'setting-row' }, h('strong', { class: 'domain' }, domain), btn);
    act(btn, async () => {
      await api('/api/v1/domain_blocks', { method: 'DELETE', form: { domain } });
      toast(`${domain} unblocked`);
      row.remove();
    });
    return row;
  };
  const make = () => feed({ path: '/api/v1/domain_blocks', signal: ctx.signal, label, keyOf: (d) => d,
    empty: 'You block no domains.', render });
  f = make();
  const wrap = h('div', {}, f.root);
  const input = h('input', { name: 'domain', 'aria-label': 'Domain to block', placeholder: 'example.com', required: true,
    maxlength: '253', autocomplete: 'off', autocapitalize: 'none', spellcheck: 'false' });
  const submit = h('button', { type: 'submit', class: 'danger' }, 'Block domain');
  const form = h('form', { class: 'inline-form', onsubmit: async (e) => {
    e.preventDefault();
    const domain = input.value.trim().replace(/^https?:\/\//, '').replace(/\/.*$/, '').replace(/^@/, '').toLowerCase();
    if (!domain) return;
    if (!await confirmDomainBlock(domain, submit)) return;
    submit.disabled = true;
    try {
      await api('/api/v1/domain_blocks', { method: 'POST', form: { domain } });
      toast(`${domain} blocked`);
      input.value = '';
      f = make();
      wrap.replaceChildren(f.root);
    } catch (err) { toast(errorText(err), 'error'); } finally { submit.disabled = false; }
  } }, input, submit);
  return page(ctx, label,
    h('p', { class: 'hint' }, 'You will not see posts or notifications from accounts on a blocked domain, and your followers there are removed.'),
    has('POST', '/api/v1/domain_blocks') ? form : null, wrap);
}
