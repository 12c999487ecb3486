// The compose box: live character counter (instance configuration), reply
// (in_reply_to_id and a prefilled mention), visibility, a content warning
// (spoiler_text, behind the CW toggle), a poll (2-4 options and a duration,
// behind the Poll toggle), @ and # completion
// from the search API, and an Idempotency-Key per draft so a retried post is
// posted once. "Schedule" (where the server schedules statuses) takes a
// date and time: the post is then a scheduled status, posted at that time
// (listed under Scheduled posts). A draft (text, warning, visibility) is kept in localStorage
// per account and reply target until it is posted or emptied, so switching
// views or reloading never loses it. Images (the Add images button, paste,
// drag and drop; up to 4, not with a poll) upload at once, each with its
// progress, then "Processing" until the server has made it ready; each has
// an alt text field (sent with PUT /api/v1/media/:id when posting) and a
// remove button; Post waits for them. A post with images may have no text.
import { api, request, session, instanceInfo } from './api.js';
import { h, icon, toast, errorText, displayName } from './ui.js';
import { upload, uploadError, IMAGE_TYPES, MAX_IMAGES } from './media.js';
import { VISIBILITY_LABEL } from './status.js';
import { has, choices } from './features.js';

let seq = 0;
const POLL_DURATIONS = [[300, '5 minutes'], [1800, '30 minutes'], [3600, '1 hour'],
  [21600, '6 hours'], [86400, '1 day'], [259200, '3 days'], [604800, '7 days']];
const RANK = { public: 0, unlisted: 1, private: 2, direct: 3 };

function newKey() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

function defaultVisibility() { return session.me()?.source?.privacy || 'public'; }

function draftKey(replyTo) {
  return `redpoll.draft.${session.me()?.id || ''}.${replyTo ? replyTo.id : 'new'}`;
}
function loadDraft(replyTo) {
  try { return JSON.parse(localStorage.getItem(draftKey(replyTo))); } catch { return null; }
}
function saveDraft(replyTo, draft) {
  try {
    if (draft && (draft.text.trim() || draft.warning.trim())) {
      localStorage.setItem(draftKey(replyTo), JSON.stringify(draft));
    } else localStorage.removeItem(draftKey(replyTo));
  } catch { /* storage full or refused: the draft lives on screen only */ }
}

// text: what the box starts with (a mention), before any draft of it
// The length a post counts, as Mastodon's: a link counts as characters_reserved_per_url
// (23) whatever its length, a mention of another server's account as its username only.
const URL_CHARS = 23;
const URL_RE = /(^|[^\p{L}\p{N}_/@.])https?:\/\/[^\s<>"]*[^\s<>".,;:!?)\]']/giu;  // as validate.status_length
const REMOTE_MENTION_RE = /(^|[^\p{L}\p{N}_/])(@\w[\w.]*)@[\w.-]+\.[a-z]{2,}/giu;
export function counted(text, perUrl = URL_CHARS) {
  const short = text.replace(URL_RE, (_, before) => before + 'x'.repeat(perUrl))
    .replace(REMOTE_MENTION_RE, (_, before, local) => before + local);
  return [...short].length;
}

export function composer({ replyTo = null, onPosted, onCancel, autofocus = false, collapsible = false, text = '' } = {}) {
  const id = 'compose-' + (++seq);
  let max = 500, perUrl = URL_CHARS;
  let key = null;
  const me = session.me();
  const area = h('textarea', { id, name: 'status', 'aria-label': 'Compose', rows: replyTo ? '3' : '4',
    placeholder: replyTo ? 'Write your reply' : 'What is happening?', 'aria-autocomplete': 'list',
    'aria-controls': id + '-suggest', 'aria-describedby': id + '-count' });
  const counter = h('span', { class: 'counter', id: id + '-count' });
  // the visibilities this server takes (its OpenAPI document says which)
  const offered = choices('POST', '/api/v1/statuses', 'visibility');
  const visibility = h('select', { 'aria-label': 'Visibility', name: 'visibility' },
    Object.entries(VISIBILITY_LABEL).filter(([v]) => !offered || offered.includes(v))
      .map(([v, label]) => h('option', { value: v }, label)));
  const post = h('button', { type: 'submit', class: 'primary' }, 'Post');
  // a content warning: shown first, the text behind "Show more" (counted with it, as Mastodon)
  const warning = h('input', { type: 'text', name: 'spoiler_text', class: 'content-warning',
    'aria-label': 'Content warning', placeholder: 'Content warning', hidden: true, maxlength: '500' });
  const cw = h('button', { type: 'button', class: 'cw-toggle tool', 'aria-pressed': 'false',
    title: 'Add a content warning' }, 'CW');
  function setWarning(on) {
    cw.setAttribute('aria-pressed', String(on));
    warning.hidden = !on;
    if (!on) warning.value = '';
    update();
  }
  cw.addEventListener('click', () => {
    const on = cw.getAttribute('aria-pressed') !== 'true';
    setWarning(on);
    if (on) warning.focus();
  });
  warning.addEventListener('input', () => { update(); key = null; });
  // scheduling: a local date and time, sent as ISO 8601 (UTC)
  const canSchedule = !replyTo && has('GET', '/api/v1/scheduled_statuses');
  const when = h('input', { type: 'datetime-local', name: 'scheduled_at', class: 'schedule-at',
    'aria-label': 'Schedule for', hidden: true });
  const sched = canSchedule ? h('button', { type: 'button', class: 'schedule-toggle tool', 'aria-pressed': 'false',
    'aria-label': 'Schedule', title: 'Post later, at a time you choose' }, icon('clock')) : null;
  function setSchedule(on) {
    if (!sched) return;
    sched.setAttribute('aria-pressed', String(on));
    when.hidden = !on;
    if (on && !when.value) {  // ten minutes ahead, in local time, to start from
      const d = new Date(Date.now() + 10 * 60_000 - new Date().getTimezoneOffset() * 60_000);
      when.value = d.toISOString().slice(0, 16);
    }
    if (!on) when.value = '';
    post.textContent = on ? 'Schedule post' : 'Post';
    key = null;
  }
  if (sched) sched.addEventListener('click', () => setSchedule(sched.getAttribute('aria-pressed') !== 'true'));
  when.addEventListener('input', () => { key = null; });
  // a poll: 2 to 4 option fields, single or multiple choice, a duration
  const pollOptions = h('div', { class: 'poll-options' });
  const addOption = h('button', { type: 'button', class: 'add-option' }, 'Add an option');
  const duration = h('select', { 'aria-label': 'Poll duration', name: 'poll_duration' },
    POLL_DURATIONS.map(([secs, label]) => h('option', { value: String(secs) }, label)));
  duration.value = '86400';
  const multiple = h('input', { type: 'checkbox', name: 'poll_multiple' });
  const pollBox = h('fieldset', { class: 'compose-poll', hidden: true },
    h('legend', {}, 'Poll'), pollOptions,
    h('div', { class: 'compose-row' }, addOption, duration,
      h('label', { class: 'poll-multiple' }, multiple, ' Multiple choice')));
  const pollToggle = h('button', { type: 'button', class: 'poll-toggle tool', 'aria-pressed': 'false',
    'aria-label': 'Poll', title: 'Add a poll' }, icon('poll'));
  function optionField() {
    const n = pollOptions.children.length + 1;
    const input = h('input', { type: 'text', class: 'poll-option-input', maxlength: '50',
      'aria-label': `Option ${n}`, placeholder: `Option ${n}` });
    input.addEventListener('input', () => { update(); key = null; });
    pollOptions.append(input);
    addOption.hidden = pollOptions.children.length >= 4;
    return input;
  }
  function setPoll(on) {
    pollToggle.setAttribute('aria-pressed', String(on));
    pollBox.hidden = !on;
    pollOptions.replaceChildren();
    if (on) { optionField(); optionField(); }
    multiple.checked = false;
    paintMedia();  // images and a poll exclude each other
  }
  addOption.addEventListener('click', () => { optionField().focus(); update(); });
  pollToggle.addEventListener('click', () => {
    const on = pollToggle.getAttribute('aria-pressed') !== 'true';
    setPoll(on);
    if (on) pollOptions.firstChild.focus();
  });
  if (!has('POST', '/api/v1/polls/{}/votes')) pollToggle.hidden = true;
  const pollValues = () => [...pollOptions.children].map((x) => x.value.trim()).filter(Boolean);
  const pollOn = () => pollToggle.getAttribute('aria-pressed') === 'true';

  // images: each uploads as soon as it is chosen; Post waits for them all
  const canAttach = has('POST', '/api/v2/media');
  const attached = [];  // {file, media, state: uploading|processing|ready|failed, alt, node, abort}
  const picker = h('input', { type: 'file', accept: IMAGE_TYPES.join(','), multiple: true,
    hidden: true, tabindex: '-1', 'aria-hidden': 'true' });
  const addImages = h('button', { type: 'button', class: 'add-images tool', 'aria-label': 'Add images',
    title: `Add images (up to ${MAX_IMAGES})`, hidden: !canAttach }, icon('image'));
  const mediaList = h('ul', { class: 'compose-media', 'aria-label': 'Attached images', hidden: true });
  const sensitive = h('input', { type: 'checkbox', name: 'sensitive' });
  const sensitiveBox = h('label', { class: 'compose-sensitive', hidden: true }, sensitive, ' Mark images as sensitive');
  addImages.addEventListener('click', () => picker.click());
  picker.addEventListener('change', () => { addFiles(picker.files); picker.value = ''; });
  function paintMedia() {
    attached.forEach((x, i) => {
      x.alt.setAttribute('aria-label', `Alt text for image ${i + 1}`);
      x.removeButton.setAttribute('aria-label', `Remove image ${i + 1}`);
    });
    mediaList.hidden = !attached.length;
    sensitiveBox.hidden = !attached.length;
    if (!attached.length) sensitive.checked = false;
    addImages.disabled = attached.length >= MAX_IMAGES || pollOn();
    addImages.title = pollOn() ? 'A post has a poll or images, not both' : `Add images (up to ${MAX_IMAGES})`;
    pollToggle.disabled = attached.length > 0;
    pollToggle.title = attached.length ? 'A post has a poll or images, not both' : 'Add a poll';
    key = null;
    update();
  }
  function addFiles(files) {
    if (!canAttach) return;
    if (pollOn()) { toast('A post has a poll or images, not both', 'error'); return; }
    const list = [...files];
    const room = MAX_IMAGES - attached.length;
    if (list.length > room) toast(`Up to ${MAX_IMAGES} images per post`, 'error');
    list.slice(0, Math.max(room, 0)).forEach(attach);
  }
  function attach(file) {
    const entry = { file, media: null, state: 'uploading', abort: new AbortController() };
    const bar = h('progress', { max: '100', value: '0', 'aria-hidden': 'true' });
    const state = h('span', { class: 'media-state' }, 'Uploading…');
    const thumb = h('div', { class: 'compose-thumb' }, bar, state);
    entry.alt = h('textarea', { class: 'alt-text', rows: '2', maxlength: '1500',
      placeholder: 'Alt text: describe the image for people who cannot see it' });
    entry.alt.addEventListener('input', () => { key = null; });
    entry.removeButton = h('button', { type: 'button', class: 'remove-media', title: 'Remove' }, '×');
    entry.node = h('li', { class: 'compose-item', 'aria-busy': 'true' }, thumb, entry.alt, entry.removeButton);
    entry.removeButton.addEventListener('click', () => {
      entry.abort.abort();
      const at = attached.indexOf(entry);
      if (at >= 0) attached.splice(at, 1);
      entry.node.remove();
      paintMedia();
      (attached[Math.min(at, attached.length - 1)]?.removeButton || area).focus();
    });
    attached.push(entry);
    mediaList.append(entry.node);
    paintMedia();
    upload(file, (st, f) => {
      if (entry.abort.signal.aborted) return;
      entry.state = st;
      bar.value = Math.round(f * 100);
      state.textContent = st === 'uploading' ? `Uploading ${Math.round(f * 100)}%` : 'Processing…';
    }, entry.abort.signal).then((media) => {
      if (entry.abort.signal.aborted) return;
      entry.media = media;
      entry.state = 'ready';
      const img = h('img', { src: media.preview_url || media.url, alt: '' });
      thumb.replaceChildren(img);
      entry.node.setAttribute('aria-busy', 'false');
      update();
    }).catch((err) => {
      if (entry.abort.signal.aborted) return;
      entry.state = 'failed';
      entry.node.classList.add('failed');
      entry.node.setAttribute('aria-busy', 'false');
      entry.alt.hidden = true;
      thumb.replaceChildren(h('p', { class: 'media-error', role: 'alert' }, uploadError(err, file)));
      update();
    });
  }
  area.addEventListener('paste', (e) => {
    const files = [...(e.clipboardData?.files || [])].filter((f) => f.type.startsWith('image/'));
    if (files.length && canAttach) { e.preventDefault(); addFiles(files); }
  });
  const suggest = h('ul', { id: id + '-suggest', role: 'listbox', class: 'suggestions', hidden: true,
    'aria-label': 'Suggestions' });
  const form = h('form', { class: 'compose' + (replyTo ? ' reply' : ''), 'aria-label': replyTo ? 'Reply' : 'New post' },
    replyTo ? h('p', { class: 'replying' }, 'Replying to ', h('strong', {}, '@' + replyTo.account.acct)) : null,
    warning, area, suggest, pollBox, mediaList, sensitiveBox, picker,
    canSchedule ? when : null,
    // one row, on a phone too: the choices left, the counter and the buttons right
    h('div', { class: 'compose-row compose-bar' }, h('div', { class: 'compose-tools' }, visibility, addImages, cw, pollToggle, sched),
      counter, onCancel ? h('button', { type: 'button', class: 'cancel' }, 'Cancel') : null, post));

  form.querySelector('.compose-bar .cancel')?.addEventListener('click', () => onCancel());
  if (collapsible) {
    // folded a moment after focus leaves, not at once: a tap on a post below
    // lands on what it was aimed at, not on what the page moved up under it
    form.classList.add('collapsible', 'folded');
    let folding = null;
    form.addEventListener('focusin', () => { clearTimeout(folding); form.classList.remove('folded'); });
    form.addEventListener('focusout', () => {
      clearTimeout(folding);
      folding = setTimeout(() => { if (!form.contains(document.activeElement)) form.classList.add('folded'); }, 400);
    });
  }
  if (canAttach) {  // images dropped on the box
    const files = (e) => e.dataTransfer && [...e.dataTransfer.types].includes('Files');
    form.addEventListener('dragover', (e) => { if (files(e)) { e.preventDefault(); form.classList.add('dragging'); } });
    form.addEventListener('dragleave', (e) => { if (!form.contains(e.relatedTarget)) form.classList.remove('dragging'); });
    form.addEventListener('drop', (e) => {
      if (!files(e)) return;
      e.preventDefault();
      form.classList.remove('dragging');
      addFiles(e.dataTransfer.files);
    });
  }

  let vis = defaultVisibility();
  if (replyTo && RANK[replyTo.visibility] > RANK[vis]) vis = replyTo.visibility;
  if (offered && !offered.includes(vis)) vis = 'public';
  visibility.value = vis;
  const draft = loadDraft(replyTo);
  if (draft) {
    area.value = draft.text || '';
    if (draft.warning) { warning.hidden = false; warning.value = draft.warning; cw.setAttribute('aria-pressed', 'true'); }
    if (draft.visibility && (!offered || offered.includes(draft.visibility))) visibility.value = draft.visibility;
    if (text && !area.value.includes(text.trim())) area.value = text + area.value;
  } else if (text) {
    area.value = text;
  } else if (replyTo) {
    const names = [replyTo.account.acct, ...(replyTo.mentions || []).map((m) => m.acct)]
      .filter((acct, i, all) => acct !== me?.acct && all.indexOf(acct) === i);
    area.value = names.map((n) => '@' + n).join(' ') + (names.length ? ' ' : '');
    if (replyTo.spoiler_text) {  // a reply keeps the warning it answers (Mastodon)
      warning.hidden = false;
      warning.value = replyTo.spoiler_text;
      cw.setAttribute('aria-pressed', 'true');
    }
  }

  function update() {
    const left = max - counted(area.value, perUrl) - [...warning.value].length;
    counter.textContent = String(left);
    counter.classList.toggle('over', left < 0);
    counter.classList.toggle('near', left >= 0 && left <= 20);
    counter.setAttribute('aria-label', `${left} characters left`);
    const busy = attached.some((x) => x.state === 'uploading' || x.state === 'processing');
    const failed = attached.some((x) => x.state === 'failed');
    const ready = attached.some((x) => x.state === 'ready');
    post.disabled = left < 0 || (!area.value.trim() && !ready) || busy || failed ||
      (pollOn() && pollValues().length < 2);
    post.title = busy ? 'Waiting for the images to upload' : failed ? 'Remove the image that failed first' : '';
    form.setAttribute('aria-busy', String(busy));
    form.classList.toggle('has-content', !!(area.value.trim() || warning.value || attached.length ||
      pollOn() || !when.hidden));
  }
  instanceInfo().then((info) => {
    const n = info?.configuration?.statuses?.max_characters;
    if (Number.isInteger(n) && n > 0) { max = n; update(); }
    const u = info?.configuration?.statuses?.characters_reserved_per_url;
    if (Number.isInteger(u) && u > 0) { perUrl = u; update(); }
  }).catch(() => {});
  update();

  // --- completion -----------------------------------------------------------------
  let options = [], active = -1, timer = null, asked = 0;
  function closeSuggest() {
    options = []; active = -1; suggest.hidden = true; suggest.replaceChildren();
    area.removeAttribute('aria-activedescendant');
  }
  function currentToken() {
    const before = area.value.slice(0, area.selectionStart);
    // as the server's MENTION and TAG (conversations/conversation.py): no
    // mention after '/' ("/@ann" is a path), no tag after '/' or '&'
    const m = before.match(/(^|[^\w@#\/&]|&(?=@))([@#])([\p{L}\p{N}_]{1,30})$/u);
    return m ? { sigil: m[2], word: m[3], start: before.length - m[3].length - 1 } : null;
  }
  function choose(i) {
    const tok = currentToken();
    const opt = options[i];
    if (!tok || !opt) return;
    const end = area.selectionStart;
    area.setRangeText(opt.insert + ' ', tok.start, end, 'end');
    closeSuggest();
    update();
    area.focus();
  }
  function show() {
    suggest.replaceChildren(...options.map((opt, i) => h('li', { id: `${id}-opt-${i}`, role: 'option',
      'aria-selected': i === active ? 'true' : 'false',
      onmousedown: (e) => { e.preventDefault(); choose(i); } }, opt.label)));
    suggest.hidden = !options.length;
    if (active >= 0) area.setAttribute('aria-activedescendant', `${id}-opt-${active}`);
    else area.removeAttribute('aria-activedescendant');
  }
  async function lookup() {
    const tok = currentToken();
    if (!tok) { closeSuggest(); return; }
    const mine = ++asked;
    const type = tok.sigil === '@' ? 'accounts' : 'hashtags';
    try {
      const found = await api('/api/v2/search', { query: { q: tok.sigil + tok.word, type, limit: 5, resolve: 'false' } });
      if (mine !== asked) return;
      options = type === 'accounts'
        ? (found.accounts || []).map((a) => ({ insert: '@' + a.acct, label: `${displayName(a)} @${a.acct}` }))
        : (found.hashtags || []).map((t) => ({ insert: '#' + t.name, label: '#' + t.name }));
      active = options.length ? 0 : -1;
      show();
    } catch { closeSuggest(); }
  }
  let saving = null;
  const keep = () => {
    clearTimeout(saving);
    saving = setTimeout(() => saveDraft(replyTo, { text: area.value, warning: warning.value,
      visibility: visibility.value }), 300);
  };
  warning.addEventListener('input', keep);
  visibility.addEventListener('change', keep);
  area.addEventListener('input', () => {
    update();
    keep();
    key = null;  // a changed draft is a new post
    clearTimeout(timer);
    if (currentToken() && has('GET', '/api/v2/search')) timer = setTimeout(lookup, 150); else closeSuggest();
  });
  area.addEventListener('keydown', (e) => {
    if (options.length && !suggest.hidden) {
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        active = (active + (e.key === 'ArrowDown' ? 1 : options.length - 1)) % options.length;
        show();
        return;
      }
      if (e.key === 'Enter' || e.key === 'Tab') { e.preventDefault(); choose(Math.max(active, 0)); return; }
      if (e.key === 'Escape') { e.preventDefault(); closeSuggest(); return; }
    }
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); form.requestSubmit(); }
    if (e.key === 'Escape') { if (onCancel) onCancel(); else area.blur(); }
  });
  area.addEventListener('blur', () => setTimeout(closeSuggest, 150));

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (post.disabled) return;
    key = key || newKey();
    const later = !when.hidden && when.value ? new Date(when.value) : null;
    if (later && Number.isNaN(later.getTime())) { toast('Schedule: choose a date and time', 'error'); return; }
    post.disabled = true;
    try {
      const fields = { status: area.value, visibility: visibility.value,
        spoiler_text: warning.value.trim() || undefined,
        scheduled_at: later ? later.toISOString() : undefined,
        in_reply_to_id: replyTo ? replyTo.id : undefined };
      const withPoll = pollOn();
      const images = attached.filter((x) => x.state === 'ready');
      for (const x of images) {  // alt text, as written now
        const description = x.alt.value.trim();
        if (description !== (x.media.description || '')) {
          x.media = await api(`/api/v1/media/${x.media.id}`, { method: 'PUT', form: { description } });
        }
      }
      if (images.length) {
        fields.media_ids = images.map((x) => x.media.id);
        if (sensitive.checked) fields.sensitive = true;
      }
      // a poll's options and the media ids are lists: sent as JSON
      const { data } = await request('/api/v1/statuses', { method: 'POST',
        headers: { 'Idempotency-Key': key },
        ...(withPoll ? { body: { ...fields, poll: { options: pollValues(),
          expires_in: Number(duration.value), multiple: multiple.checked } } }
          : images.length ? { body: fields } : { form: fields }) });
      key = null;
      clearTimeout(saving);
      saveDraft(replyTo, null);
      area.value = '';
      if (withPoll) setPoll(false);
      if (attached.length) { attached.splice(0); mediaList.replaceChildren(); paintMedia(); }
      if (!replyTo) {
        setWarning(false);
        // the next post starts from the account's default again (Mastodon)
        let next = defaultVisibility();
        if (offered && !offered.includes(next)) next = 'public';
        visibility.value = next;
      }
      update();
      if (later) {  // a scheduled status, not a status: nothing to show in a timeline yet
        setSchedule(false);
        toast('Scheduled');
        return;
      }
      toast(replyTo ? 'Reply posted' : 'Posted');
      if (onPosted) onPosted(data);
    } catch (err) {
      toast(`Post: ${errorText(err)}`, 'error');
    } finally {
      update();
    }
  });
  if (autofocus) requestAnimationFrame(() => { area.focus(); area.setSelectionRange(area.value.length, area.value.length); });
  return form;
}
