// Media: uploading an image (POST /api/v2/media with progress, then GET
// /api/v1/media/:id until it is processed), a status's attachments (1 to 4:
// image and GIF previews over their blurhash, video and audio players, links
// to other files; sensitive ones behind a cover) and the viewer (a modal
// dialog: Esc closes, arrow keys move).
import { api, session, emit, ApiError } from './api.js';
import { h } from './ui.js';
import { blurhashCanvas, averageColor } from './blurhash.js';

export const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/gif'];
export const MAX_IMAGES = 4;
const PROCESS_POLL_MS = 500;
const PROCESS_WAIT_MS = 120_000;

// POST /api/v2/media by XMLHttpRequest (fetch reports no upload progress).
// onProgress(fraction); resolves to the MediaAttachment, rejects with ApiError.
function send(file, onProgress, signal) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/api/v2/media');
    xhr.setRequestHeader('Accept', 'application/json');
    const token = session.token();
    if (token) xhr.setRequestHeader('Authorization', 'Bearer ' + token);
    xhr.upload.addEventListener('progress', (e) => { if (e.lengthComputable) onProgress(e.loaded / e.total); });
    xhr.addEventListener('load', () => {
      let data = null;
      try { data = xhr.responseText ? JSON.parse(xhr.responseText) : null; } catch { data = { error: xhr.responseText.slice(0, 200) }; }
      if (xhr.status === 401 && token && token === session.token()) emit('unauthorized');
      if (xhr.status >= 200 && xhr.status < 300) resolve(data);
      else reject(new ApiError(xhr.status, data));
    });
    xhr.addEventListener('error', () => reject(new ApiError(0, { error: 'The server cannot be reached' })));
    xhr.addEventListener('abort', () => reject(new ApiError(0, { error: 'Upload cancelled' })));
    if (signal) signal.addEventListener('abort', () => xhr.abort());
    const body = new FormData();
    body.append('file', file, file.name || 'image');
    xhr.send(body);
  });
}

// What a failed upload says to a person: the server's words, with the usual
// causes named plainly.
export function uploadError(err, file) {
  const name = file && file.name ? `${file.name}: ` : '';
  if (err.status === 413) return `${name}too large. ${err.message}`;
  if (err.status === 422) return `${name}${err.message}`;
  return name + (err.message || 'upload failed');
}

// Upload one image; onState(state, fraction) with 'uploading' (fraction),
// then 'processing'; resolves to the attachment once it has its URLs.
export async function upload(file, onState, signal) {
  if (!IMAGE_TYPES.includes(file.type)) {
    throw new ApiError(422, { error: `${file.type || 'this file type'} is not supported: JPEG, PNG, WebP or GIF images only` });
  }
  onState('uploading', 0);
  let media = await send(file, (f) => onState('uploading', f), signal);
  const until = Date.now() + PROCESS_WAIT_MS;
  while (!media.url) {
    onState('processing', 1);
    if (Date.now() > until) throw new ApiError(0, { error: 'the server is still processing the image: try again' });
    await new Promise((r) => setTimeout(r, PROCESS_POLL_MS));
    if (signal && signal.aborted) throw new ApiError(0, { error: 'Upload cancelled' });
    media = await api(`/api/v1/media/${media.id}`);
  }
  return media;
}

// --- showing attachments ---------------------------------------------------------------
// What a status's attachments show as (Mastodon's web app does the same):
// images and GIF-like videos ("gifv") as previews in the grid, both opening
// the viewer; a video as a player in the grid (its preview as the poster,
// native controls, nothing loaded before it is played); a sound as an audio
// player with its description; anything else as a link to the file.
const SHOWN_MAX = 4;  // attachments shown of one status (Mastodon's limit)
const KINDS = ['image', 'gifv', 'video', 'audio'];
const VISUAL = ['image', 'gifv', 'video'];
const NAMES = { image: 'Image', gifv: 'GIF', video: 'Video' };
const FILE_NAME_MAX = 60;  // characters of a file's name shown in its link

export function kindOf(m) { return !m.type ? 'image' : KINDS.includes(m.type) ? m.type : 'unknown'; }
const srcOf = (m) => m.url || m.remote_url;

// "2 images", "1 video", "3 attachments": a status's media in words.
export function mediaSummary(list) {
  const kinds = new Set(list.map(kindOf));
  const n = list.length;
  const word = kinds.size === 1 ? { image: 'image', gifv: 'GIF', video: 'video', audio: 'sound' }[[...kinds][0]] : null;
  return word ? `${n} ${word}${n === 1 ? '' : 's'}` : `${n} attachment${n === 1 ? '' : 's'}`;
}

// GIF-like videos play while on screen, muted and looped, unless the reader
// asked for less motion: then on hover or focus only.
const reducedMotion = () => window.matchMedia('(prefers-reduced-motion: reduce)').matches;
const play = (v) => { const p = v.play(); if (p) p.catch(() => {}); };  // (a pause() may interrupt it)
let onScreen = null;
function watchGif(video, on) {
  if (!onScreen) {
    onScreen = new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (e.isIntersecting && !reducedMotion()) play(e.target); else e.target.pause();
      }
    });
  }
  if (on) onScreen.observe(video); else { onScreen.unobserve(video); video.pause(); }
}

function focusPosition(m) {
  const f = m.meta && m.meta.focus;
  if (!f || typeof f.x !== 'number' || typeof f.y !== 'number') return null;
  return `${Math.round(((f.x + 1) / 2) * 100)}% ${Math.round(((1 - f.y) / 2) * 100)}%`;
}

function placeholder(m, item) {
  const canvas = blurhashCanvas(m.blurhash);
  if (!canvas) {
    const avg = averageColor(m.blurhash);
    if (avg) item.style.backgroundColor = avg;
  }
  return canvas;
}

function badges(...names) {
  const shown = names.filter(Boolean);
  return shown.length ? h('span', { class: 'media-badges', 'aria-hidden': 'true' },
    shown.map((b) => h('span', { class: 'media-badge' }, b))) : null;
}

// An image or a GIF-like video: a button opening the viewer.
function thumb(m, i, all) {
  const alt = (m.description || '').trim();
  const gif = kindOf(m) === 'gifv';
  const label = alt ? null : `Open ${gif ? 'GIF' : 'image'} ${i + 1} of ${all.length}`;
  const item = h('button', { type: 'button', class: `media-item${gif ? ' media-gifv' : ''}`, 'aria-label': label, title: alt || null });
  const canvas = placeholder(m, item);
  let show, hide;
  if (gif) {
    const video = h('video', { muted: true, loop: true, playsinline: true, preload: 'none', disablePictureInPicture: true,
      'aria-label': alt || null, hidden: true });
    item.append(canvas || '', video, badges('GIF', alt && 'ALT'));
    const hover = (on) => { if (reducedMotion() && !video.hidden) (on ? play(video) : video.pause()); };
    item.addEventListener('mouseenter', () => hover(true));
    item.addEventListener('mouseleave', () => hover(false));
    item.addEventListener('focus', () => hover(true));
    item.addEventListener('blur', () => hover(false));
    show = () => {
      if (!video.getAttribute('src')) { if (m.preview_url) video.poster = m.preview_url; video.src = srcOf(m); }
      video.hidden = false;
      watchGif(video, true);
    };
    hide = () => { watchGif(video, false); video.hidden = true; };
  } else {
    const img = h('img', { alt, loading: 'lazy', decoding: 'async', hidden: true, draggable: 'false' });
    const pos = focusPosition(m);
    if (pos) img.style.objectPosition = pos;
    img.addEventListener('load', () => img.classList.add('loaded'));
    img.addEventListener('error', () => img.classList.add('failed'));
    item.append(canvas || '', img, badges(alt && 'ALT'));
    show = () => { if (!img.getAttribute('src')) img.src = m.preview_url || srcOf(m); img.hidden = false; };
    hide = () => { img.hidden = true; };
  }
  item.addEventListener('click', () => openViewer(all, i, item));
  return { item, show, hide };
}

// A video: a player in the grid, its preview as the poster; nothing is
// fetched before it is played (preload none), nor before a cover is lifted.
function player(m) {
  const alt = (m.description || '').trim();
  const item = h('div', { class: 'media-item media-video' });
  const canvas = placeholder(m, item);
  const video = h('video', { controls: true, preload: 'none', playsinline: true, hidden: true,
    'aria-label': alt || 'Video', title: alt || null });
  item.append(canvas || '', video);
  const show = () => {
    if (!video.getAttribute('src')) { if (m.preview_url) video.poster = m.preview_url; video.src = srcOf(m); }
    video.hidden = false;
  };
  return { item, show, hide: () => { video.pause(); video.hidden = true; } };
}

// A sound: its description over an audio player.
function sound(m) {
  const alt = (m.description || '').trim();
  const audio = h('audio', { controls: true, preload: 'none', 'aria-label': alt || 'Audio' });
  const item = h('figure', { class: 'media-audio' }, h('figcaption', {}, alt || 'Audio'), audio);
  const show = () => { if (!audio.getAttribute('src')) audio.src = srcOf(m); };
  return { item, show, hide: () => audio.pause() };
}

// Anything else: a link to the file.
function fileLink(m) {
  // (as Mastodon's: its server's URL first; a file of a domain whose media
  // are rejected is not kept here, and a click is the reader's own choice)
  const url = m.remote_url || m.url;
  let name = url;
  try { name = decodeURIComponent(new URL(url).pathname.split('/').pop()) || url; } catch { /* as it is */ }
  if (name.length > FILE_NAME_MAX) name = name.slice(0, FILE_NAME_MAX - 1) + '…';
  const alt = (m.description || '').trim();
  const item = h('li', {}, h('a', { href: url, target: '_blank', rel: 'noopener noreferrer nofollow' }, name),
    alt ? h('span', { class: 'media-file-alt' }, ' — ', alt) : null);
  return { item, show: () => {}, hide: () => {} };
}

// The attachments of a status (null when it has none): images, GIFs and
// videos in a grid, sounds and other files under it; a sensitive status's
// behind "Sensitive content — show" (nothing loaded or played until then).
export function renderMedia(s) {
  const list = (s.media_attachments || []).filter((m) => m && (srcOf(m) || (kindOf(m) === 'image' && m.preview_url))).slice(0, SHOWN_MAX);
  if (!list.length) return null;
  const hidden = !!s.sensitive && !s.spoiler_text;  // a warning's "Show more" hides them already
  const visual = list.filter((m) => VISUAL.includes(kindOf(m)));
  const sounds = list.filter((m) => kindOf(m) === 'audio');
  const files = list.filter((m) => kindOf(m) === 'unknown');
  const items = visual.map((m, i) => (kindOf(m) === 'video' ? player(m) : thumb(m, i, visual)));
  const soundItems = sounds.map(sound);
  const fileItems = files.map(fileLink);
  const parts = [];
  if (visual.length) {
    const grid = h('div', { class: `media-grid n${visual.length}` }, items.map((x) => x.item));
    if (visual.length === 1) {
      const size = visual[0].meta && (visual[0].meta.small || visual[0].meta.original);
      const aspect = size && size.width && size.height ? size.width / size.height : 16 / 9;
      grid.style.aspectRatio = String(Math.min(Math.max(aspect, 3 / 4), 2));
    }
    parts.push(grid);
  }
  if (soundItems.length) parts.push(h('div', { class: 'media-sounds' }, soundItems.map((x) => x.item)));
  if (fileItems.length) parts.push(h('ul', { class: 'media-files' }, fileItems.map((x) => x.item)));
  const all = [...items, ...soundItems, ...fileItems];
  const content = h('div', { class: 'media-content' }, parts);
  const box = h('div', { class: 'media-gallery', role: 'group',
    'aria-label': list.length === 1 ? NAMES[kindOf(list[0])] || (kindOf(list[0]) === 'audio' ? 'Audio' : 'Attachment')
      : mediaSummary(list) }, content);
  if (s.sensitive) {
    const cover = h('button', { type: 'button', class: 'media-cover' },
      h('strong', {}, 'Sensitive content'), h('span', {}, ' — show'));
    const again = h('button', { type: 'button', class: 'media-hide', 'aria-label': 'Hide sensitive content', hidden: true }, 'Hide');
    const set = (open) => {
      all.forEach((x) => (open ? x.show() : x.hide()));
      content.inert = !open;
      cover.hidden = open;
      again.hidden = !open;
      box.classList.toggle('covered', !open);
    };
    cover.addEventListener('click', () => {
      set(true);
      const first = content.querySelector('button, video, audio, a');
      if (first) first.focus();
    });
    again.addEventListener('click', () => { set(false); cover.focus(); });
    box.append(cover, again);
    set(!hidden);
  } else {
    all.forEach((x) => x.show());
  }
  return box;
}

// --- the viewer ------------------------------------------------------------------------
// Images, GIFs and videos of one status, one at a time: a GIF plays looped
// and muted, a video with its controls.
export function openViewer(all, start, from) {
  let at = start;
  let media = null;
  const caption = h('p', { class: 'viewer-caption' });
  const count = h('span', { class: 'viewer-count' });
  const prev = h('button', { type: 'button', class: 'viewer-prev', 'aria-label': 'Previous' }, '‹');
  const next = h('button', { type: 'button', class: 'viewer-next', 'aria-label': 'Next' }, '›');
  const close = h('button', { type: 'button', class: 'viewer-close', 'aria-label': 'Close' }, '×');
  const figure = h('figure', {}, caption);
  const dialog = h('dialog', { class: 'viewer', 'aria-label': 'Image viewer' },
    h('div', { class: 'viewer-bar' }, count, close),
    h('div', { class: 'viewer-stage' }, prev, figure, next));
  function show() {
    const m = all[at];
    const kind = kindOf(m);
    const alt = (m.description || '').trim();
    if (media && media.pause) media.pause();
    if (media) media.remove();
    if (kind === 'image') {
      media = h('img', { class: 'viewer-image', alt, src: srcOf(m) || m.preview_url });
    } else {
      const gif = kind === 'gifv';
      media = h('video', { class: 'viewer-image', src: srcOf(m), poster: m.preview_url || null, playsinline: true,
        muted: gif, loop: gif, controls: !gif, 'aria-label': alt || NAMES[kind] });
      if (!gif || !reducedMotion()) play(media);
      if (gif) media.addEventListener('click', () => (media.paused ? play(media) : media.pause()));
    }
    media.style.backgroundColor = averageColor(m.blurhash) || '';
    figure.prepend(media);
    caption.textContent = alt;
    caption.hidden = !alt;
    count.textContent = all.length > 1 ? `${at + 1} / ${all.length}` : '';
    prev.hidden = next.hidden = all.length < 2;
    dialog.setAttribute('aria-label', `${NAMES[kind] || 'Image'} ${at + 1} of ${all.length}`);
  }
  const move = (d) => { at = (at + d + all.length) % all.length; show(); };
  prev.addEventListener('click', () => move(-1));
  next.addEventListener('click', () => move(1));
  close.addEventListener('click', () => dialog.close());
  dialog.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowLeft') { e.preventDefault(); move(-1); }
    if (e.key === 'ArrowRight') { e.preventDefault(); move(1); }
  });
  // a click on the dark area around the picture closes it
  dialog.addEventListener('click', (e) => {
    if (e.target === dialog || e.target.classList.contains('viewer-stage')) dialog.close();
  });
  dialog.addEventListener('close', () => {
    if (media && media.pause) media.pause();
    dialog.remove();
    if (from && from.isConnected) from.focus();
  });
  document.body.append(dialog);
  show();
  dialog.showModal();
  close.focus();
  return dialog;
}
