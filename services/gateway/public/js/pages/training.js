// Training: the create form with the base model's bounds, a filterable list, and the job page.
import { del, get, post, withQuery } from '../api.js';
import { navigate } from '../../app.js';
import {
  actionButton,
  badge,
  field,
  flash,
  fmtDate,
  fmtNum,
  h,
  link,
  onSubmit,
  poll,
  shortId,
  stats,
  table,
  fill,
} from '../ui.js';
import { lineChart } from '../chart.js';

const STATUSES = ['requested', 'running', 'complete', 'deployed', 'failed', 'cancelled'];
const RUNNING = ['requested', 'running'];

export async function trainingPage(main, _params, query) {
  const [{ data: bases }, { datasets }] = await Promise.all([get('/v1/base-models'), get('/core/datasets')]);
  const trainable = bases.filter((b) => b.supports_training);
  const ready = datasets.filter((d) => d.status === 'ready');

  const baseSelect = h(
    'select',
    { name: 'base_model', required: true },
    trainable.map((b) => h('option', { value: b.id }, `${b.name || b.id} (${b.task})`)),
  );
  const typeBox = h('fieldset', {}, h('legend', {}, 'Training type'));
  const epochs = h('input', { name: 'nr_epochs', type: 'number', required: true, step: 1 });
  const rate = h('input', { name: 'learning_rate', type: 'number', required: true, step: 'any' });
  const epochsHint = h('small', { class: 'muted' });
  const rateHint = h('small', { class: 'muted' });
  const applyBounds = () => {
    const b = trainable.find((m) => m.id === baseSelect.value);
    if (!b) return;
    fill(
      typeBox,
      h('legend', {}, 'Training type'),
      b.training_types.map((t, i) =>
        h(
          'label',
          { class: 'radio' },
          h('input', { type: 'radio', name: 'training_type', value: t, checked: i === 0 }),
          ' ',
          t === 'lora' ? 'LoRA' : t,
        ),
      ),
    );
    const bounds = b.hyperparameter_bounds;
    const defaults = b.default_hyperparameters;
    if (bounds) {
      Object.assign(epochs, { min: bounds.nr_epochs.min, max: bounds.nr_epochs.max });
      Object.assign(rate, { min: bounds.learning_rate.min, max: bounds.learning_rate.max });
      epochsHint.textContent = `${bounds.nr_epochs.min}–${bounds.nr_epochs.max}`;
      rateHint.textContent = `${bounds.learning_rate.min}–${bounds.learning_rate.max}`;
    }
    if (defaults) {
      epochs.value = String(defaults.nr_epochs);
      rate.value = String(defaults.learning_rate);
    }
  };
  baseSelect.addEventListener('change', applyBounds);
  applyBounds();

  const create = h(
    'form',
    { id: 'create-job-form', class: 'card' },
    h('h2', {}, 'New training job'),
    field('Base model', baseSelect),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Datasets'),
      ready.length
        ? ready.map((d) =>
            h(
              'label',
              { class: 'radio' },
              h('input', { type: 'checkbox', name: 'dataset', value: d.dataset_name, checked: ready.length === 1 }),
              ' ',
              d.dataset_name,
            ),
          )
        : h('p', { class: 'muted' }, 'No ready dataset yet: ', link('datasets', 'upload one'), '.'),
    ),
    typeBox,
    h('label', {}, h('span', { class: 'label' }, 'Epochs'), epochs, epochsHint),
    h('label', {}, h('span', { class: 'label' }, 'Learning rate'), rate, rateHint),
    field('Model name', h('input', { name: 'model_name', maxlength: 100 }), 'Optional.'),
    field(
      'Out-of-scope label',
      h('input', { name: 'out_of_scope_label', maxlength: 100, placeholder: 'oos' }),
      'Optional, classification: inputs the model should not classify get this label.',
    ),
    h('button', { type: 'submit' }, 'Start training'),
  );
  onSubmit(create, 'Starting…', async (body) => {
    const names = [...create.querySelectorAll('input[name=dataset]:checked')].map((i) => i.value);
    if (!names.length) throw new Error('Pick at least one dataset.');
    const job = await post('/core/training-jobs', {
      base_model: body.base_model,
      datasets: names.map((name) => ({ name })),
      training_type: body.training_type,
      nr_epochs: Number(body.nr_epochs),
      learning_rate: Number(body.learning_rate),
      model_name: body.model_name || undefined,
      out_of_scope_label: body.out_of_scope_label || undefined,
    });
    await navigate(`/dashboard/training/${job.id}`);
  });

  const filter = h(
    'form',
    { id: 'job-filter', class: 'inline', role: 'search' },
    field(
      'Status',
      h(
        'select',
        { name: 'status' },
        h('option', { value: '' }, 'any'),
        STATUSES.map((s) => h('option', { value: s, selected: query.get('status') === s }, s)),
      ),
    ),
    field('Project id', h('input', { name: 'project_id', value: query.get('project_id') || '' })),
    h('button', { type: 'submit' }, 'Filter'),
  );
  filter.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const f = Object.fromEntries(new FormData(filter).entries());
    void navigate(withQuery('/dashboard/training', f));
  });
  const list = h('div', { id: 'jobs-list' });
  const load = async () => {
    const { jobs, total } = await get(
      withQuery('/core/training-jobs', {
        status: query.get('status'),
        project_id: query.get('project_id'),
        limit: 100,
      }),
    );
    fill(
      list,
      h('p', { class: 'muted' }, `${total} job(s)`),
      table(
        'Training jobs',
        ['Job', 'Name', 'Base model', 'Type', 'Status', 'F1', 'Created'],
        jobs.map((j) => [
          link(`training/${j.id}`, shortId(j.id)),
          j.model_name,
          j.base_model,
          j.training_type,
          badge(j.status),
          j.metrics ? fmtNum(j.metrics.f1) : '—',
          fmtDate(j.created_at),
        ]),
        'No training jobs match.',
      ),
    );
    return !jobs.some((j) => RUNNING.includes(j.status));
  };
  main.append(h('h1', {}, 'Training'), create, h('h2', {}, 'Jobs'), filter, list);
  const settled = await load();
  return settled ? undefined : poll(async () => (await load(), false), 3000);
}

/** The latest progress report in words; a finished job's last report is history, so it just says so. */
function progressText(job) {
  const p = job.progress;
  if (['complete', 'deployed'].includes(job.status)) return 'done';
  if (!p || !p.total_steps) return job.status === 'requested' ? 'queued' : '—';
  const parts = [`step ${p.step}/${p.total_steps}`, `epoch ${p.epoch}`];
  if (typeof p.loss === 'number') parts.push(`loss ${fmtNum(p.loss)}`);
  if (RUNNING.includes(job.status) && typeof p.eta_seconds === 'number') parts.push(`ETA ${p.eta_seconds} s`);
  return parts.join(' · ');
}

// Progress lines carry their figures (`metrics`); lines written before they did are read from the text.
const LOSS = /step (\d+)\/(\d+) epoch (\d+) loss ([\d.]+)/;
// The trainer's held-out lines name their figure first ("held-out: micro span F1 (…) 0.6123, …", per epoch and at the end).
const F1 = /held-out: .*?(\d\.\d+)/;

export async function jobPage(main, { id }) {
  const base = `/core/training-jobs/${id}`;
  let job = await get(base);
  const summary = h('div', { id: 'job-summary' });
  const actions = h('div', { class: 'toolbar' });
  const logs = h('pre', {
    id: 'job-logs',
    class: 'logs',
    tabindex: '0',
    'aria-live': 'off',
    'aria-label': 'Training logs',
  });
  const logState = h('p', { id: 'log-state', class: 'muted', 'aria-live': 'polite' });
  const chartBox = h('div', { id: 'loss-chart' });
  const metricsBox = h('div', { id: 'job-metrics' });
  const checkpointsBox = h('div', { id: 'checkpoints' });
  const evalBox = h('div', { id: 'evaluate' });
  const deployBox = h('div', { id: 'deploy' });
  // A decoder's epochs end with a held-out loss (on the loss axis); an extraction model's with a held-out F1.
  const points = { steps: [], loss: [], f1: [], validLoss: [] };
  const chart = await lineChart(chartBox, {
    title: 'Training loss and held-out figures',
    series: [
      { label: 'loss' },
      { label: 'held-out F1', scale: 'y2', points: true },
      { label: 'held-out loss', points: true },
    ],
    yLabel: 'loss',
    y2Label: 'F1',
    summary: () => {
      const last = points.loss.at(-1);
      const f1 = points.f1.filter((x) => x !== null).at(-1);
      const valid = points.validLoss.filter((x) => x !== null).at(-1);
      return `${points.steps.length} points; latest loss ${last ?? '—'}${f1 !== undefined ? `, F1 ${f1}` : ''}${
        valid !== undefined ? `, held-out loss ${valid}` : ''
      }`;
    },
  });

  const renderSummary = () => {
    fill(
      summary,
      stats([
        ['Status', badge(job.status)],
        ['Base model', job.base_model],
        ['Type', job.training_type],
        ['Epochs', String(job.nr_epochs)],
        ['Learning rate', String(job.learning_rate)],
        ...(job.out_of_scope_label ? [['Out-of-scope label', job.out_of_scope_label]] : []),
        ['Datasets', (job.datasets || []).map((d) => d.name || d).join(', ')],
        ['Progress', progressText(job)],
        ['Created', fmtDate(job.created_at)],
        ['Finished', fmtDate(job.finished_at)],
        ['Cost (credits)', fmtNum(job.cost_credits)],
      ]),
    );
    fill(
      actions,
      RUNNING.includes(job.status)
        ? actionButton(
            'Stop',
            'Stopping…',
            async () => {
              await post(`${base}/stop`);
              job = await get(base);
              renderSummary();
              flash('Job stopped.', true);
            },
            flash,
          )
        : null,
      ['complete', 'deployed'].includes(job.status)
        ? actionButton(
            'Download model',
            'Preparing…',
            async () => {
              const d = await get(`${base}/download`);
              window.location.assign(d.download_url);
            },
            flash,
          )
        : null,
      actionButton(
        'Delete job',
        'Deleting…',
        async () => {
          if (!window.confirm('Delete this job, its logs, checkpoints and files? Deployments of it are released.'))
            return;
          await del(base);
          await navigate('/dashboard/training');
          flash('Job deleted.', true);
        },
        flash,
        { class: 'danger' },
      ),
    );
    const m = job.metrics;
    fill(
      metricsBox,
      m
        ? [
            stats(
              'f1' in m
                ? [
                    ['F1', fmtNum(m.f1)],
                    ['Precision', fmtNum(m.precision)],
                    ['Recall', fmtNum(m.recall)],
                    ['Loss', fmtNum(m.loss)],
                  ]
                : Object.entries(m).map(([k, v]) => [k, fmtNum(v)]),
            ),
            m.per_label
              ? table(
                  'Metrics per label',
                  ['Label', 'Precision', 'Recall', 'F1', 'Support'],
                  Object.entries(m.per_label).map(([label, v]) => [
                    label,
                    fmtNum(v.precision),
                    fmtNum(v.recall),
                    fmtNum(v.f1),
                    fmtNum(v.support),
                  ]),
                )
              : null,
          ]
        : h('p', { class: 'muted' }, 'Metrics appear once the job is complete.'),
    );
  };

  const loadCheckpoints = async () => {
    const { checkpoints } = await get(`/v1/training/jobs/${id}/checkpoints`);
    fill(
      checkpointsBox,
      table(
        'Checkpoints',
        ['Checkpoint', 'Kind', 'Step', 'Size (bytes)', 'Time', ''],
        checkpoints.map((c) => {
          const [kind, name] = c.checkpoint_id.split('/');
          return [
            c.checkpoint_id,
            c.checkpoint_type,
            String(c.step),
            fmtNum(c.size_bytes),
            fmtDate(c.time),
            actionButton(
              'Download',
              'Preparing…',
              async () => {
                const d = await get(`/v1/training/jobs/${id}/checkpoints/${kind}/${name}/download`);
                window.location.assign(d.download_url);
              },
              flash,
              { 'aria-label': `Download checkpoint ${c.checkpoint_id}` },
            ),
          ];
        }),
        'No checkpoints yet: one is written after every epoch.',
      ),
    );
  };

  const renderEvaluate = async () => {
    const { datasets } = await get('/core/datasets');
    const form = h(
      'form',
      { id: 'evaluate-form', class: 'inline' },
      field(
        'Dataset',
        h(
          'select',
          { name: 'dataset_name' },
          datasets
            .filter((d) => d.status === 'ready')
            .map((d) => h('option', { value: d.dataset_name }, d.dataset_name)),
        ),
      ),
      h('button', { type: 'submit' }, 'Evaluate'),
    );
    const result = h('div', { id: 'evaluation' });
    onSubmit(form, 'Evaluating…', async ({ dataset_name }) => {
      const started = await post('/core/evaluations', { training_job_id: id, dataset_name });
      for (;;) {
        await new Promise((r) => setTimeout(r, 1000));
        const e = await get(`/core/evaluations/${started.evaluation_id}`);
        if (e.status === 'running') continue;
        if (e.status === 'failed') throw new Error(`Evaluation failed: ${e.error}`);
        fill(
          result,
          stats([
            ['F1', fmtNum(e.f1)],
            ['Precision', fmtNum(e.precision)],
            ['Recall', fmtNum(e.recall)],
            ['Examples', fmtNum(e.examples)],
          ]),
        );
        return `Evaluated on ${dataset_name}.`;
      }
    });
    fill(evalBox, form, result);
  };

  const renderDeploy = async () => {
    const { projects } = await get('/projects');
    if (!projects.length) {
      fill(deployBox, h('p', { class: 'muted' }, 'Create a ', link('projects', 'project'), ' to deploy this job.'));
      return;
    }
    const form = h(
      'form',
      { id: 'deploy-form', class: 'inline' },
      field(
        'Project',
        h(
          'select',
          { name: 'project_id' },
          projects.map((p) => h('option', { value: p.id }, p.name)),
        ),
      ),
      h('button', { type: 'submit' }, 'Deploy'),
    );
    onSubmit(form, 'Deploying…', async ({ project_id }) => {
      await post(`/projects/${project_id}/deployments`, { training_job_id: id });
      await navigate(`/dashboard/projects/${project_id}`);
    });
    fill(deployBox, form);
  };

  main.append(
    h('h1', {}, `Job ${job.model_name || shortId(id)}`),
    h('p', {}, link('training', '← All jobs'), ' ', h('code', {}, id)),
    summary,
    actions,
    h('h2', {}, 'Live logs'),
    logState,
    logs,
    h('h2', {}, 'Loss and F1'),
    chartBox,
    h('h2', {}, 'Metrics'),
    metricsBox,
    h('h2', {}, 'Checkpoints'),
    checkpointsBox,
    h('h2', {}, 'Evaluate'),
    evalBox,
    h('h2', {}, 'Deploy'),
    deployBox,
  );
  renderSummary();
  await Promise.all([loadCheckpoints(), renderEvaluate(), renderDeploy()]);

  // The log stream replays every entry, then follows the job until it ends.
  const source = new EventSource(`${base}/logs`);
  let lastRefresh = 0;
  logState.textContent = 'Connecting to the log stream…';
  source.addEventListener('open', () => (logState.textContent = 'Following the logs live.'));
  source.addEventListener('log', (ev) => {
    const entry = JSON.parse(ev.data);
    logs.append(`${new Date(entry.timestamp || Date.now()).toLocaleTimeString()} ${entry.level} ${entry.message}\n`);
    logs.scrollTop = logs.scrollHeight;
    const m = entry.metrics;
    const l = m ? null : LOSS.exec(entry.message);
    const f = F1.exec(entry.message);
    if (m || l) {
      points.steps.push(m ? m.step : Number(l[1]));
      points.loss.push(m ? m.train_loss : Number(l[4]));
      points.f1.push(null);
      points.validLoss.push(m?.valid_loss ?? null);
    } else if (f && points.steps.length) {
      points.f1[points.f1.length - 1] = Number(f[1]);
    }
    if (m || l || f) chart.setData([points.steps, points.loss, points.f1, points.validLoss]);
    if (Date.now() - lastRefresh > 3000) {
      lastRefresh = Date.now();
      void get(base)
        .then((j) => ((job = j), renderSummary(), loadCheckpoints()))
        .catch(() => undefined);
    }
  });
  source.addEventListener('end', async (ev) => {
    source.close();
    const { status } = JSON.parse(ev.data);
    logState.textContent = `The job ended: ${status}.`;
    job = await get(base);
    renderSummary();
    await loadCheckpoints();
  });
  source.addEventListener('error', (ev) => {
    if (ev.data) logState.textContent = `Log stream error: ${JSON.parse(ev.data).detail}`;
    else if (source.readyState === EventSource.CONNECTING) logState.textContent = 'Reconnecting to the log stream…';
  });
  return () => source.close();
}
