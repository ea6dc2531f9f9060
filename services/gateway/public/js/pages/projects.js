// Projects: deployments and their history, replace, the playground, and the adaptive loop.
import { ApiError, del, get, post, put } from '../api.js';
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
  pre,
  shortId,
  stats,
  table,
  fill,
} from '../ui.js';

export async function projectsPage(main) {
  const list = h('div', { id: 'projects-list' });
  const load = async () => {
    const { projects } = await get('/projects');
    fill(
      list,
      table(
        'Projects',
        ['Name', 'Id', 'Active job', 'Created'],
        projects.map((p) => [
          link(`projects/${p.id}`, p.name),
          h('code', {}, p.id),
          p.active_training_job_id
            ? link(`training/${p.active_training_job_id}`, shortId(p.active_training_job_id))
            : '—',
          fmtDate(p.created_at),
        ]),
        'No projects yet.',
      ),
    );
  };
  const form = h(
    'form',
    { id: 'create-project-form', class: 'inline' },
    field('Project name', h('input', { name: 'name', required: true, maxlength: 100 })),
    h('button', { type: 'submit' }, 'Create project'),
  );
  onSubmit(form, 'Creating…', async ({ name }) => {
    const p = await post('/projects', { name });
    await navigate(`/dashboard/projects/${p.id}`);
  });
  main.append(h('h1', {}, 'Projects'), form, list);
  await load();
}

/** Entity mentions of an extraction result as highlighted text; other keys as JSON. */
export function renderResult(text, result) {
  const entities = result && result.entities;
  if (!text || !entities || typeof entities !== 'object') return pre(result);
  const spans = [];
  for (const [label, mentions] of Object.entries(entities)) {
    for (const m of mentions) {
      const mention = typeof m === 'string' ? m : m.text;
      let from = 0;
      let at;
      while ((at = text.indexOf(mention, from)) >= 0) {
        spans.push({ start: at, end: at + mention.length, label });
        from = at + mention.length;
      }
    }
  }
  spans.sort((a, b) => a.start - b.start);
  const parts = [];
  let pos = 0;
  for (const s of spans) {
    if (s.start < pos) continue;
    parts.push(
      text.slice(pos, s.start),
      h('mark', { class: 'entity', title: s.label }, text.slice(s.start, s.end), h('span', { class: 'tag' }, s.label)),
    );
    pos = s.end;
  }
  parts.push(text.slice(pos));
  return h('div', {}, h('p', { class: 'highlighted' }, parts), pre(result));
}

export async function projectPage(main, { id }) {
  const { projects } = await get('/projects');
  const project = projects.find((p) => p.id === id);
  if (!project) throw new ApiError('There is no such project (or it belongs to another team).', 404);
  const historyBox = h('div', { id: 'deployments' });
  const deployBox = h('div');
  const resultBox = h('div', { id: 'playground-result', 'aria-live': 'polite' });

  const activeBox = h('span', { id: 'active-job' });
  const loadDeployments = async () => {
    const { deployments } = await get(`/projects/${id}/deployments`);
    const active = deployments.find((d) => d.status === 'active');
    project.active_training_job_id = active ? active.training_job_id : null;
    fill(activeBox, active ? link(`training/${active.training_job_id}`, shortId(active.training_job_id)) : 'none');
    fill(
      historyBox,
      table(
        'Deployment history',
        ['Deployment', 'Job', 'Status', 'Reason', 'Created'],
        deployments.map((d) => [
          shortId(d.deployment_id),
          link(`training/${d.training_job_id}`, shortId(d.training_job_id)),
          badge(d.status),
          d.reason || '',
          fmtDate(d.created_at),
        ]),
        'Nothing deployed yet.',
      ),
    );
    return !deployments.some((d) => d.status === 'deploying');
  };

  const { jobs } = await get('/core/training-jobs?limit=200');
  const deployable = jobs.filter((j) => ['complete', 'deployed'].includes(j.status));
  const deploy = h(
    'form',
    { id: 'deploy-form', class: 'inline' },
    field(
      'Training job',
      h(
        'select',
        { name: 'training_job_id' },
        deployable.map((j) => h('option', { value: j.id }, `${j.model_name || shortId(j.id)} (${j.status})`)),
      ),
    ),
    h('button', { type: 'submit' }, project.active_training_job_id ? 'Deploy (replaces the active one)' : 'Deploy'),
  );
  let stopPoll = null;
  onSubmit(deploy, 'Deploying…', async ({ training_job_id }) => {
    if (!training_job_id) throw new Error('There is no complete job to deploy yet.');
    await post(`/projects/${id}/deployments`, { training_job_id });
    if (stopPoll) stopPoll();
    stopPoll = poll(loadDeployments, 1000);
    await loadDeployments();
    return 'Deployment started: it becomes active once the model is warm.';
  });
  fill(deployBox, deployable.length ? deploy : h('p', { class: 'muted' }, 'No complete training job to deploy yet.'));

  const playground = h(
    'form',
    { id: 'playground-form', class: 'card' },
    h('h2', {}, 'Playground'),
    field('Text', h('textarea', { name: 'text', rows: 3, required: true })),
    field(
      'Entity types',
      h('input', { name: 'entities', placeholder: 'person, location' }),
      'Optional: the trained schema when empty.',
    ),
    h('button', { type: 'submit' }, 'Run'),
    resultBox,
  );
  onSubmit(playground, 'Running…', async ({ text, entities }) => {
    const types = (entities || '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    // A decoder deployment answers messages; an extraction one a text and a schema.
    const active = jobs.find((j) => j.id === project.active_training_job_id);
    const decoder = Boolean(active && /decoder/.test(active.base_model));
    const r = await post(
      `/projects/${id}/inference`,
      decoder
        ? { messages: [{ role: 'user', content: text }] }
        : { text, schema: types.length ? { entities: types } : undefined },
    );
    fill(
      resultBox,
      decoder ? h('p', { class: 'msg assistant' }, r.result.text) : renderResult(text, r.result),
      h(
        'p',
        {},
        `${fmtNum(r.latency_ms)} ms, ${fmtNum(r.usage?.cost_credits, 6)} credits. `,
        link(`inferences/${r.inference_id}`, 'Open this inference to give feedback', { id: 'playground-record' }),
      ),
    );
  });

  const judge = await get(`/projects/${id}/judge`);
  const judgeForm = h(
    'form',
    { id: 'judge-form', class: 'card' },
    h('h2', {}, 'Judge'),
    h(
      'label',
      { class: 'radio' },
      h('input', { type: 'checkbox', name: 'enabled', checked: judge.enabled }),
      ' Score a sample of this project’s inferences',
    ),
    field(
      'Sample rate',
      h('input', {
        name: 'sample_rate',
        type: 'number',
        min: 0,
        max: 1,
        step: 'any',
        value: String(judge.sample_rate),
      }),
      '0–1: the share of inferences judged.',
    ),
    field(
      'Judge',
      h(
        'select',
        { name: 'kind' },
        h(
          'option',
          { value: 'builtin', selected: judge.kind !== 'llm' },
          'built-in (confidence and agreement with the zero-shot base)',
        ),
        h('option', { value: 'llm', selected: judge.kind === 'llm' }, 'an LLM'),
      ),
    ),
    field(
      'LLM judge model',
      h('input', { name: 'judge_model', value: judge.judge_model || '' }),
      'Only for an LLM judge.',
    ),
    h('button', { type: 'submit' }, 'Save judge'),
  );
  onSubmit(judgeForm, 'Saving…', async (body) => {
    await put(`/projects/${id}/judge`, {
      enabled: judgeForm.querySelector('input[name=enabled]').checked,
      sample_rate: Number(body.sample_rate),
      kind: body.kind,
      judge_model: body.kind === 'llm' ? body.judge_model : undefined,
    });
    return 'Judge settings saved.';
  });

  main.append(
    h('h1', {}, `Project ${project.name}`),
    h(
      'p',
      {},
      link('projects', '← All projects'),
      ' · ',
      h('code', {}, id),
      ' · ',
      link(`projects/${id}/adaptive`, 'Adaptive loop'),
      ' · ',
      link(`inferences?project_id=${id}`, 'Inferences'),
    ),
    stats([
      ['Active job', activeBox],
      ['Created', fmtDate(project.created_at)],
    ]),
    h('p', {}, 'Endpoint: ', h('code', {}, `POST /projects/${id}/inference`)),
    h('h2', {}, 'Deploy'),
    deployBox,
    h('h2', {}, 'Deployment history'),
    historyBox,
    playground,
    judgeForm,
    h(
      'p',
      {},
      actionButton(
        'Delete project',
        'Deleting…',
        async () => {
          if (!window.confirm('Delete this project? Its endpoint stops at once.')) return;
          await del(`/projects/${id}`);
          await navigate('/dashboard/projects');
          flash('Project deleted.', true);
        },
        flash,
        { class: 'danger' },
      ),
    ),
  );
  const settled = await loadDeployments();
  if (!settled) stopPoll = poll(loadDeployments, 1000);
  return () => stopPoll && stopPoll();
}

const METRICS = ['f1', 'precision', 'recall'];
const IN_PROGRESS = ['training', 'evaluating', 'promoting'];

/** One side of an adaptation (baseline or candidate): the gate's metric, or a dash before its evaluation. */
const figure = (side, metric) =>
  side && side.metrics && typeof side.metrics[metric] === 'number' ? fmtNum(side.metrics[metric]) : '—';

/** Per-label F1 of the deployed job against the candidate. */
function perLabel(a) {
  const before = a.baseline?.metrics?.per_label || {};
  const after = a.candidate?.metrics?.per_label || {};
  const labels = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  if (!labels.length) return null;
  return table(
    `Per-label F1 of adaptation ${shortId(a.id)}`,
    ['Label', 'Deployed F1', 'Candidate F1', 'Change', 'Held-out support'],
    labels.map((l) => {
      const b = before[l]?.f1;
      const c = after[l]?.f1;
      return [
        l,
        fmtNum(b),
        fmtNum(c),
        typeof b === 'number' && typeof c === 'number' ? fmtNum(c - b) : '—',
        fmtNum(before[l]?.support ?? after[l]?.support),
      ];
    }),
  );
}

export async function adaptivePage(main, { id }) {
  main.append(h('h1', {}, 'Adaptive loop'), h('p', {}, link(`projects/${id}`, '← Project')));
  let settings;
  try {
    settings = await get(`/projects/${id}/adaptive`);
  } catch (e) {
    // An unknown route (a server without the adaptive loop) is 404 "No route for …"; an unknown project is thrown.
    if (e.status !== 404 || !/^No route/.test((e.body && e.body.detail) || '')) throw e;
    main.append(
      h(
        'p',
        { class: 'notice', id: 'adaptive-unavailable', role: 'status' },
        'The adaptive loop is not available on this server: it answers no adaptive routes. ',
        'Feedback is still collected into the project\u2019s feedback dataset, which you can train on from ',
        link('training', 'Training'),
        '.',
      ),
    );
    return;
  }
  const { datasets } = await get('/core/datasets');
  const num = (name, value, attrs) => h('input', { name, type: 'number', value: value ?? '', ...attrs });
  const form = h(
    'form',
    { id: 'adaptive-form', class: 'card' },
    h('h2', {}, 'Settings'),
    h(
      'label',
      { class: 'radio' },
      h('input', { type: 'checkbox', name: 'enabled', checked: settings.enabled }),
      ' Retrain automatically once enough corrections arrive',
    ),
    field(
      'Corrections before retraining',
      num('min_corrections', settings.min_corrections, { min: 1, max: 100000, required: true }),
    ),
    field(
      'Held-out dataset',
      h(
        'select',
        { name: 'heldout_dataset' },
        h('option', { value: '' }, 'the deployed job\u2019s first training dataset'),
        datasets.map((d) =>
          h('option', { value: d.dataset_name, selected: d.dataset_name === settings.heldout_dataset }, d.dataset_name),
        ),
      ),
    ),
    field(
      'Metric the gate compares',
      h(
        'select',
        { name: 'metric' },
        METRICS.map((m) => h('option', { value: m, selected: m === settings.metric }, m)),
      ),
    ),
    field('Minimum gain', num('min_gain', settings.min_gain, { min: 0, max: 1, step: 'any', required: true })),
    field(
      'F1 tolerance per label',
      num('f1_tolerance', settings.f1_tolerance, { min: 0, max: 1, step: 'any', required: true }),
      'How much F1 any one label may lose.',
    ),
    field(
      'Minimum label support',
      num('min_label_support', settings.min_label_support, { min: 0, step: 1, required: true }),
      'Labels with fewer held-out examples are not held to the tolerance.',
    ),
    field('Feedback weight', num('feedback_weight', settings.feedback_weight, { min: 1, max: 20, required: true })),
    field('Epochs', num('nr_epochs', settings.nr_epochs, { min: 1 }), 'Empty: the base model\u2019s default.'),
    h('button', { type: 'submit' }, 'Save settings'),
  );
  onSubmit(form, 'Saving…', async (body) => {
    settings = await put(`/projects/${id}/adaptive`, {
      enabled: form.querySelector('input[name=enabled]').checked,
      min_corrections: Number(body.min_corrections),
      heldout_dataset: body.heldout_dataset || null,
      metric: body.metric,
      min_gain: Number(body.min_gain),
      f1_tolerance: Number(body.f1_tolerance),
      min_label_support: Number(body.min_label_support),
      feedback_weight: Number(body.feedback_weight),
      nr_epochs: body.nr_epochs ? Number(body.nr_epochs) : null,
    });
    return 'Settings saved.';
  });
  const trail = h('div', { id: 'adaptations' });
  const load = async () => {
    const { data } = await get(`/projects/${id}/adaptations`);
    fill(
      trail,
      table(
        'Adaptations',
        ['Started', 'Status', 'Trigger', 'Corrections', 'Deployed', 'Candidate', 'Gain', 'Jobs', 'Decided'],
        data.map((a) => {
          const metric = a.settings?.metric || settings.metric || 'f1';
          return [
            fmtDate(a.created_at),
            badge(a.status),
            a.trigger,
            fmtNum(a.corrections),
            `${metric} ${figure(a.baseline, metric)}`,
            `${metric} ${figure(a.candidate, metric)}`,
            fmtNum(a.gain),
            h(
              'span',
              {},
              a.baseline?.job_id
                ? link(`training/${a.baseline.job_id}`, `deployed ${shortId(a.baseline.job_id)}`)
                : null,
              ' ',
              a.candidate?.job_id
                ? link(`training/${a.candidate.job_id}`, `candidate ${shortId(a.candidate.job_id)}`)
                : null,
            ),
            fmtDate(a.decided_at),
          ];
        }),
        'No adaptations yet.',
      ),
      data.map((a) =>
        h(
          'details',
          { class: 'adaptation', open: data[0] === a },
          h('summary', {}, `${fmtDate(a.created_at)}: ${a.status}`),
          h('p', { class: 'decision' }, a.decision_reason || 'Not decided yet.'),
          perLabel(a),
        ),
      ),
    );
    return !data.some((a) => IN_PROGRESS.includes(a.status));
  };
  let stopPoll = null;
  const follow = () => {
    if (stopPoll) stopPoll();
    stopPoll = poll(load, 2000);
  };
  main.append(
    form,
    h('h2', {}, 'Audit trail'),
    h(
      'p',
      {},
      actionButton(
        'Adapt now',
        'Starting…',
        async () => {
          await post(`/projects/${id}/adapt`);
          await load();
          follow();
          flash('Adaptation started: it trains on the corrections so far, then the gate decides.', true);
        },
        flash,
        { id: 'adapt-now' },
      ),
    ),
    trail,
  );
  const settled = await load();
  if (!settled) follow();
  return () => stopPoll && stopPoll();
}
