// The home page: the account at a glance, the next steps still open, and the latest inferences.
import { get } from '../api.js';
import { fmtDate, fmtNum, h, link, shortId, stats, table } from '../ui.js';

/** `promise`'s answer, or null when that route fails (a back end that is down or not deployed). */
const optional = (promise) => promise.catch(() => null);

/** The first steps of a new account, each done once its resource exists. */
function nextSteps({ keys, datasets, jobs, projects }) {
  const steps = [
    [keys, 'keys', 'Create an API key', 'to call the API with the X-API-Key header.'],
    [datasets, 'datasets', 'Upload a dataset', 'or generate a synthetic one from a schema.'],
    [jobs, 'training', 'Train a model', 'on a dataset, and follow its loss live.'],
    [projects, 'projects', 'Deploy it behind a project', 'and call the project endpoint.'],
  ];
  return h(
    'ol',
    { id: 'next-steps', class: 'steps' },
    steps.map(([count, path, label, rest]) => {
      const done = count !== null && count > 0;
      return h(
        'li',
        { class: done ? 'done' : null },
        link(path, label),
        ` ${rest}`,
        done ? h('span', { class: 'muted' }, ' Done.') : null,
      );
    }),
  );
}

export async function homePage(main) {
  const [usage, keyList, datasetList, jobList, projectList, recent] = await Promise.all([
    get('/billing/usage'),
    optional(get('/list-api-keys')),
    optional(get('/core/datasets')),
    optional(get('/core/training-jobs?limit=1')),
    optional(get('/projects')),
    optional(get('/inferences?limit=5')),
  ]);
  const a = usage.account;
  const counts = {
    keys: keyList ? keyList.keys.length : null,
    datasets: datasetList ? datasetList.datasets.length : null,
    jobs: jobList ? jobList.total : null,
    projects: projectList ? projectList.projects.length : null,
  };
  const count = (n) => (n === null ? 'not available' : fmtNum(n));
  main.append(
    h('h1', {}, 'Overview'),
    h(
      'div',
      { id: 'overview' },
      stats([
        ['Balance (credits)', fmtNum(a.balance_credits)],
        ['Used this month', fmtNum(a.used_this_month_credits)],
        ['Plan', a.plan],
        ['API keys', count(counts.keys)],
        ['Datasets', count(counts.datasets)],
        ['Training jobs', count(counts.jobs)],
      ]),
    ),
    h('h2', {}, 'Next steps'),
    nextSteps(counts),
    h('h2', {}, 'Latest inferences'),
    h(
      'div',
      { id: 'latest' },
      recent
        ? table(
            'Latest inferences',
            ['When', 'Model', 'Task', 'Cost (credits)'],
            recent.data.map((r) => [
              link(`inferences/${r.id}`, fmtDate(r.created_at)),
              r.training_job_id ? link(`training/${r.training_job_id}`, shortId(r.model_id)) : r.model_id,
              r.task,
              fmtNum(r.usage?.cost_credits, 6),
            ]),
            'No inferences yet.',
          )
        : h('p', { class: 'muted' }, 'The inference history is not available.'),
    ),
    h('p', {}, link('inferences', 'All inferences'), ' · ', link('credits', 'Credits & usage')),
  );
}
