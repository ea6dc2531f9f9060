// The gateway's own routes, called with the dashboard session (cookie + CSRF header).

/** The logged-in session: the CSRF token, the user, and the API key created in this tab (memory only). */
export const session = { csrf: '', me: null, apiKey: '' };

export class ApiError extends Error {
  constructor(message, status, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

/** The one readable line of any of the gateway's error envelopes. */
export function errorMessage(data, fallback) {
  if (!data || typeof data !== 'object') return fallback;
  const fields = Array.isArray(data.errors) ? data.errors.map((e) => `${e.field}: ${e.message}`).join('; ') : '';
  const main =
    data.detail || (data.error && (data.error.message || data.error.type)) || data.message || data.code || fallback;
  return fields && !String(main).includes(fields) ? `${main} (${fields})` : String(main);
}

function headers(method, hasBody) {
  const h = { Accept: 'application/json' };
  if (hasBody) h['Content-Type'] = 'application/json';
  if (method !== 'GET') h['X-CSRF-Token'] = session.csrf;
  return h;
}

/** JSON in, JSON out; throws ApiError with the gateway's message on any non-2xx. */
export async function call(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: headers(method, body !== undefined),
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = { detail: text };
  }
  if (!res.ok) throw new ApiError(errorMessage(data, `${res.status} ${res.statusText}`), res.status, data);
  return data;
}

export const get = (path) => call('GET', path);
export const post = (path, body) => call('POST', path, body ?? {});
export const put = (path, body) => call('PUT', path, body);
export const del = (path, body) => call('DELETE', path, body);

/** `path` with the non-empty entries of `params` as its query string. */
export function withQuery(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/**
 * The embedded blob store's URLs are this gateway's `/blobs/...`, signed over path and query and written
 * with PUBLIC_BASE_URL's host, which may not be the host the browser used: the dashboard sends them to its
 * own origin, so neither CORS nor the CSP's connect-src gets in the way. Other URLs (S3) are used as they are.
 */
function sameOriginBlob(url) {
  const u = new URL(url, location.href);
  return u.pathname.startsWith('/blobs/') && u.port === location.port ? u.pathname + u.search : url;
}

/** PUTs a file to a presigned URL, reporting upload progress (fetch cannot). */
export function uploadFile(url, file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', sameOriginBlob(url));
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    });
    xhr.addEventListener('load', () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve();
      } else {
        let data = null;
        try {
          data = JSON.parse(xhr.responseText);
        } catch {
          data = { detail: xhr.responseText };
        }
        reject(new ApiError(errorMessage(data, `upload failed: ${xhr.status}`), xhr.status, data));
      }
    });
    xhr.addEventListener('error', () => reject(new ApiError('The upload failed: network error.', 0, null)));
    xhr.send(file);
  });
}

/**
 * POSTs and reads a Server-Sent Events answer, calling onData with each `data:` payload
 * (EventSource can only GET and cannot send an API key).
 */
export async function postStream(path, body, extraHeaders, onData, signal) {
  const res = await fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', ...extraHeaders },
    body: JSON.stringify(body),
    signal,
  });
  if (!res.ok) {
    const text = await res.text();
    let data = null;
    try {
      data = JSON.parse(text);
    } catch {
      data = { detail: text };
    }
    throw new ApiError(errorMessage(data, `${res.status} ${res.statusText}`), res.status, data);
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = event
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      if (data) onData(data);
    }
  }
}
