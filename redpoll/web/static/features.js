// Which API routes this server has, read from its own OpenAPI document
// (/openapi.json): the app never calls a route the server does not list, so a
// server without (say) bookmarks shows the button disabled instead of failing.
import { api } from './api.js';

let routes = null;

function norm(path) { return path.replace(/\{[^}]*\}/g, '{}'); }

export async function loadFeatures() {
  try {
    const doc = await api('/openapi.json', { token: null });
    const found = [];
    for (const [path, ops] of Object.entries(doc.paths || {})) {
      for (const method of Object.keys(ops)) found.push(method.toUpperCase() + ' ' + norm(path));
    }
    routes = new Set(found);
  } catch {
    routes = null;  // no document: assume everything Mastodon documents
  }
}

// has('POST', '/api/v1/statuses/{}/favourite')
export function has(method, path) { return routes === null || routes.has(method + ' ' + norm(path)); }
