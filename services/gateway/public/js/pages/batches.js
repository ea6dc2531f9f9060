// Message batches (/v1/messages/batches): the team's batches with their counts, results, cancel and delete.
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
  main.append(
    h('h1', {}, 'Message batches'),
    h(
      'p',
      { class: 'muted' },
      'Batches made with POST /v1/messages/batches (Anthropic’s Message Batches) by your team’s API keys, newest first. ',
      'Each request runs in the background as the Messages call it is; results are JSON Lines, one per request.',
    ),
    list,
  );
  const load = async () => {
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
    return false;
  };
  await load();
  // Counts move while batches run.
  return poll(load, 3000);
}
