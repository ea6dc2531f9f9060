// The dashboard: a few fetch calls against the gateway's own routes.
'use strict';
(function () {
  let csrf = '';
  const $ = (sel) => document.querySelector(sel);

  function flash(message, ok) {
    const el = $('#flash');
    el.textContent = message;
    el.className = ok ? 'ok' : '';
    el.hidden = !message;
  }

  async function call(method, path, body) {
    const headers = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (method !== 'GET') headers['X-CSRF-Token'] = csrf;
    const res = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const data = text ? JSON.parse(text) : null;
    if (!res.ok) {
      const detail = (data && (data.detail || data.message)) || res.statusText;
      const fields =
        data && Array.isArray(data.errors)
          ? ' (' + data.errors.map((e) => e.field + ': ' + e.message).join('; ') + ')'
          : '';
      const err = new Error(detail + fields);
      err.status = res.status;
      throw err;
    }
    return data;
  }

  const fmtDate = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
  const fmtNum = (n) => Number(n).toLocaleString(undefined, { maximumFractionDigits: 4 });

  function cell(text) {
    const td = document.createElement('td');
    td.textContent = text;
    return td;
  }

  function show(view) {
    for (const name of ['auth', 'keys', 'credits']) $('#view-' + name).hidden = name !== view;
    $('#nav').hidden = view === 'auth';
    for (const a of document.querySelectorAll('nav a')) a.toggleAttribute('aria-current', a.dataset.view === view);
    if (view === 'keys') loadKeys().catch((e) => flash(e.message));
    if (view === 'credits') loadCredits().catch((e) => flash(e.message));
  }

  async function loadKeys() {
    const { keys } = await call('GET', '/list-api-keys');
    const tbody = $('#keys-table tbody');
    tbody.replaceChildren();
    for (const k of keys) {
      const tr = document.createElement('tr');
      tr.append(
        cell(k.name),
        cell('…' + k.api_key_last_digits),
        cell(fmtDate(k.created_at)),
        cell(fmtDate(k.last_used_at)),
        cell(fmtNum(k.request_count)),
        cell(fmtNum(k.usage_tokens)),
        cell(fmtNum(k.usage_cost)),
      );
      const td = document.createElement('td');
      const revoke = document.createElement('button');
      revoke.type = 'button';
      revoke.className = 'danger';
      revoke.textContent = 'Revoke';
      revoke.setAttribute('aria-label', 'Revoke key ' + k.name);
      revoke.addEventListener('click', async () => {
        if (!window.confirm('Revoke "' + k.name + '"? Requests using it will fail at once. This cannot be undone.'))
          return;
        try {
          await call('DELETE', '/delete-api-key', { key_id: k.id });
          flash('Key "' + k.name + '" revoked.', true);
          await loadKeys();
        } catch (e) {
          flash(e.message);
        }
      });
      td.append(revoke);
      tr.append(td);
      tbody.append(tr);
    }
    $('#no-keys').hidden = keys.length > 0;
    $('#keys-table').hidden = keys.length === 0;
  }

  async function loadCredits() {
    const usage = await call('GET', '/billing/usage');
    const a = usage.account;
    const stats = [
      ['Plan', a.plan],
      ['Balance (credits)', fmtNum(a.balance_credits)],
      ['Used this month', fmtNum(a.used_this_month_credits)],
      ['Included monthly', fmtNum(a.included_credits)],
      [
        'Overage',
        a.overage_enabled ? fmtNum(a.overage_used_credits) + ' / ' + fmtNum(a.overage_ceiling_credits) : 'off',
      ],
    ];
    $('#account').replaceChildren(
      ...stats.map(([k, v]) => {
        const d = document.createElement('div');
        const dt = document.createElement('dt');
        dt.textContent = k;
        const dd = document.createElement('dd');
        dd.textContent = v;
        d.append(dt, dd);
        return d;
      }),
    );
    const tbody = $('#ledger-table tbody');
    tbody.replaceChildren(
      ...usage.recent_entries.map((e) => {
        const tr = document.createElement('tr');
        tr.append(
          cell(fmtDate(e.created_at)),
          cell(e.kind.replace(/_/g, ' ')),
          cell(fmtNum(e.amount_credits)),
          cell(fmtNum(e.balance_after_credits)),
          cell(e.note || ''),
        );
        return tr;
      }),
    );
  }

  async function enter() {
    const me = await call('GET', '/auth/me');
    csrf = me.csrf_token;
    $('#me-email').textContent = me.user.email;
    show(location.hash === '#credits' ? 'credits' : 'keys');
  }

  function formData(form) {
    return Object.fromEntries(new FormData(form).entries());
  }

  $('#signup-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      await call('POST', '/auth/signup', formData(ev.target));
      flash('Account created. Welcome!', true);
      await enter();
    } catch (e) {
      flash(e.message);
    }
  });

  $('#login-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      await call('POST', '/auth/login', formData(ev.target));
      flash('');
      await enter();
    } catch (e) {
      flash(e.message);
    }
  });

  $('#create-key-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      const key = await call('POST', '/create-api-key', formData(ev.target));
      $('#new-key-value').textContent = key.secret_key;
      $('#new-key').hidden = false;
      ev.target.reset();
      flash('');
      await loadKeys();
    } catch (e) {
      flash(e.message);
    }
  });

  $('#copy-key').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText($('#new-key-value').textContent);
      flash('Copied to the clipboard.', true);
    } catch {
      flash('Copy failed: select the key and copy it by hand.');
    }
  });

  $('#logout').addEventListener('click', async () => {
    await call('POST', '/auth/logout').catch(() => undefined);
    csrf = '';
    $('#new-key').hidden = true;
    show('auth');
  });

  for (const a of document.querySelectorAll('nav a')) {
    a.addEventListener('click', (ev) => {
      ev.preventDefault();
      history.replaceState(null, '', '#' + a.dataset.view);
      show(a.dataset.view);
    });
  }

  enter().catch(() => show('auth'));
})();
