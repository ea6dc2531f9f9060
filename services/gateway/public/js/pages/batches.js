// Batches: Anthropic's message batches (/v1/messages/batches) with their counts, results, cancel and delete; OpenAI's
// batches (/v1/batches) with their output and error files and cancel; and the files uploaded for them (/v1/files).
import { del, get, post } from '../api.js';
import { actionButton, badge, flash, fmtDate, h, poll, table } from '../ui.js';

const counts = (c) =>
  [
    `${c.succeeded} succeeded`,
    c.errored ? `${c.errored} errored` : '',
    c.canceled ? `${c.canceled} canceled` : '',
    c.expired ? `${c.expired} expired` : '',
    c.processing ? `${c.processing} processing` : '',
  ]
    .filter(Boolean)
    .join(', ');

export async function batchesPage(main) {
  const list = h('div', { id: 'batch-list', 'aria-live': 'polite' });
  const openAi = h('div', { id: 'openai-batch-list', 'aria-live': 'polite' });
  const files = h('div', { id: 'file-list' });
  main.append(
    h('h1', {}, 'Batches'),
    h('h2', {}, 'Message batches'),
    h(
      'p',
      { class: 'muted' },
      'Batches made with POST /v1/messages/batches (Anthropic’s Message Batches) by your team’s API keys, newest first. ',
      'Each request runs in the background as the Messages call it is; results are JSON Lines, one per request.',
    ),
    list,
    h('h2', {}, 'OpenAI batches'),
    h(
      'p',
      { class: 'muted' },
      'Batches made with POST /v1/batches over an uploaded file, newest first. Once one has ended, its output file ',
      'holds the answered requests and its error file the others, as JSON Lines.',
    ),
    openAi,
    h('h2', {}, 'Files'),
    h('p', { class: 'muted' }, 'Files uploaded with POST /v1/files (a batch’s input file has purpose batch).'),
    files,
  );
  const loadMessageBatches = async () => {
    const { data } = await get('/v1/messages/batches?limit=100');
    const rows = data.map((b) => [
      h('code', {}, b.id),
      badge(b.processing_status),
      counts(b.request_counts),
      fmtDate(b.created_at),
      fmtDate(b.ended_at),
      h(
        'span',
        { class: 'toolbar' },
        b.results_url
          ? h('a', { href: `/v1/messages/batches/${b.id}/results`, download: `${b.id}.jsonl` }, 'Results')
          : null,
        b.processing_status === 'in_progress'
          ? actionButton(
              'Cancel',
              'Cancelling…',
              async () => {
                await post(`/v1/messages/batches/${b.id}/cancel`);
                await load();
              },
              flash,
            )
          : null,
        b.processing_status === 'ended'
          ? actionButton(
              'Delete',
              'Deleting…',
              async () => {
                if (!window.confirm(`Delete ${b.id} and its results?`)) return;
                await del(`/v1/messages/batches/${b.id}`);
                await load();
              },
              flash,
            )
          : null,
      ),
    ]);
    list.replaceChildren(
      table(
        'Message batches',
        ['Batch', 'Status', 'Requests', 'Created', 'Ended', ''],
        rows,
        'No message batches yet.',
      ),
    );
  };
  const load = async () => {
    await Promise.all([loadMessageBatches(), loadOpenAiBatches(openAi, load), loadFiles(files, load)]);
    return false;
  };
  await load();
  // Counts move while batches run.
  return poll(load, 3000);
}

const download = (fileId, label) =>
  fileId ? h('a', { href: `/v1/files/${fileId}/content`, download: `${fileId}.jsonl` }, label) : null;

async function loadOpenAiBatches(container, reload) {
  const { data } = await get('/v1/batches?limit=100');
  const rows = data.map((b) => [
    h('code', {}, b.id),
    b.endpoint,
    badge(b.status),
    `${b.request_counts.completed} completed, ${b.request_counts.failed} failed of ${b.request_counts.total}`,
    fmtDate(b.created_at * 1000),
    h(
      'span',
      { class: 'toolbar' },
      download(b.output_file_id, 'Output'),
      download(b.error_file_id, 'Errors'),
      b.status === 'in_progress'
        ? actionButton(
            'Cancel',
            'Cancelling…',
            async () => {
              await post(`/v1/batches/${b.id}/cancel`);
              await reload();
            },
            flash,
          )
        : null,
    ),
  ]);
  container.replaceChildren(
    table('OpenAI batches', ['Batch', 'Endpoint', 'Status', 'Requests', 'Created', ''], rows, 'No OpenAI batches yet.'),
  );
}

async function loadFiles(container, reload) {
  const { data } = await get('/v1/files?limit=100');
  const rows = data.map((f) => [
    h('code', {}, f.id),
    f.filename,
    f.purpose,
    `${f.bytes.toLocaleString()} bytes`,
    fmtDate(f.created_at * 1000),
    h(
      'span',
      { class: 'toolbar' },
      h('a', { href: `/v1/files/${f.id}/content`, download: f.filename }, 'Download'),
      actionButton(
        'Delete',
        'Deleting…',
        async () => {
          if (!window.confirm(`Delete ${f.filename}?`)) return;
          await del(`/v1/files/${f.id}`);
          await reload();
        },
        flash,
      ),
    ),
  ]);
  container.replaceChildren(
    table('Files', ['File', 'Name', 'Purpose', 'Size', 'Uploaded', ''], rows, 'No files uploaded yet.'),
  );
}
