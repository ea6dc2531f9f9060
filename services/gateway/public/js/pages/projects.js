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

const ADAPTIVE_FIELDS = ['enabled', 'min_corrections', 'heldout_dataset', 'metric', 'min_gain', 'f1_tolerance'];

export async function adaptivePage(main, { id }) {
  main.append(h('h1', {}, 'Adaptive loop'), h('p', {}, link(`projects/${id}`, '← Project')));
  let settings;
  try {
    settings = await get(`/projects/${id}/adaptive`);
  } catch (e) {
    // An unknown route (this server has no adaptive loop) is 404 "No route for …"; an unknown project is thrown.
    if (e.status !== 404 || !/^No route/.test((e.body && e.body.detail) || '')) throw e;
    main.append(
      h(
        'p',
        { class: 'notice', id: 'adaptive-unavailable', role: 'status' },
        'The adaptive loop is not available on this server yet: it answers no adaptive routes. ',
        'Feedback is still collected into the project\u2019s feedback dataset, which you can train on from ',
        link('training', 'Training'),
        '.',
      ),
    );
    return;
  }
  const { datasets } = await get('/core/datasets');
  const form = h(
    'form',
    { id: 'adaptive-form', class: 'card' },
    h('h2', {}, 'Settings'),
    h(
      'label',
      { class: 'radio' },
      h('input', { type: 'checkbox', name: 'enabled', checked: settings.enabled }),
      ' Retrain automatically from corrections',
    ),
    field(
      'Corrections before retraining',
      h('input', { name: 'min_corrections', type: 'number', min: 1, value: String(settings.min_corrections ?? 10) }),
    ),
    field(
      'Held-out dataset',
      h(
        'select',
        { name: 'heldout_dataset' },
        h('option', { value: '' }, '—'),
        datasets.map((d) =>
          h('option', { value: d.dataset_name, selected: d.dataset_name === settings.heldout_dataset }, d.dataset_name),
        ),
      ),
    ),
    field('Metric', h('input', { name: 'metric', value: settings.metric || 'f1' })),
    field(
      'Minimum gain',
      h('input', { name: 'min_gain', type: 'number', step: 'any', value: String(settings.min_gain ?? 0) }),
    ),
    field(
      'F1 tolerance',
      h('input', { name: 'f1_tolerance', type: 'number', step: 'any', value: String(settings.f1_tolerance ?? 0) }),
    ),
    h('button', { type: 'submit' }, 'Save settings'),
  );
  onSubmit(form, 'Saving…', async (body) => {
    const next = {};
    for (const k of ADAPTIVE_FIELDS) next[k] = body[k];
    next.enabled = form.querySelector('input[name=enabled]').checked;
    next.min_corrections = Number(body.min_corrections);
    next.min_gain = Number(body.min_gain);
    next.f1_tolerance = Number(body.f1_tolerance);
    next.heldout_dataset = body.heldout_dataset || null;
    settings = await put(`/projects/${id}/adaptive`, next);
    return 'Settings saved.';
  });
  const trail = h('div', { id: 'adaptations' });
  const load = async () => {
    const { data } = await get(`/projects/${id}/adaptations`);
    const figure = (side) => (side && side.value !== undefined ? `${side.metric} ${fmtNum(side.value)}` : '—');
    fill(
      trail,
      table(
        'Adaptations',
        ['Started', 'Status', 'Trigger', 'Corrections', 'Baseline', 'Candidate', 'Decision', 'Jobs', 'Decided'],
        data.map((a) => [
          fmtDate(a.created_at),
          badge(a.status),
          a.trigger,
          fmtNum(a.corrections),
          figure(a.baseline),
          figure(a.candidate),
          a.decision_reason || '',
          h(
            'span',
            {},
            a.base_job_id ? link(`training/${a.base_job_id}`, `base ${shortId(a.base_job_id)}`) : null,
            ' ',
            a.candidate_job_id
              ? link(`training/${a.candidate_job_id}`, `candidate ${shortId(a.candidate_job_id)}`)
              : null,
          ),
          fmtDate(a.decided_at),
        ]),
        'No adaptations yet.',
      ),
    );
    return !data.some((a) => ['training', 'evaluating'].includes(a.status));
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
          flash('Adaptation started.', true);
        },
        flash,
      ),
    ),
    trail,
  );
  const settled = await load();
  return settled ? undefined : poll(load, 3000);
}
