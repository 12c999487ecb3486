// Images: uploading one (POST /api/v2/media with progress, then GET
// /api/v1/media/:id until it is processed), the gallery of a status's
// attachments (1 to 4 previews over their blurhash, sensitive ones behind a
// cover) and the viewer (a modal dialog: Esc closes, arrow keys move).
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
function focusPosition(m) {
  const f = m.meta && m.meta.focus;
  if (!f || typeof f.x !== 'number' || typeof f.y !== 'number') return null;
  return `${Math.round(((f.x + 1) / 2) * 100)}% ${Math.round(((1 - f.y) / 2) * 100)}%`;
}

function thumb(m, i, all, reveal) {
  const alt = (m.description || '').trim();
  const canvas = blurhashCanvas(m.blurhash);
  const img = h('img', { alt, loading: 'lazy', decoding: 'async', hidden: !reveal, draggable: 'false' });
  const pos = focusPosition(m);
  if (pos) img.style.objectPosition = pos;
  img.addEventListener('load', () => img.classList.add('loaded'));
  img.addEventListener('error', () => img.classList.add('failed'));
  const item = h('button', { type: 'button', class: 'media-item',
    'aria-label': alt ? null : `Open image ${i + 1} of ${all.length}`,
    title: alt || null }, canvas, img);
  if (!canvas) {
    const avg = averageColor(m.blurhash);
    if (avg) item.style.backgroundColor = avg;
  }
  if (alt) item.append(h('span', { class: 'alt-badge', 'aria-hidden': 'true' }, 'ALT'));
  const show = () => { if (!img.getAttribute('src')) img.src = m.preview_url || m.url; img.hidden = false; };
  if (reveal) show();
  item.addEventListener('click', () => openViewer(all, i, item));
  return { item, show, hide: () => { img.hidden = true; } };
}

// The gallery of a status (null when it has none): preview images in a grid,
// each opening the viewer; a sensitive status's behind "Sensitive content — show".
export function renderMedia(s) {
  const all = (s.media_attachments || []).filter((m) => m && (m.preview_url || m.url)).slice(0, MAX_IMAGES);
  if (!all.length) return null;
  const hidden = !!s.sensitive && !s.spoiler_text;  // a warning's "Show more" hides them already
  const items = all.map((m, i) => thumb(m, i, all, !hidden));
  const grid = h('div', { class: `media-grid n${all.length}` }, items.map((x) => x.item));
  const box = h('div', { class: 'media-gallery', role: 'group',
    'aria-label': all.length === 1 ? 'Image' : `${all.length} images` }, grid);
  if (all.length === 1) {
    const small = all[0].meta && all[0].meta.small;
    const aspect = small && small.width && small.height ? small.width / small.height : 16 / 9;
    grid.style.aspectRatio = String(Math.min(Math.max(aspect, 3 / 4), 2));
  }
  if (s.sensitive) {
    const cover = h('button', { type: 'button', class: 'media-cover' },
      h('strong', {}, 'Sensitive content'), h('span', {}, ' — show'));
    const again = h('button', { type: 'button', class: 'media-hide', 'aria-label': 'Hide sensitive content', hidden: true }, 'Hide');
    const set = (open) => {
      items.forEach((x) => (open ? x.show() : x.hide()));
      grid.inert = !open;
      cover.hidden = open;
      again.hidden = !open;
      box.classList.toggle('covered', !open);
    };
    cover.addEventListener('click', () => { set(true); const first = grid.querySelector('button'); if (first) first.focus(); });
    again.addEventListener('click', () => { set(false); cover.focus(); });
    box.append(cover, again);
    set(!hidden);
  }
  return box;
}

// --- the viewer ------------------------------------------------------------------------
export function openViewer(all, start, from) {
  let at = start;
  const img = h('img', { class: 'viewer-image', alt: '' });
  const caption = h('p', { class: 'viewer-caption' });
  const count = h('span', { class: 'viewer-count' });
  const prev = h('button', { type: 'button', class: 'viewer-prev', 'aria-label': 'Previous image' }, '‹');
  const next = h('button', { type: 'button', class: 'viewer-next', 'aria-label': 'Next image' }, '›');
  const close = h('button', { type: 'button', class: 'viewer-close', 'aria-label': 'Close' }, '×');
  const dialog = h('dialog', { class: 'viewer', 'aria-label': 'Image viewer' },
    h('div', { class: 'viewer-bar' }, count, close),
    h('div', { class: 'viewer-stage' }, prev, h('figure', {}, img, caption), next));
  function show() {
    const m = all[at];
    const placeholder = averageColor(m.blurhash);
    img.style.backgroundColor = placeholder || '';
    img.src = (m.type === 'image' || !m.type ? m.url : m.preview_url) || m.preview_url;  // (a video's preview)
    img.alt = (m.description || '').trim();
    caption.textContent = img.alt;
    caption.hidden = !img.alt;
    count.textContent = all.length > 1 ? `${at + 1} / ${all.length}` : '';
    prev.hidden = next.hidden = all.length < 2;
    dialog.setAttribute('aria-label', `Image ${at + 1} of ${all.length}`);
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
    dialog.remove();
    if (from && from.isConnected) from.focus();
  });
  document.body.append(dialog);
  show();
  dialog.showModal();
  close.focus();
  return dialog;
}
