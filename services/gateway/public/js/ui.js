// Small DOM helpers: every page builds its elements with h(), never with HTML strings.

/** h('a', {href, onclick}, 'text', child…): attributes, `on*` listeners, and text or node children. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'value') el.value = v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

/** Replaces el's children; like h(), it flattens arrays and skips null, undefined and false. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export const fmtDate = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
export const fmtNum = (n, digits = 4) =>
  n === null || n === undefined || Number.isNaN(Number(n))
    ? '—'
    : Number(n).toLocaleString(undefined, { maximumFractionDigits: digits });
export const shortId = (id) => (id ? String(id).slice(0, 8) : '—');

/** A link inside the dashboard (the router handles the click). */
export const link = (path, text, attrs = {}) => h('a', { href: `/dashboard/${path}`, ...attrs }, text);

/** A table with a header row; rows are arrays of cells (strings or nodes). */
export function table(caption, columns, rows, empty = 'Nothing yet.') {
  if (!rows.length) return h('p', { class: 'muted' }, empty);
  return h(
    'table',
    {},
    caption ? h('caption', { class: 'sr-only' }, caption) : null,
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        columns.map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    h(
      'tbody',
      {},
      rows.map((r) =>
        h(
          'tr',
          {},
          r.map((c) => h('td', {}, c ?? '')),
        ),
      ),
    ),
  );
}

/** A definition list of [term, value] pairs. */
export function stats(pairs) {
  return h(
    'dl',
    { class: 'stats' },
    pairs.map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v ?? '—'))),
  );
}

export const badge = (status) => h('span', { class: `badge badge-${String(status).replace(/[^a-z_]/gi, '')}` }, status);

/** A labelled control: label text, then the input. */
export const field = (label, input, hint) =>
  h('label', {}, h('span', { class: 'label' }, label), input, hint ? h('small', { class: 'muted' }, hint) : null);

/**
 * Wires a form to an async action: the submit button shows a busy label and is disabled while it runs,
 * and the form's own status line says what happened (role=status for success, role=alert for errors).
 */
export function onSubmit(form, busyLabel, action) {
  const status = h('p', { class: 'form-status', 'aria-live': 'polite' });
  form.append(status);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const button = form.querySelector('button[type=submit]');
    const label = button ? button.textContent : '';
    if (button) {
      button.disabled = true;
      button.textContent = busyLabel;
    }
    form.setAttribute('aria-busy', 'true');
    status.className = 'form-status';
    status.textContent = '';
    try {
      const message = await action(Object.fromEntries(new FormData(form).entries()));
      if (message) {
        status.className = 'form-status ok';
        status.setAttribute('role', 'status');
        status.textContent = message;
      }
    } catch (e) {
      status.className = 'form-status error';
      status.setAttribute('role', 'alert');
      status.textContent = e.message;
    } finally {
      form.removeAttribute('aria-busy');
      if (button) {
        button.disabled = false;
        button.textContent = label;
      }
    }
  });
  return status;
}

/** A button that runs an async action, shows a busy label, and reports errors through `report`. */
export function actionButton(label, busyLabel, action, report, attrs = {}) {
  const button = h('button', { type: 'button', ...attrs }, label);
  button.addEventListener('click', async () => {
    button.disabled = true;
    button.textContent = busyLabel;
    try {
      await action();
    } catch (e) {
      report(e.message);
    } finally {
      button.disabled = false;
      button.textContent = label;
    }
  });
  return button;
}

/** The page-level message line (errors as alerts). */
export function flash(message, ok = false) {
  const el = document.getElementById('flash');
  el.textContent = message || '';
  el.className = ok ? 'ok' : 'error';
  el.setAttribute('role', ok ? 'status' : 'alert');
  el.hidden = !message;
}

/** Calls fn every ms until the returned stop() is called or fn returns true; errors go to flash. */
export function poll(fn, ms) {
  let stopped = false;
  let timer;
  const tick = async () => {
    if (stopped) return;
    let done = false;
    try {
      done = await fn();
    } catch (e) {
      flash(e.message);
    }
    if (!stopped && !done) timer = setTimeout(tick, ms);
  };
  timer = setTimeout(tick, ms);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

export const pre = (value) => h('pre', { class: 'json', tabindex: '0' }, JSON.stringify(value, null, 2));
