// Mastodon's keyboard shortcuts, outside text fields and dialogs: on the
// focused post (j / k move between posts) and across the app (n writes, /
// searches, g then a letter goes somewhere, ? lists them all in a dialog).
import { h } from './ui.js';
import { session } from './api.js';

const SECTIONS = [
  ['Posts', [
    [['j'], 'Next post'], [['k'], 'Previous post'], [['Enter', 'o'], 'Open the post'],
    [['p'], "Open the author's profile"], [['r'], 'Reply'], [['m'], 'Mention the author'],
    [['f'], 'Favourite'], [['b'], 'Boost'], [['d'], 'Bookmark'],
    [['x'], 'Show or hide the text behind a content warning'], [['h'], 'Show or hide sensitive media'],
    [['e'], 'Open the media'],
  ]],
  ['Anywhere', [
    [['n'], 'New post'], [['/', 's'], 'Search'], [['Backspace'], 'Back'],
    [['Esc'], 'Leave the text field, close a dialog or menu'], [['?'], 'These shortcuts'],
  ]],
  ['Go to', [
    [['g', 'h'], 'Home'], [['g', 'n'], 'Notifications'], [['g', 'l'], 'Local timeline'],
    [['g', 't'], 'Federated timeline'], [['g', 'd'], 'Direct messages'], [['g', 'f'], 'Favourites'],
    [['g', 'k'], 'Bookmarks'], [['g', 'u'], 'Your profile'], [['g', 's'], 'Settings'],
  ]],
];

const GOTO = {
  h: () => '/', n: () => '/notifications', l: () => '/explore', t: () => '/public',
  d: () => '/conversations', f: () => '/favourites', k: () => '/bookmarks', s: () => '/settings',
  u: () => (session.me() ? '/@' + session.me().acct : null),
};

function keyList(keys, then) {
  const out = [];
  keys.forEach((k, i) => {
    if (i) out.push(then ? ' then ' : ' or ');
    out.push(h('kbd', {}, k));
  });
  return out;
}

let helpOpener = null;
export function showHelp() {
  const open = document.querySelector('dialog.key-help');
  if (open) { open.close(); return; }
  helpOpener = document.activeElement;
  const close = h('button', { type: 'button', class: 'dialog-close', 'aria-label': 'Close' }, '×');
  const dialog = h('dialog', { class: 'dialog key-help', 'aria-labelledby': 'key-help-head' },
    h('div', { class: 'dialog-head' }, h('h2', { id: 'key-help-head' }, 'Keyboard shortcuts'), close),
    h('div', { class: 'sections' }, SECTIONS.map(([title, rows]) => h('section', {}, h('h3', {}, title),
      h('dl', {}, rows.map(([keys, what]) => [h('dt', {}, keyList(keys, title === 'Go to')), h('dd', {}, what)]))))));
  close.addEventListener('click', () => dialog.close());
  dialog.addEventListener('keydown', (e) => { if (e.key === '?') { e.preventDefault(); dialog.close(); } });
  dialog.addEventListener('close', () => {
    dialog.remove();
    if (helpOpener && helpOpener.isConnected) helpOpener.focus({ preventScroll: true });
  });
  document.body.append(dialog);
  dialog.showModal();
}

// ctx: {main, go(path), back(), compose({text})}
export function installKeys({ main, go, back, compose }) {
  let gAt = 0;
  document.addEventListener('keydown', (e) => {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
    const t = e.target instanceof Element ? e.target : document.body;
    if (t.closest('input, textarea, select, [contenteditable]:not([contenteditable="false"])')) return;
    if (document.querySelector('dialog[open]')) return;  // the dialog has the keys (Esc closes it)
    const key = e.key;
    if (gAt && Date.now() - gAt < 2000) {
      gAt = 0;
      const path = GOTO[key] && GOTO[key]();
      if (path) { e.preventDefault(); go(path); }
      return;
    }
    gAt = 0;
    const posts = [...main.querySelectorAll('article')].filter((a) => !a.hidden);
    const post = t.closest('article');
    const act = (selector) => {
      const el = post && post.querySelector(selector);
      if (el && !el.disabled) { e.preventDefault(); el.click(); }
    };
    switch (key) {
      case 'j': case 'k': {
        if (!posts.length) return;
        e.preventDefault();
        const at = posts.indexOf(post);
        const next = key === 'j' ? Math.min(at + 1, posts.length - 1) : Math.max(at < 0 ? 0 : at - 1, 0);
        posts[next].focus();
        posts[next].scrollIntoView({ block: 'nearest' });
        return;
      }
      case 'Enter': if (t.tagName === 'ARTICLE') act('a.time'); return;
      case 'o': act('a.time'); return;
      case 'p': act('header a.names'); return;
      case 'r': act('footer.actions .action.reply'); return;
      case 'f': act('footer.actions .action.favourite'); return;
      case 'b': act('footer.actions .action.boost'); return;
      case 'd': act('footer.actions .action.bookmark'); return;
      case 'x': act('.show-more'); return;
      case 'h': act('.media-cover:not([hidden]), .media-hide:not([hidden])'); return;  // the one shown: h toggles
      case 'e': act('.media-item:not(.media-video)'); return;
      case 'm': {
        const acct = post && post.querySelector('header .acct');
        if (acct) { e.preventDefault(); compose({ text: acct.textContent.trim() + ' ' }); }
        return;
      }
      case 'n': e.preventDefault(); compose({}); return;
      case '/': case 's': {
        e.preventDefault();
        const box = location.pathname === '/search' && main.querySelector('input[type=search]');
        if (box) box.focus(); else go('/search');
        return;
      }
      case '?': e.preventDefault(); showHelp(); return;
      case 'g': if (session.token()) gAt = Date.now(); return;
      case 'Backspace': e.preventDefault(); back(); return;
      default:
    }
  });
}
