// Sign up, sign in (OAuth 2 authorization code with PKCE S256, on this
// origin) and sign out (token revocation), through the public API only.
import { api, session, ApiError } from './api.js';
import { sha256 } from './sha256.js';

const APP = 'redpoll.app';
const PENDING = 'redpoll.pkce';
// (admin:*: the moderation area, moderation.js; the server's roles decide what each may do)
export const SCOPES = 'read write follow push admin:read admin:write';

function redirectUri() { return location.origin + '/oauth/callback'; }

function b64url(bytes) {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function random(n) { return crypto.getRandomValues(new Uint8Array(n)); }

export async function challengeFor(verifier) {
  const data = new TextEncoder().encode(verifier);
  const digest = crypto.subtle ? new Uint8Array(await crypto.subtle.digest('SHA-256', data)) : sha256(data);
  return b64url(digest);
}

// This browser's registration as an OAuth client (POST /api/v1/apps), kept.
async function clientApp(fresh = false) {
  let app = null;
  try { app = JSON.parse(localStorage.getItem(APP)); } catch { app = null; }
  if (app && !fresh && app.redirect_uri === redirectUri() && app.scopes === SCOPES) return app;
  const made = await api('/api/v1/apps', { method: 'POST', token: null, form: {
    client_name: 'Redpoll web', redirect_uris: redirectUri(), scopes: SCOPES,
    website: location.origin } });
  app = { client_id: made.client_id, client_secret: made.client_secret, redirect_uri: redirectUri(), scopes: SCOPES };
  localStorage.setItem(APP, JSON.stringify(app));
  return app;
}

// Runs fn(app); if the server no longer knows the app, registers again once.
async function withApp(fn) {
  const app = await clientApp();
  try { return await fn(app); } catch (err) {
    if (err instanceof ApiError && err.body && err.body.error === 'invalid_client') {
      return fn(await clientApp(true));
    }
    throw err;
  }
}

async function start(token) {
  const me = await api('/api/v1/accounts/verify_credentials', { token });
  session.set({ token, me });
  return me;
}

export async function signIn(back = '/') {
  const app = await clientApp();
  const verifier = b64url(random(48));
  const state = b64url(random(16));
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, back }));
  const query = new URLSearchParams({ response_type: 'code', client_id: app.client_id,
    redirect_uri: app.redirect_uri, scope: SCOPES, state,
    code_challenge: await challengeFor(verifier), code_challenge_method: 'S256' });
  location.assign('/oauth/authorize?' + query);
}

// The authorize page sent the browser back with ?code=&state=.
export async function finishSignIn() {
  const params = new URLSearchParams(location.search);
  let pending = null;
  try { pending = JSON.parse(sessionStorage.getItem(PENDING)); } catch { pending = null; }
  sessionStorage.removeItem(PENDING);
  if (params.get('error')) throw new Error(params.get('error_description') || params.get('error'));
  if (!pending || !params.get('code') || params.get('state') !== pending.state) {
    throw new Error('This sign-in link is not valid any more: sign in again.');
  }
  const app = await clientApp();
  const token = await api('/oauth/token', { method: 'POST', token: null, form: {
    grant_type: 'authorization_code', code: params.get('code'), redirect_uri: app.redirect_uri,
    client_id: app.client_id, client_secret: app.client_secret, code_verifier: pending.verifier } });
  await start(token.access_token);
  return pending.back || '/';
}

// Mastodon's answer to a token of an account waiting for a moderator's approval
export const PENDING_APPROVAL = 'Your login is currently pending approval';

// The server's rules and who may sign up (GET /api/v2/instance).
export async function signUpTerms() {
  const about = await api('/api/v2/instance', { token: null });
  return { rules: about.rules || [], registrations: about.registrations || { enabled: true } };
}

// Signs up (POST /api/v1/accounts with an app token, as Mastodon's clients
// do): { me } when the account may sign in now, { pending: true } when it
// waits for approval (its token is refused until then, and not kept).
export async function signUp({ username, email, password, reason, invite_code: inviteCode, agreement = true }) {
  const token = await withApp(async (app) => {
    const appToken = await api('/oauth/token', { method: 'POST', token: null, form: {
      grant_type: 'client_credentials', client_id: app.client_id,
      client_secret: app.client_secret, scope: SCOPES } });
    return api('/api/v1/accounts', { method: 'POST', token: appToken.access_token, form: {
      username, email, password, agreement: agreement ? 'true' : 'false',
      locale: navigator.language || 'en', reason: reason || undefined,
      invite_code: inviteCode || undefined } });
  });
  try {
    return { me: await start(token.access_token) };
  } catch (err) {
    if (err instanceof ApiError && err.status === 403 && err.body && err.body.error === PENDING_APPROVAL) {
      return { pending: true };
    }
    throw err;
  }
}

export async function signOut() {
  const token = session.token();
  session.clear();
  if (!token) return;
  let app = null;
  try { app = JSON.parse(localStorage.getItem(APP)); } catch { app = null; }
  if (app) {
    await api('/oauth/revoke', { method: 'POST', token: null, form: {
      client_id: app.client_id, client_secret: app.client_secret, token } });
  }
}

export async function refreshMe() {
  const s = session.get();
  if (!s) return null;
  const me = await api('/api/v1/accounts/verify_credentials');
  session.set({ ...s, me });
  return me;
}
