// Account: sign up and log in, API keys, credits and usage.
import { del, get, post, session, withQuery } from '../api.js';
import { enter, refreshSession } from '../../app.js';
import { actionButton, field, flash, fmtDate, fmtNum, h, link, onSubmit, stats, table, fill } from '../ui.js';
import { lineChart } from '../chart.js';

export function loginPage(main) {
  const signup = h(
    'form',
    { id: 'signup-form', class: 'card', 'aria-labelledby': 'signup-title' },
    h('h2', { id: 'signup-title' }, 'Sign up'),
    field('Email', h('input', { name: 'email', type: 'email', autocomplete: 'email', required: true })),
    field(
      'Password',
      h('input', { name: 'password', type: 'password', autocomplete: 'new-password', minlength: 10, required: true }),
      'At least 10 characters.',
    ),
    h('button', { type: 'submit' }, 'Create account'),
  );
  const login = h(
    'form',
    { id: 'login-form', class: 'card', 'aria-labelledby': 'login-title' },
    h('h2', { id: 'login-title' }, 'Log in'),
    field('Email', h('input', { name: 'email', type: 'email', autocomplete: 'username', required: true })),
    field(
      'Password',
      h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true }),
    ),
    h('button', { type: 'submit' }, 'Log in'),
  );
  onSubmit(signup, 'Creating your account…', async (body) => {
    await post('/auth/signup', body);
    await refreshSession();
    await enter();
    flash('Account created: you have the free allowance of 500 credits. Create an API key to call the API.', true);
  });
  onSubmit(login, 'Logging in…', async (body) => {
    await post('/auth/login', body);
    await refreshSession();
    await enter();
  });
  main.append(h('h1', {}, 'Welcome to Whetstone'), h('div', { class: 'cards' }, signup, login));
}

export async function keysPage(main) {
  const list = h('div', { id: 'keys-list' });
  const secret = h('div', { id: 'new-key', class: 'secret', hidden: true });
  const form = h(
    'form',
    { id: 'create-key-form', class: 'inline' },
    field('Key name', h('input', { name: 'name', required: true, maxlength: 100, placeholder: 'e.g. production' })),
    h('button', { type: 'submit' }, 'Create key'),
  );
  const load = async () => {
    const { keys } = await get('/list-api-keys');
    fill(
      list,
      table(
        'API keys',
        ['Name', 'Key', 'Created', 'Last used', 'Requests', 'Tokens (training: example-epochs)', 'Cost (credits)', ''],
        keys.map((k) => [
          h('span', { class: 'key-name', title: k.name }, k.name),
          '…' + k.api_key_last_digits,
          fmtDate(k.created_at),
          fmtDate(k.last_used_at),
          fmtNum(k.request_count),
          fmtNum(k.usage_tokens),
          fmtNum(k.usage_cost),
          actionButton(
            'Revoke',
            'Revoking…',
            async () => {
              if (!window.confirm(`Revoke "${k.name}"? Requests using it will fail at once. This cannot be undone.`))
                return;
              await del('/delete-api-key', { key_id: k.id });
              flash(`Key "${k.name}" revoked.`, true);
              await load();
            },
            flash,
            { class: 'danger', 'aria-label': `Revoke key ${k.name}` },
          ),
        ]),
        'No keys yet.',
      ),
    );
  };
  onSubmit(form, 'Creating…', async ({ name }) => {
    const key = await post('/create-api-key', { name });
    session.apiKey = key.secret_key;
    const copy = h('button', { type: 'button' }, 'Copy');
    copy.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(key.secret_key);
        flash('Copied to the clipboard.', true);
      } catch {
        flash('Copy failed: select the key and copy it by hand.');
      }
    });
    fill(
      secret,
      h('p', {}, h('strong', {}, 'Copy this key now.'), ' It will not be shown again.'),
      h('code', { id: 'new-key-value' }, key.secret_key),
      ' ',
      copy,
    );
    secret.hidden = false;
    form.reset();
    await load();
    return `Key "${name}" created.`;
  });
  main.append(
    h('h1', {}, 'API keys'),
    h('p', { class: 'muted' }, 'Keys authenticate API calls with the ', h('code', {}, 'X-API-Key'), ' header.'),
    form,
    secret,
    list,
  );
  await load();
}

/** The job or inference behind a ledger line. */
function ledgerLink(entry) {
  const id = entry.usage_id || '';
  if (id.startsWith('training:')) {
    const job = id.slice('training:'.length);
    return link(`training/${job}`, `training job ${job.slice(0, 8)}`);
  }
  if (/^[0-9a-f-]{36}$/i.test(id)) return link(`inferences/${id}`, `inference ${id.slice(0, 8)}`);
  return '';
}

/** Inference records of the last `days`, newest first, up to 1,000 (five pages). */
async function recentInferences(days) {
  const since = new Date(Date.now() - days * 86400_000).toISOString();
  const out = [];
  for (let offset = 0; offset < 1000; offset += 200) {
    const page = await get(withQuery('/inferences', { limit: 200, offset, since }));
    out.push(...page.data);
    if (!page.has_more) break;
  }
  return out;
}

/** Cost per bucket (hour or day) for the top groups: uPlot's [xs, ...ys]. */
function usageSeries(records, keyOf, bucketSeconds) {
  const totals = new Map();
  for (const r of records) totals.set(keyOf(r), (totals.get(keyOf(r)) || 0) + (r.usage?.cost_credits || 0));
  const groups = [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([k]) => k);
  const top = groups.slice(0, 6);
  const bucketOf = (r) => Math.floor(Date.parse(r.created_at) / 1000 / bucketSeconds) * bucketSeconds;
  const xs = [...new Set(records.map(bucketOf))].sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const ys = top.map(() => xs.map(() => 0));
  const other = xs.map(() => 0);
  for (const r of records) {
    const g = top.indexOf(keyOf(r));
    (g >= 0 ? ys[g] : other)[index.get(bucketOf(r))] += r.usage?.cost_credits || 0;
  }
  const labels = groups.length > top.length ? [...top, 'other'] : top;
  return { labels, data: [xs, ...ys, ...(groups.length > top.length ? [other] : [])], totals };
}

export async function creditsPage(main) {
  const usage = await get('/billing/usage');
  const a = usage.account;
  const chartBox = h('div', { id: 'usage-chart' });
  const byModel = h('button', { type: 'button', 'aria-pressed': 'true' }, 'By model');
  const byProject = h('button', { type: 'button', 'aria-pressed': 'false' }, 'By project');
  const totalsBox = h('div');
  main.append(
    h('h1', {}, 'Credits & usage'),
    stats([
      ['Plan', a.plan],
      ['Balance (credits)', fmtNum(a.balance_credits)],
      ['Used this month', fmtNum(a.used_this_month_credits)],
      ['Included monthly', fmtNum(a.included_credits)],
      [
        'Overage',
        a.overage_enabled ? `${fmtNum(a.overage_used_credits)} / ${fmtNum(a.overage_ceiling_credits)}` : 'off',
      ],
    ]),
    h('h2', {}, 'Inference usage, last 7 days (credits)'),
    h('div', { class: 'toolbar', role: 'group', 'aria-label': 'Group usage' }, byModel, byProject),
    chartBox,
    totalsBox,
    h('h2', {}, 'Recent ledger entries'),
    table(
      'Ledger',
      ['When', 'Kind', 'Amount (credits)', 'Balance after', 'Note', 'Source'],
      usage.recent_entries.map((e) => [
        fmtDate(e.created_at),
        e.kind.replace(/_/g, ' '),
        fmtNum(e.amount_credits),
        fmtNum(e.balance_after_credits),
        e.note || '',
        ledgerLink(e),
      ]),
      'No ledger entries yet.',
    ),
  );
  let records;
  try {
    records = await recentInferences(7);
  } catch (e) {
    fill(chartBox, h('p', { class: 'muted' }, `Usage by model is not available: ${e.message}`));
    return;
  }
  if (!records.length) {
    fill(chartBox, h('p', { class: 'muted' }, 'No inferences in the last 7 days.'));
    return;
  }
  // Trained models and projects by name rather than id.
  const [{ jobs }, { projects }] = await Promise.all([
    get('/core/training-jobs?limit=200').catch(() => ({ jobs: [] })),
    get('/projects').catch(() => ({ projects: [] })),
  ]);
  const names = new Map(jobs.map((j) => [j.id, `${j.model_name} (job ${j.id.slice(0, 8)})`]));
  const projectNames = new Map(projects.map((p) => [p.id, p.name]));
  const projectIds = new Map(projects.map((p) => [p.name, p.id]));
  const span = Date.now() - Math.min(...records.map((r) => Date.parse(r.created_at)));
  const bucket = span < 2 * 86400_000 ? 3600 : 86400;
  const draw = async (by) => {
    byModel.setAttribute('aria-pressed', String(by === 'model'));
    byProject.setAttribute('aria-pressed', String(by === 'project'));
    const keyOf =
      by === 'model'
        ? (r) => names.get(r.model_id) || r.model_id || 'unknown'
        : (r) => projectNames.get(r.project_id) || r.project_id || 'no project';
    const s = usageSeries(records, keyOf, bucket);
    const chart = await lineChart(chartBox, {
      title: `Credits per ${bucket === 3600 ? 'hour' : 'day'} by ${by}`,
      time: true,
      xRange: [s.data[0][0] - bucket, Date.now() / 1000 + bucket / 2],
      yLabel: 'credits',
      series: s.labels.map((label) => ({ label, points: true })),
      summary: () => `${records.length} inferences`,
    });
    chart.setData(s.data);
    fill(
      totalsBox,
      table(
        `Totals by ${by}`,
        [by === 'model' ? 'Model' : 'Project', 'Credits'],
        [...s.totals.entries()].map(([k, v]) => [
          by === 'project' && projectIds.has(k) ? link(`projects/${projectIds.get(k)}`, k) : k,
          fmtNum(v, 6),
        ]),
      ),
    );
  };
  byModel.addEventListener('click', () => void draw('model'));
  byProject.addEventListener('click', () => void draw('project'));
  await draw('model');
}
