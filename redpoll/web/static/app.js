// Redpoll's web app: the shell (navigation, page, messages), the router over
// the History API, the unread-notifications badge and the live stream.
// Back and Forward return to a view as it was left: the router keeps the
// last few views (their DOM, live state and scroll offset) in memory, keyed
// by history entry, and puts one back instead of rendering it again.
import { api, session, bus, emit } from './api.js';
import { h, icon, toast, errorText, clear } from './ui.js';
import { startStreaming, stopStreaming, resubscribe } from './stream.js';
import { composer } from './compose.js';
import * as auth from './auth.js';
import * as views from './views.js';
import * as discover from './discover.js';
import * as notes from './notes.js';
import * as dm from './dm.js';
import * as invites from './invites.js';
import * as member from './member.js';
import { patchStatus } from './store.js';
import { loadFeatures, has, moderationSections } from './features.js';
import { installKeys } from './keys.js';

const root = document.getElementById('app');
const PUBLIC = new Set(['about', 'landing', 'signup', 'invite', 'callback', 'explore', 'public', 'tag', 'profile', 'thread']);

// The moderation area and one's warnings (moderation.js) load when first opened
function lazy(view) {
  return (ctx, ...args) => {
    const wait = h('p', { class: 'loading' }, 'Loading…');
    import('./moderation.js').then((m) => {
      if (ctx.signal.aborted || !wait.isConnected) return;
      const nodes = view(m, ctx, ...args).filter((n) => n !== null && n !== undefined && n !== false);
      wait.replaceWith(...nodes);
      const h1 = main.querySelector('h1');
      if (h1 && rendered > 1 && !main.contains(document.activeElement)) {
        h1.focus({ preventScroll: true });
      }
    }).catch((err) => { wait.replaceWith(h('p', { role: 'alert', class: 'error' }, errorText(err))); });
    return [wait];
  };
}

const ROUTES = [
  [/^\/(?:home)?$/, 'home', (c) => views.home(c)],
  [/^\/signin$/, 'landing', (c) => views.landing(c)],
  [/^\/signup$/, 'signup', (c) => views.signup(c)],
  [/^\/invite\/([A-Za-z0-9]+)$/, 'invite', (c, code) => views.signup(c, code)],
  [/^\/oauth\/callback$/, 'callback', (c) => views.callback(c)],
  [/^\/notifications$/, 'notifications', (c) => notes.notifications(c)],
  [/^\/notifications\/mentions$/, 'mentions', (c) => notes.notifications(c, true)],
  [/^\/notifications\/requests$/, 'requests', (c) => member.requestsView(c)],
  [/^\/notifications\/requests\/(\d+)$/, 'requests', (c, id) => member.requestView(c, id)],
  [/^\/conversations$/, 'conversations', (c) => dm.conversations(c)],
  [/^\/explore$/, 'explore', (c) => views.explore(c, true)],
  [/^\/public\/local$/, 'explore', (c) => views.explore(c, true)],
  [/^\/explore\/posts$/, 'explore', (c) => discover.trendingPosts(c)],
  [/^\/explore\/tags$/, 'explore', (c) => discover.trendingTags(c)],
  [/^\/explore\/links$/, 'explore', (c) => discover.trendingLinks(c)],
  [/^\/explore\/people$/, 'people', (c) => discover.people(c)],
  [/^\/public$/, 'public', (c) => views.explore(c, false)],
  [/^\/tags\/([^/]+)$/, 'tag', (c, t) => views.tag(c, t)],
  [/^\/lists$/, 'lists', (c) => views.lists(c)],
  [/^\/lists\/(\d+)$/, 'lists', (c, id) => views.listView(c, id)],
  [/^\/search$/, 'search', (c) => views.search(c)],
  [/^\/settings$/, 'settings', (c) => views.settings(c)],
  [/^\/settings\/invites$/, 'settings', (c) => invites.invitesView(c)],
  [/^\/settings\/warnings$/, 'settings', lazy((m, c) => m.myWarnings(c))],
  [/^\/settings\/(\w+)$/, 'settings', (c, key) => member.settingsPage(c, key)],
  [/^\/moderation$/, 'moderation', lazy((m, c) => m.index(c))],
  [/^\/moderation\/reports$/, 'moderation', lazy((m, c) => m.reports(c, new URLSearchParams(location.search).has('resolved')))],
  [/^\/moderation\/reports\/(\d+)$/, 'moderation', lazy((m, c, id) => m.report(c, id))],
  [/^\/moderation\/accounts$/, 'moderation', lazy((m, c) => m.accounts(c))],
  [/^\/moderation\/accounts\/(\d+)$/, 'moderation', lazy((m, c, id) => m.account(c, id))],
  [/^\/moderation\/appeals$/, 'moderation', lazy((m, c) => m.appeals(c))],
  [/^\/moderation\/domains$/, 'moderation', lazy((m, c) => m.domains(c))],
  [/^\/moderation\/server$/, 'moderation', lazy((m, c) => m.server(c))],
  [/^\/moderation\/roles$/, 'moderation', lazy((m, c) => m.roles(c))],
  [/^\/moderation\/audit$/, 'moderation', lazy((m, c) => m.audit(c))],
  [/^\/bookmarks$/, 'bookmarks', (c) => views.bookmarks(c)],
  [/^\/favourites$/, 'favourites', (c) => views.favourites(c)],
  [/^\/scheduled$/, 'scheduled', (c) => views.scheduled(c)],
  [/^\/@([^/]+)\/tagged\/([^/]+)$/, 'profile', (c, a, t) => views.profile(c, a, 'posts', t)],
  [/^\/@([^/]+)\/(followers|following)$/, 'profile', (c, a, tab) => views.profile(c, a, tab)],
  [/^\/@([^/]+)\/(with_replies|media)$/, 'profile', (c, a, tab) => views.profile(c, a, tab)],
  [/^\/@([^/]+)\/(\d+)\/(reblogs|favourites)$/, 'thread', (c, a, id, w) => views.statusAccounts(c, a, id, w)],
  [/^\/about$/, 'about', (c) => views.about(c)],
  [/^\/@([^/]+)\/(\d+)$/, 'thread', (c, a, id) => views.thread(c, a, id)],
  [/^\/@([^/]+)$/, 'profile', (c, a) => views.profile(c, a)],
];

// --- the shell ---------------------------------------------------------------------
const main = h('main', { id: 'main', tabindex: '-1' });
const badge = h('span', { class: 'badge', id: 'unread', hidden: true });
const connection = h('div', { class: 'connection', role: 'status', hidden: true });
const NAV = [
  ['/', 'Home', 'home', 'home'], ['/notifications', 'Notifications', 'bell', 'notifications'],
  ['/explore', 'Explore', 'globe', 'explore'], ['/search', 'Search', 'search', 'search'],
  ['/lists', 'Lists', 'list', 'lists'], [null, 'Profile', 'user', 'profile'],
];
// a phone's bottom bar holds five: these four and More (where Lists and Profile go)
const BAR = new Set(['home', 'notifications', 'explore', 'search']);
const navLinks = {};
const nav = h('nav', { class: 'nav', 'aria-label': 'Main' });
const extra = h('div', { class: 'nav-extra', id: 'nav-extra' });
// on a narrow screen the bottom bar has no room for these: "More" opens them
const more = h('button', { type: 'button', class: 'nav-link nav-more', 'aria-expanded': 'false',
  'aria-controls': 'nav-extra' }, icon('more'), h('span', { class: 'label' }, 'More'));
function setMore(open) {
  more.setAttribute('aria-expanded', String(open));
  extra.classList.toggle('open', open);
}
more.addEventListener('click', () => {
  const open = more.getAttribute('aria-expanded') !== 'true';
  setMore(open);
  if (open) extra.querySelector('a, button')?.focus();
});
extra.addEventListener('click', (e) => { if (e.target.closest('a, button')) setMore(false); });
document.addEventListener('click', (e) => {
  if (more.getAttribute('aria-expanded') === 'true' && !e.target.closest('.nav-extra, .nav-more')) setMore(false);
});
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && more.getAttribute('aria-expanded') === 'true') { setMore(false); more.focus(); }
});
const shell = h('div', { class: 'layout' },
  h('header', { class: 'brand' }, h('a', { href: '/', class: 'logo', 'aria-label': 'Redpoll' }, h('span', { 'aria-hidden': 'true' }, '●'), ' Redpoll')),
  nav, main, h('div', { id: 'toast', class: 'toast', role: 'status', 'aria-live': 'polite' }), connection);

function buildNav() {
  clear(nav); clear(extra);
  const me = session.me();
  if (!me) {
    nav.append(h('a', { href: '/explore', class: 'nav-link' }, icon('globe'), h('span', {}, 'Explore')),
      h('a', { href: '/about', class: 'nav-link', dataset: { key: 'about' } }, icon('list'), h('span', {}, 'About')),
      h('a', { href: '/signin', class: 'nav-link' }, icon('user'), h('span', {}, 'Sign in')));
    return;
  }
  for (const [href, label, ic, key] of NAV) {
    const a = h('a', { href: href || '/@' + me.acct, class: 'nav-link' + (BAR.has(key) ? '' : ' wide-only'), dataset: { key } },
      icon(ic), h('span', { class: 'label' }, label));
    if (key === 'notifications') {
      a.append(badge);  // the link's name is its text and the badge's: "Notifications 2 unread"
    }
    navLinks[key] = a;
    nav.append(a);
  }
  extra.append(
    ...NAV.filter(([, , , key]) => !BAR.has(key)).map(([href, label, ic, key]) => h('a', {
      href: href || '/@' + me.acct, class: 'nav-link phone-only', dataset: { key } }, icon(ic), h('span', {}, label))),
    has('GET', '/api/v1/conversations') ? navLinks.conversations = h('a', { href: '/conversations', class: 'nav-link', dataset: { key: 'conversations' } },
      icon('mail'), h('span', {}, 'Direct messages')) : '',
    h('a', { href: '/bookmarks', class: 'nav-link', dataset: { key: 'bookmarks' } }, icon('bookmark'), h('span', {}, 'Bookmarks')),
    h('a', { href: '/scheduled', class: 'nav-link', dataset: { key: 'scheduled' } }, icon('clock'), h('span', {}, 'Scheduled posts')),
    h('a', { href: '/settings', class: 'nav-link', dataset: { key: 'settings' } }, icon('gear'), h('span', {}, 'Settings')),
    h('a', { href: '/about', class: 'nav-link', dataset: { key: 'about' } }, icon('list'), h('span', {}, 'About')),
    moderationSections().length ? h('a', { href: '/moderation', class: 'nav-link', dataset: { key: 'moderation' } },
      icon('shield'), h('span', {}, 'Moderation')) : '',
    h('button', { type: 'button', class: 'nav-link', onclick: signOut }, icon('out'), h('span', {}, 'Sign out')));
  setMore(false);
  nav.append(composeButton, more, extra);
}

// --- unread notifications ---------------------------------------------------------
let unread = 0, lastRead = null;
function paintBadge() {
  badge.textContent = unread > 39 ? '40+' : String(unread);
  badge.hidden = unread === 0;
  badge.setAttribute('aria-label', `${unread} unread`);
}
const UNREAD_POLL_MS = 15000;  // when the stream carries no notification events
let unreadTimer = null;
async function loadUnread() {
  clearTimeout(unreadTimer);
  if (!session.token() || !has('GET', '/api/v1/notifications')) return;
  if (current.key !== 'notifications') unreadTimer = setTimeout(loadUnread, UNREAD_POLL_MS);
  if (document.hidden) return;
  try {
    if (has('GET', '/api/v1/notifications/unread_count')) {
      const { count } = await api('/api/v1/notifications/unread_count', { query: { limit: 40 } });
      if (current.key !== 'notifications') unread = count;
      paintBadge();
      return;
    }
    if (has('GET', '/api/v1/markers')) {
      const markers = await api('/api/v1/markers', { query: { timeline: ['notifications'] } });
      lastRead = markers?.notifications?.last_read_id || null;
    } else lastRead = localStorage.getItem('redpoll.lastRead');
    const fresh = await api('/api/v1/notifications', { query: { limit: 40, since_id: lastRead } });
    if (current.key !== 'notifications') unread = fresh.length;
    paintBadge();
  } catch { /* no badge without notifications */ }
}
bus.addEventListener('stream', (e) => {
  if (e.detail.event === 'notification' && current.key !== 'notifications') { unread++; paintBadge(); }
});
bus.addEventListener('notifications:read', async (e) => {
  unread = 0;
  paintBadge();
  const id = e.detail;
  if (lastRead && BigInt(id) <= BigInt(lastRead)) return;
  lastRead = id;
  localStorage.setItem('redpoll.lastRead', id);
  if (!has('POST', '/api/v1/markers')) return;
  try {
    await api('/api/v1/markers', { method: 'POST', form: { 'notifications[last_read_id]': id } });
  } catch { /* the badge comes back on the next load */ }
});

// live updates cut off: said at the top until they are back
let streamLost = false;
bus.addEventListener('stream:lost', () => {
  streamLost = true;
  connection.textContent = navigator.onLine === false ? 'Offline · Reconnecting…' : 'Reconnecting…';
  connection.hidden = false;
});
bus.addEventListener('stream:back', () => { streamLost = false; connection.hidden = true; connection.textContent = ''; loadUnread(); });
window.addEventListener('offline', () => {
  connection.textContent = 'Offline · Reconnecting…';
  connection.hidden = false;
});
window.addEventListener('online', () => { if (!streamLost) { connection.hidden = true; connection.textContent = ''; } });

bus.addEventListener('relationship', () => resubscribe({ stream: 'user' }));
bus.addEventListener('list:members', (e) => resubscribe({ stream: 'list', list: e.detail }));

// --- reply box ------------------------------------------------------------------------
function openReply(status, article) {
  const next = article.nextElementSibling;
  if (next && next.classList.contains('compose')) { next.querySelector('textarea').focus(); return; }
  const box = composer({ replyTo: status, autofocus: true,
    onPosted: (posted) => {
      box.remove();
      article.focus();
      patchStatus(status.id, { replies_count: (status.replies_count || 0) + 1 });
      emit('posted', posted);
    },
    onCancel: () => { box.remove(); article.focus(); } });
  article.after(box);
}

// --- a new post from any screen -------------------------------------------------------
// Home has its compose box (the button goes there); elsewhere a dialog holds
// one (Esc or Cancel closes it; the draft stays, as Home's box keeps it).
export function openCompose({ text = '' } = {}) {
  const home = main.querySelector('form.compose:not(.reply) textarea');
  if (home) {
    if (text && !home.value.includes(text.trim())) home.value = text + home.value;
    home.dispatchEvent(new Event('input'));
    home.focus();
    home.setSelectionRange(home.value.length, home.value.length);
    home.scrollIntoView({ block: 'nearest' });
    return;
  }
  if (document.querySelector('dialog.compose-dialog')) return;
  const dialog = h('dialog', { class: 'dialog compose-dialog', 'aria-labelledby': 'compose-head' });
  const close = () => dialog.close();
  const box = composer({ autofocus: true, text, onCancel: close,
    onPosted: (posted) => { close(); emit('posted', posted); } });
  dialog.append(h('div', { class: 'dialog-head' }, h('h2', { id: 'compose-head' }, 'New post'),
    h('button', { type: 'button', class: 'dialog-close', 'aria-label': 'Close', onclick: close }, '×')), box);
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}
const composeButton = h('button', { type: 'button', class: 'compose-button primary', 'aria-label': 'New post',
  title: 'New post (n)', onclick: () => openCompose() }, icon('pen'), h('span', { class: 'label' }, 'New post'));

// --- router ------------------------------------------------------------------------------
// Each history entry carries {entry, depth}: entry names the view kept for
// it, depth says how many entries of this app lie behind it (a post page's
// back arrow goes back when there is one, else home).
let current = { key: null, abort: new AbortController(), entry: null };
const kept = new Map();  // entry -> {key, nodes, scrollY, focus, title, abort}
const KEEP_VIEWS = 8;
if ('scrollRestoration' in history) history.scrollRestoration = 'manual';

function newEntry() { return Math.random().toString(36).slice(2, 12); }
function state() { return history.state && history.state.entry ? history.state : null; }
if (!state()) history.replaceState({ entry: newEntry(), depth: 0 }, '', location.href);

function title(text) { document.title = `${text} · Redpoll`; }

export function go(path, { replace = false } = {}) {
  const depth = state()?.depth || 0;
  if (replace) history.replaceState({ entry: newEntry(), depth }, '', path);
  else history.pushState({ entry: newEntry(), depth: depth + 1 }, '', path);
  render();
}

// back within the app when it was entered here, else home
export function back() {
  if ((state()?.depth || 0) > 0) history.back(); else go('/');
}

function forgetViews() {
  for (const v of kept.values()) v.abort.abort();
  kept.clear();
}

// the view being left stays alive, kept for Back / Forward (the oldest go)
function keepCurrent(next) {
  if (!current.entry || current.entry === next || !session.token() || !main.firstChild) {
    current.abort.abort();
    return;
  }
  const focus = document.activeElement && main.contains(document.activeElement) ? document.activeElement : null;
  // the first post in sight, and where: what went in above it meanwhile does not move the place
  const anchor = [...main.querySelectorAll('article')].find((a) => a.getBoundingClientRect().bottom > 0) || null;
  kept.delete(current.entry);
  kept.set(current.entry, { key: current.key, nodes: [...main.childNodes], scrollY: window.scrollY,
    anchor, anchorTop: anchor ? anchor.getBoundingClientRect().top : 0,
    focus, title: document.title, abort: current.abort });
  while (kept.size > KEEP_VIEWS) {
    const [oldest, v] = kept.entries().next().value;
    v.abort.abort();
    kept.delete(oldest);
  }
}

function markNav(key, path) {
  for (const a of nav.querySelectorAll('[data-key]')) {
    const k = a.dataset.key;
    const own = session.me() && (path === '/@' + session.me().acct || path.startsWith('/@' + session.me().acct + '/'));
    if ((k === key && k !== 'profile') || (k === 'profile' && own) || (k === 'notifications' && (key === 'mentions' || key === 'requests')) ||
        (k === 'explore' && (key === 'public' || key === 'people'))) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function render(e) {
  const entry = state()?.entry || null;
  keepCurrent(entry);
  const saved = e && e.type === 'popstate' && entry ? kept.get(entry) : null;
  if (entry) kept.delete(entry);
  if (saved && session.token()) {  // Back / Forward: the view as it was
    const left = current.key === 'notifications' && saved.key !== 'notifications';
    current = { key: saved.key, abort: saved.abort, entry };
    if (left) loadUnread();
    document.title = saved.title;
    markNav(saved.key, location.pathname);
    main.replaceChildren(...saved.nodes);
    window.scrollTo({ top: saved.scrollY });
    if (saved.anchor && saved.anchor.isConnected) {
      const moved = saved.anchor.getBoundingClientRect().top - saved.anchorTop;
      if (moved) window.scrollTo({ top: window.scrollY + moved });
    }
    if (saved.focus && saved.focus.isConnected) saved.focus.focus({ preventScroll: true });
    return;
  }
  if (saved) saved.abort.abort();
  const path = location.pathname;
  let match = null;
  for (const [re, key, view] of ROUTES) {
    const m = path.match(re);
    if (m) { match = { key, view, args: m.slice(1) }; break; }
  }
  const signedIn = !!session.token();
  if (!match) match = { key: 'missing', view: () => [views.heading('Not found'), h('p', {}, 'There is nothing at this address.')], args: [] };
  if (!signedIn && !PUBLIC.has(match.key) && match.key !== 'missing') {
    const back = path + location.search;
    match = { key: 'landing', view: (c) => { c.back = back; return views.landing(c); }, args: [] };
  }
  if (signedIn && (match.key === 'landing' || match.key === 'signup' || match.key === 'invite')) {
    history.replaceState({ entry: entry || newEntry(), depth: state()?.depth || 0 }, '', '/');
    return render();
  }
  const abort = new AbortController();
  const left = current.key === 'notifications' && match.key !== 'notifications';
  current = { key: match.key, abort, entry };
  if (left && signedIn) loadUnread();
  const ctx = { signal: abort.signal, title, go, back, reply: openReply, signOut, started };
  document.body.classList.toggle('signed-out', !signedIn);
  markNav(match.key, path);
  let nodes;
  try { nodes = match.view(ctx, ...match.args); } catch (err) {
    nodes = [views.heading('Error'), h('p', { role: 'alert' }, errorText(err))];
  }
  // a view leaves out what the server lacks as null: not a "null" text node
  main.replaceChildren(...nodes.filter((n) => n !== null && n !== undefined && n !== false));
  window.scrollTo({ top: 0 });
  const h1 = main.querySelector('h1');
  if (rendered++ && h1) h1.focus({ preventScroll: true });
  const target = location.hash.length > 1 ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
  if (target && main.contains(target)) target.scrollIntoView({ block: 'start' });
}
let rendered = 0;

document.addEventListener('click', (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = e.target.closest('a[href]');
  if (!a || a.target || a.hasAttribute('download') || a.getAttribute('href').startsWith('#')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || url.pathname.startsWith('/oauth/authorize') ||
      url.pathname.startsWith('/api/') || url.pathname.startsWith('/assets/')) return;
  e.preventDefault();
  // a #fragment: that part of the page (Settings' notification policy)
  if (url.pathname + url.search !== location.pathname + location.search) go(url.pathname + url.search + url.hash);
  else render();
});
window.addEventListener('popstate', render);
bus.addEventListener('navigate', (e) => go(e.detail));

// Mastodon's keyboard shortcuts (keys.js; ? lists them)
installKeys({ main, go, back, compose: openCompose });

// --- session ---------------------------------------------------------------------------
function started() {
  buildNav();
  startStreaming();
  loadUnread();
}

async function signOut() {
  forgetViews();
  stopStreaming();
  try { await auth.signOut(); } catch (err) { toast(`Sign out: ${errorText(err)}`, 'error'); }
  unread = 0; paintBadge();
  buildNav();
  go('/signin');
  toast('Signed out');
}

bus.addEventListener('unauthorized', () => {
  forgetViews();
  session.clear();
  stopStreaming();
  buildNav();
  go('/signin', { replace: true });
  toast('Your session has ended: sign in again.', 'error');
});

// the service worker (sw.js) keeps the shell for a start without a network, and
// shows pushed notifications; started offline, the app says so and starts again once online
function offlineStart() {
  if ('serviceWorker' in navigator && window.isSecureContext) {
    navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch(() => {});
  }
  if (navigator.onLine !== false) return false;
  connection.textContent = 'Offline · waiting for the network';
  connection.hidden = false;
  window.addEventListener('online', () => location.reload(), { once: true });
  return true;
}

async function boot() {
  root.replaceChildren(shell);
  if (offlineStart()) {
    buildNav();
    render();
    return;
  }
  // the features and who is signed in, asked side by side (neither needs the other)
  const me = session.token() ? auth.refreshMe().then(() => null, (err) => err) : null;
  await loadFeatures();
  const failed = await me;
  if (failed && failed.status !== 401) toast(errorText(failed), 'error');
  buildNav();
  if (session.token()) started();
  render();
}

boot();
