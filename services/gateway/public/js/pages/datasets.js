// Datasets: upload with progress, live processing status, versions, validation reports, delete, synthesis.
import { del, get, post, uploadFile } from '../api.js';
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
  stats,
  table,
  fill,
} from '../ui.js';

const SETTLED = ['ready', 'failed'];

const select = (name, options, attrs = {}) =>
  h(
    'select',
    { name, ...attrs },
    options.map((o) => h('option', { value: o }, o)),
  );

export async function datasetsPage(main) {
  const list = h('div', { id: 'datasets-list' });
  const progress = h('progress', { id: 'upload-progress', max: 100, value: 0, 'aria-label': 'Upload progress' });
  const progressText = h('span', { id: 'upload-state', 'aria-live': 'polite' });
  const progressBox = h('div', { class: 'progress', hidden: true }, progress, ' ', progressText);
  const stops = [];

  const load = async () => {
    const { datasets } = await get('/core/datasets');
    fill(
      list,
      table(
        'Datasets',
        ['Name', 'Newest version', 'Status', 'Created'],
        datasets.map((d) => [
          link(`datasets/${encodeURIComponent(d.dataset_name)}`, d.dataset_name),
          String(d.version_number),
          badge(d.status),
          fmtDate(d.created_at),
        ]),
        'No datasets yet: upload one below.',
      ),
    );
    return datasets;
  };

  const upload = h(
    'form',
    { id: 'upload-form', class: 'card' },
    h('h2', {}, 'Upload'),
    field(
      'Dataset name',
      h('input', { name: 'dataset_name', required: true, pattern: '[A-Za-z0-9._-]+', maxlength: 100 }),
    ),
    field('Type', select('dataset_type', ['extraction', 'classification', 'generation'])),
    field('Format', select('format', ['jsonl', 'csv', 'conll'])),
    field('File', h('input', { name: 'file', type: 'file', required: true, accept: '.jsonl,.json,.csv,.conll,.txt' })),
    h('button', { type: 'submit' }, 'Upload'),
    progressBox,
  );
  onSubmit(upload, 'Uploading…', async (body) => {
    const file = body.file;
    const target = await post('/core/datasets/upload/url', {
      dataset_name: body.dataset_name,
      dataset_type: body.dataset_type,
      format: body.format,
      filename: file.name,
    });
    if (file.size > target.max_bytes)
      throw new Error(`The file is larger than the limit of ${fmtNum(target.max_bytes)} bytes.`);
    progressBox.hidden = false;
    progressText.textContent = 'Uploading 0%';
    await uploadFile(target.upload_url, file, (share) => {
      progress.value = Math.round(share * 100);
      progressText.textContent = `Uploading ${Math.round(share * 100)}%`;
    });
    progressText.textContent = 'Uploaded; processing…';
    await post('/core/datasets/upload/process', {
      dataset_name: body.dataset_name,
      version_number: target.version_number,
    });
    const path = `/core/datasets/${encodeURIComponent(body.dataset_name)}/${target.version_number}`;
    stops.push(
      poll(async () => {
        const v = await get(path);
        progressText.textContent = `Version ${target.version_number}: ${v.status}`;
        await load();
        return SETTLED.includes(v.status);
      }, 1000),
    );
    upload.reset();
    return `Uploaded version ${target.version_number} of ${body.dataset_name}; its status follows live above.`;
  });

  const generate = h(
    'form',
    { id: 'generate-form', class: 'card' },
    h('h2', {}, 'Generate synthetic data'),
    field(
      'Dataset name',
      h('input', { name: 'dataset_name', pattern: '[A-Za-z0-9._-]+', maxlength: 100 }),
      'Optional.',
    ),
    field('Entity types', h('input', { name: 'entities', placeholder: 'person, city, amount' }), 'Comma-separated.'),
    field(
      'Classification labels',
      h('input', { name: 'labels', placeholder: 'billing, shipping' }),
      'Optional; task "label".',
    ),
    field('Domain', h('input', { name: 'domain', placeholder: 'e.g. customer support' })),
    field('Examples', h('input', { name: 'count', type: 'number', min: 10, max: 10000, value: '200', required: true })),
    h('button', { type: 'submit' }, 'Generate'),
  );
  const genStatus = h('p', { id: 'generate-state', 'aria-live': 'polite' });
  generate.append(genStatus);
  onSubmit(generate, 'Starting…', async (body) => {
    const list = (s) =>
      (s || '')
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
    const schema = {};
    if (list(body.entities).length) schema.entities = list(body.entities);
    if (list(body.labels).length) schema.classifications = [{ task: 'label', labels: list(body.labels) }];
    const job = await post('/generate', {
      dataset_name: body.dataset_name || undefined,
      schema,
      domain: body.domain || undefined,
      count: Number(body.count),
    });
    stops.push(
      poll(async () => {
        const j = await get(`/generate/jobs/${job.job_id}`);
        genStatus.textContent = `Generation ${j.status}: ${j.progress.generated}/${j.progress.requested}${j.error ? ` (${j.error})` : ''}`;
        if (SETTLED.includes(j.status)) await load();
        return SETTLED.includes(j.status);
      }, 1000),
    );
    return 'Generation started.';
  });

  main.append(h('h1', {}, 'Datasets'), list, h('div', { class: 'cards' }, upload, generate));
  await load();
  return () => stops.forEach((s) => s());
}

export async function datasetPage(main, { name }) {
  const base = `/core/datasets/${encodeURIComponent(name)}`;
  const versionsBox = h('div', { id: 'versions' });
  const reportBox = h('div', { id: 'report' });
  let shown = null;

  const showReport = async (version) => {
    shown = version;
    const v = await get(`${base}/${version}`);
    const r = v.report;
    fill(
      reportBox,
      h('h2', {}, `Version ${version}: validation report`),
      stats([
        ['Status', badge(v.status)],
        ['Rows', r ? fmtNum(r.total_rows) : '—'],
        ['Valid', r ? fmtNum(r.valid_rows) : '—'],
        ['Duplicates', r ? fmtNum(r.duplicate_rows) : '—'],
        ['Train / held-out', r ? `${fmtNum(r.train_rows)} / ${fmtNum(r.heldout_rows)}` : '—'],
      ]),
      r && r.failure_reason ? h('p', { class: 'error', role: 'alert' }, r.failure_reason) : null,
      r && r.labels
        ? h(
            'p',
            {},
            'Labels: ',
            (Array.isArray(r.labels) ? r.labels : Object.entries(r.labels).map(([k, n]) => `${k} (${n})`)).join(', ') ||
              '—',
          )
        : null,
      h('h3', {}, 'Failing rows'),
      r
        ? table(
            'Failing rows',
            ['Line', 'Field', 'Reason', 'Fatal'],
            r.issues.map((i) => [String(i.line), i.field, i.reason, i.fatal ? 'yes' : 'no']),
            'No failing rows.',
          )
        : h('p', { class: 'muted' }, 'The report is written once the version is validated.'),
      r && r.issues_truncated ? h('p', { class: 'muted' }, 'Only the first issues are shown.') : null,
    );
  };

  const load = async () => {
    const { versions } = await get(base);
    fill(
      versionsBox,
      table(
        'Versions',
        ['Version', 'Status', 'Type', 'Format', 'File', 'Size', 'Created', ''],
        versions.map((v) => [
          String(v.version_number),
          badge(v.status),
          v.type,
          v.format,
          v.filename,
          fmtNum(v.size),
          fmtDate(v.created_at),
          h(
            'button',
            {
              type: 'button',
              class: 'link',
              onclick: () => void showReport(v.version_number).catch((e) => flash(e.message)),
            },
            `Report of version ${v.version_number}`,
          ),
        ]),
      ),
    );
    if (shown === null && versions.length) await showReport(versions[0].version_number);
    else if (shown !== null) await showReport(shown);
    return versions.every((v) => SETTLED.includes(v.status) || v.status === 'uploading');
  };

  main.append(
    h('h1', {}, `Dataset ${name}`),
    h(
      'p',
      {},
      link('datasets', '← All datasets'),
      ' ',
      actionButton(
        'Delete dataset',
        'Deleting…',
        async () => {
          if (!window.confirm(`Delete "${name}" and every version? Completed jobs keep their models.`)) return;
          await del(base);
          await navigate('/dashboard/datasets');
          flash(`Dataset "${name}" deleted.`, true);
        },
        flash,
        { class: 'danger' },
      ),
    ),
    h('h2', {}, 'Versions'),
    versionsBox,
    reportBox,
  );
  const settled = await load();
  return settled ? undefined : poll(load, 1500);
}
