// Small DOM helpers, safe status HTML, relative times, icons and messages.
// No innerHTML of untrusted text anywhere: status HTML is parsed inert and
// rebuilt from an allow-list of elements and attributes.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function clear(el) { while (el.firstChild) el.firstChild.remove(); return el; }

const SVG = 'http://www.w3.org/2000/svg';
const ICONS = {
  reply: 'M9 6 4 11l5 5M4 11h10a6 6 0 0 1 6 6v1',
  boost: 'M7 3 4 6l3 3M4 6h12a4 4 0 0 1 4 4v1M17 21l3-3-3-3M20 18H8a4 4 0 0 1-4-4v-1',
  favourite: 'M12 3.5l2.6 5.6 6.1.6-4.6 4.1 1.3 6-5.4-3.1-5.4 3.1 1.3-6-4.6-4.1 6.1-.6z',
  bookmark: 'M6.5 3.5h11v17L12 16l-5.5 4.5z',
  trash: 'M4 7h16M10 7V4h4v3M6.5 7l1 13h9l1-13',
  pin: 'M9 3.5h6l-1 6 3.5 3.5h-11L10 9.5zM12 13v7.5',
  home: 'M3.5 11 12 4l8.5 7M6 9.5V20h4.5v-5h3v5H18V9.5',
  bell: 'M6 17V11a6 6 0 0 1 12 0v6l1.5 2h-15zM10 21h4',
  clock: 'M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18zM12 7v5l3 3',
  globe: 'M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18zM3 12h18M12 3c3 3 3 15 0 18M12 3c-3 3-3 15 0 18',
  search: 'M10.5 4a6.5 6.5 0 1 0 0 13 6.5 6.5 0 0 0 0-13zM15.5 15.5 21 21',
  list: 'M8 6h12M8 12h12M8 18h12M4 6h.01M4 12h.01M4 18h.01',
  user: 'M12 4a4 4 0 1 0 0 8 4 4 0 0 0 0-8zM4 21a8 8 0 0 1 16 0',
  gear: 'M12 9a3 3 0 1 0 0 6 3 3 0 0 0 0-6zM12 2.5v3M12 18.5v3M2.5 12h3M18.5 12h3M5.3 5.3l2.1 2.1M16.6 16.6l2.1 2.1M5.3 18.7l2.1-2.1M16.6 7.4l2.1-2.1',
  out: 'M10 4H5v16h5M14 8l4 4-4 4M18 12H9',
  image: 'M4 5h16v14H4zM4 16l4.5-4.5 3.5 3.5 2.5-2.5L20 17M15.5 9.5h.01',
  back: 'M19 12H5M11 6l-6 6 6 6',
  more: 'M5 12h.01M12 12h.01M19 12h.01',
  mail: 'M3.5 6h17v12h-17zM3.5 6.5 12 13l8.5-6.5',
  pen: 'M4 20l1-4.5L15.5 5a2.1 2.1 0 0 1 3 3L8 18.5zM13.5 7l3 3',
  poll: 'M5 20V11M12 20V5M19 20v-6',
  shield: 'M12 3l8 3v6c0 4.5-3.4 8-8 9-4.6-1-8-4.5-8-9V6z',
};

export function icon(name) {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', 'icon icon-' + name);
  const path = document.createElementNS(SVG, 'path');
  path.setAttribute('d', ICONS[name]);
  svg.append(path);
  return svg;
}

// --- status HTML --------------------------------------------------------------
const ALLOWED = new Set(['P', 'BR', 'A', 'SPAN']);
const LINKIFY = /(https?:\/\/[^\s<]+[^\s<.,:;"')\]!?])|(^|[^\w@/])@([A-Za-z0-9_]{1,30})(?![\w@])|(^|[^\w&/#])#([\p{L}\p{N}_]{1,100})/gu;

function safeHref(href) {
  try {
    const url = new URL(href, location.origin);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
  } catch { return null; }
}

function link(url, text, cls) {
  const a = h('a', { href: url.origin === location.origin ? url.pathname + url.search : url.href,
    class: cls }, text);
  if (url.origin !== location.origin) { a.target = '_blank'; a.rel = 'noopener nofollow ugc'; }
  return a;
}

// Plain text with URLs, @mentions and #hashtags made into links.
export function linkify(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(LINKIFY)) {
    let start = m.index, node;
    if (m[1]) {
      const url = safeHref(m[1]);
      node = url ? link(url, m[1]) : m[1];
    } else if (m[3]) {
      start += m[2].length;
      node = h('a', { href: '/@' + m[3], class: 'mention' }, '@' + m[3]);
    } else {
      start += m[4].length;
      node = h('a', { href: '/tags/' + encodeURIComponent(m[5].toLowerCase()), class: 'hashtag' }, '#' + m[5]);
    }
    if (start > last) out.push(text.slice(last, start));
    out.push(node);
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function rebuild(node, inLink) {
  const out = [];
  for (const child of node.childNodes) {
    if (child.nodeType === Node.TEXT_NODE) {
      out.push(...(inLink ? [child.textContent] : linkify(child.textContent)));
    } else if (child.nodeType === Node.ELEMENT_NODE && ALLOWED.has(child.tagName)) {
      if (child.tagName === 'A') {
        const url = safeHref(child.getAttribute('href') || '');
        const text = child.textContent;
        if (!url) { out.push(text); continue; }
        const cls = (child.getAttribute('class') || '').split(/\s+/);
        if (cls.includes('mention') && url.origin === location.origin) {
          out.push(h('a', { href: url.pathname, class: 'mention' }, text));
        } else if (cls.includes('hashtag') && url.origin === location.origin) {
          out.push(h('a', { href: url.pathname, class: 'hashtag' }, text));
        } else out.push(link(url, text));
      } else {
        const el = document.createElement(child.tagName);
        if (child.tagName === 'SPAN' && child.getAttribute('class') === 'invisible') el.className = 'invisible';
        append(el, rebuild(child, inLink));
        out.push(el);
      }
    } else if (child.nodeType === Node.ELEMENT_NODE) {
      out.push(...rebuild(child, inLink));
    }
  }
  return out;
}

export function statusContent(html) {
  const tpl = document.createElement('template');
  tpl.innerHTML = html;  // a template's content is inert: nothing loads or runs
  return h('div', { class: 'content', lang: null }, rebuild(tpl.content, false));
}

// --- times --------------------------------------------------------------------
const UNITS = [['year', 31536e6], ['month', 2592e6], ['week', 6048e5], ['day', 864e5],
  ['hour', 36e5], ['minute', 6e4]];
const SHORT = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto', style: 'narrow' });
const FULL = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function relative(iso, now = Date.now()) {
  const ms = new Date(iso).getTime() - now;
  for (const [unit, size] of UNITS) {
    if (Math.abs(ms) >= size || unit === 'minute') {
      if (unit === 'minute' && Math.abs(ms) < 45e3) return 'just now';
      return SHORT.format(Math.round(ms / size), unit);
    }
  }
  return '';
}

export function fullDate(iso) { return FULL.format(new Date(iso)); }

export function timeEl(iso) {
  return h('time', { datetime: iso, title: FULL.format(new Date(iso)) }, relative(iso));
}

setInterval(() => {
  for (const t of document.querySelectorAll('time[datetime]')) t.textContent = relative(t.dateTime);
}, 30_000);

// --- messages -----------------------------------------------------------------
let toastTimer;
export function toast(text, kind = 'info') {
  const box = document.getElementById('toast');
  if (!box) return;
  box.textContent = text;
  box.className = 'toast ' + kind + ' shown';
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.className = 'toast'; box.textContent = ''; }, 5000);
}

export function errorText(err) {
  if (!err) return 'Something went wrong';
  if (err.status === 0) return 'The server cannot be reached';
  if (err.retryAt) return `${err.message || 'Refused for now'}: try again ${waitText(err.retryAt)}.`;
  return err.message || 'Something went wrong';
}

// "in 25 minutes", "in a few seconds", "at 14:05" (over two hours ahead)
export function waitText(at, now = Date.now()) {
  const s = (at - now) / 1000;
  if (s < 45) return 'in a few seconds';
  if (s < 7200) return 'in ' + plural(Math.ceil(s / 60), 'minute', 'minutes');
  return 'at ' + new Intl.DateTimeFormat(undefined, { timeStyle: 'short' }).format(new Date(at));
}

// The picture an account uploaded, or its initial on a colour from its name
// (the server's "missing" picture stands for none).
export function avatarUrl(account) {
  const url = account.avatar_static || account.avatar;
  return url && !/\/avatars\/original\/missing\.png$/.test(url) ? url : null;
}

export function avatar(account, size = 'normal') {
  const name = account.display_name || account.username || '?';
  const letter = [...name.trim()][0] || '?';
  let hue = 0;
  for (const ch of account.acct || '') hue = (hue * 31 + ch.codePointAt(0)) % 360;
  const el = h('span', { class: 'avatar ' + size, style: null, 'aria-hidden': 'true',
    dataset: { hue: String(hue % 12) } }, letter.toUpperCase());
  const url = avatarUrl(account);
  if (url) {
    const img = h('img', { src: url, alt: '', loading: 'lazy', decoding: 'async' });
    img.addEventListener('error', () => img.remove());  // the initial shows instead
    el.append(img);
  }
  return el;
}

export function displayName(account) {
  return account.display_name || account.username;
}

export function plural(n, one, many) { return `${n} ${n === 1 ? one : many}`; }
