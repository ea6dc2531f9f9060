// Inference explorer: the history with every filter, a record page, feedback with a correction editor.
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
  pre,
  shortId,
  stats,
  table,
  fill,
} from '../ui.js';
import { renderResult } from './projects.js';

const FILTERS = [
  ['model_id', 'Model id', 'text'],
  [
    'task',
    'Task',
    'select',
    ['', 'ner', 'classification', 'relations', 'structures', 'extraction', 'decision', 'generate'],
  ],
  ['project_id', 'Project id', 'text'],
  ['training_job_id', 'Training job id', 'text'],
  [
    'surface',
    'Surface',
    'select',
    ['', 'native', 'gliner-2', 'systemone', 'project', 'chat-completions', 'messages', 'completions', 'responses'],
  ],
  ['latency_min', 'Latency from (ms)', 'number'],
  ['latency_max', 'Latency to (ms)', 'number'],
  ['llmaj_score_min', 'Judge score from', 'number'],
  ['llmaj_score_max', 'Judge score to', 'number'],
  ['since', 'Since', 'datetime-local'],
  ['until', 'Until', 'datetime-local'],
  ['limit', 'Per page', 'number'],
];

/** datetime-local values are local time; the API wants ISO 8601. */
const toIso = (local) => (local ? new Date(local).toISOString() : '');

/** A decoder call's turns, as the chat page shows them, with the tool calls an assistant turn made and answers. */
const conversation = (messages) =>
  h(
    'div',
    { id: 'conversation', class: 'thread' },
    messages.map((m) =>
      h(
        'div',
        { class: `msg ${m.role}` },
        h('strong', {}, m.tool_call_id ? `${m.role} (answers ${m.tool_call_id}): ` : `${m.role}: `),
        m.content,
        (m.tool_calls || []).map((c) =>
          h('div', { class: 'tool-call' }, h('code', {}, `${c.name}(${c.arguments})`), ` ${c.id}`),
        ),
      ),
    ),
  );

export async function inferencesPage(main, _params, query) {
  const form = h(
    'form',
    { id: 'inference-filters', class: 'filters', role: 'search' },
    FILTERS.map(([name, label, type, options]) =>
      field(
        label,
        type === 'select'
          ? h(
              'select',
              { name },
              options.map((o) => h('option', { value: o, selected: query.get(name) === o }, o || 'any')),
            )
          : h('input', {
              name,
              type,
              value:
                type === 'datetime-local' && query.get(name) ? query.get(name).slice(0, 16) : query.get(name) || '',
              step: name.startsWith('llmaj') ? 'any' : undefined,
              min: type === 'number' ? 0 : undefined,
            }),
      ),
    ),
    h('button', { type: 'submit' }, 'Apply filters'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const f = Object.fromEntries(new FormData(form).entries());
    f.since = toIso(f.since);
    f.until = toIso(f.until);
    void navigate(withQuery('/dashboard/inferences', f));
  });
  const params = Object.fromEntries(query.entries());
  const page = await get(withQuery('/inferences', params));
  const offset = page.offset;
  const go = (to) => withQuery('/dashboard/inferences', { ...params, offset: to });
  main.append(
    h('h1', {}, 'Inferences'),
    form,
    h('p', { class: 'muted', id: 'inference-count' }, `${page.total}${page.total_capped ? '+' : ''} match(es)`),
    table(
      'Inference history',
      ['When', 'Model', 'Project', 'Task', 'Latency (ms)', 'Cost (credits)', 'Judge score', 'Feedback'],
      page.data.map((r) => [
        link(`inferences/${r.id}`, fmtDate(r.created_at)),
        r.training_job_id ? link(`training/${r.training_job_id}`, shortId(r.model_id)) : r.model_id,
        r.project_id ? link(`projects/${r.project_id}`, shortId(r.project_id)) : '—',
        r.task,
        fmtNum(r.latency_ms),
        fmtNum(r.usage?.cost_credits, 6),
        r.llmaj_score === null ? '—' : fmtNum(r.llmaj_score, 3),
        r.feedback ? badge(r.feedback.human_verdict) : '—',
      ]),
      'No inferences match.',
    ),
    h(
      'nav',
      { class: 'pager', 'aria-label': 'Pages' },
      offset > 0 ? link(go(Math.max(0, offset - page.limit)).slice('/dashboard/'.length), '← Newer') : null,
      ' ',
      page.has_more ? link(go(offset + page.limit).slice('/dashboard/'.length), 'Older →') : null,
    ),
  );
}

/** The labels a schema allows for entities, and per classification task. */
function schemaLabels(schema, output) {
  const entities = new Set();
  const tasks = {};
  const s = schema || {};
  if (Array.isArray(s.entities)) s.entities.forEach((e) => entities.add(e));
  else if (s.entities && typeof s.entities === 'object') Object.keys(s.entities).forEach((e) => entities.add(e));
  const cls = Array.isArray(s.classifications)
    ? s.classifications
    : Object.entries(s.classifications || {}).map(([task, v]) => ({ task, ...(Array.isArray(v) ? { labels: v } : v) }));
  for (const c of cls) tasks[c.task] = c.labels || [];
  if (output && output.entities) Object.keys(output.entities).forEach((e) => entities.add(e));
  return { entities: [...entities], tasks };
}

/** Word and punctuation tokens with their offsets. */
function tokenize(text) {
  return [...text.matchAll(/[\p{L}\p{N}][\p{L}\p{N}'’.-]*[\p{L}\p{N}]|[\p{L}\p{N}]|[^\s\p{L}\p{N}]/gu)].map((m) => ({
    start: m.index,
    end: m.index + m[0].length,
    text: m[0],
  }));
}

/** Output entities as offset spans (string mentions are located left to right). */
function spansOf(text, entities) {
  const spans = [];
  const used = [];
  for (const [label, mentions] of Object.entries(entities || {})) {
    for (const m of mentions) {
      if (m && typeof m === 'object' && Number.isInteger(m.start)) {
        spans.push({ start: m.start, end: m.end, label });
        continue;
      }
      const mention = typeof m === 'string' ? m : m.text;
      let at = -1;
      let from = 0;
      while ((at = text.indexOf(mention, from)) >= 0 && used.some((u) => u.start < at + mention.length && at < u.end))
        from = at + 1;
      if (at >= 0) {
        spans.push({ start: at, end: at + mention.length, label });
        used.push({ start: at, end: at + mention.length });
      }
    }
  }
  return spans.sort((a, b) => a.start - b.start);
}

/**
 * The correction editor of an extraction output: click a token (and another to extend the selection),
 * pick a label and mark it, or remove the entity there; pick the right class of each task. Every change
 * is written to `target` as the corrected output's JSON.
 */
function correctionEditor(record, target) {
  const text = record.text;
  const output = record.output || {};
  const labels = schemaLabels(record.schema, output);
  const tokens = tokenize(text);
  let spans = spansOf(text, output.entities);
  const classes = {};
  for (const [k, v] of Object.entries(output)) {
    if (k === 'entities' || k === 'relation_extraction') continue;
    if (typeof v === 'string') classes[k] = v;
    else if (v && typeof v === 'object' && typeof v.label === 'string') classes[k] = v.label;
  }
  let anchor = null;
  let selection = null;

  const write = () => {
    const corrected = { ...output };
    if (output.entities || spans.length) {
      corrected.entities = Object.fromEntries(Object.keys(output.entities || {}).map((l) => [l, []]));
      for (const s of spans)
        (corrected.entities[s.label] ||= []).push({ text: text.slice(s.start, s.end), start: s.start, end: s.end });
    }
    Object.assign(corrected, classes);
    target.value = JSON.stringify(corrected, null, 2);
  };

  const tokenBox = h('div', { class: 'tokens', role: 'group', 'aria-label': 'Text: select tokens to correct' });
  const selected = h(
    'p',
    { class: 'muted', 'aria-live': 'polite' },
    'Click a word, and another to extend the selection.',
  );
  const labelSelect = h(
    'select',
    { name: 'editor_label', 'aria-label': 'Entity label' },
    labels.entities.map((l) => h('option', { value: l }, l)),
  );
  const newLabel = h('input', {
    name: 'editor_new_label',
    placeholder: 'or a new label',
    'aria-label': 'New entity label',
  });

  const render = () => {
    fill(
      tokenBox,
      ...tokens.flatMap((t, i) => {
        const span = spans.find((s) => s.start <= t.start && t.end <= s.end);
        const inSel = selection && i >= selection[0] && i <= selection[1];
        const button = h(
          'button',
          {
            type: 'button',
            class: `token${span ? ' in-entity' : ''}${inSel ? ' selected' : ''}`,
            'aria-pressed': inSel ? 'true' : 'false',
            title: span ? span.label : undefined,
            onclick: () => {
              if (anchor === null) {
                anchor = i;
                selection = [i, i];
              } else {
                selection = [Math.min(anchor, i), Math.max(anchor, i)];
                anchor = null;
              }
              const a = tokens[selection[0]];
              const b = tokens[selection[1]];
              const existing = spans.find((s) => s.start <= a.start && b.end <= s.end);
              if (existing) labelSelect.value = existing.label;
              selected.textContent = `Selected: "${text.slice(a.start, b.end)}"${existing ? ` (now ${existing.label})` : ''}`;
              render();
            },
          },
          t.text,
        );
        const last = span && span.end === t.end;
        return last ? [button, h('span', { class: 'tag' }, span.label), ' '] : [button, ' '];
      }),
    );
  };
  const range = () => {
    if (!selection) throw new Error('Select a word first.');
    return { start: tokens[selection[0]].start, end: tokens[selection[1]].end };
  };
  const mark = h('button', { type: 'button', id: 'mark-entity' }, 'Mark selection');
  mark.addEventListener('click', () => {
    try {
      const r = range();
      const label = newLabel.value.trim() || labelSelect.value;
      if (!label) throw new Error('Pick a label.');
      spans = spans.filter((s) => s.end <= r.start || s.start >= r.end);
      spans.push({ ...r, label });
      spans.sort((a, b) => a.start - b.start);
      selected.textContent = `Marked "${text.slice(r.start, r.end)}" as ${label}.`;
      selection = null;
      anchor = null;
      render();
      write();
    } catch (e) {
      selected.textContent = e.message;
    }
  });
  const remove = h('button', { type: 'button', id: 'remove-entity' }, 'Remove entity');
  remove.addEventListener('click', () => {
    try {
      const r = range();
      const before = spans.length;
      spans = spans.filter((s) => s.end <= r.start || s.start >= r.end);
      selected.textContent =
        before === spans.length ? 'No entity there.' : `Removed the entity at "${text.slice(r.start, r.end)}".`;
      selection = null;
      anchor = null;
      render();
      write();
    } catch (e) {
      selected.textContent = e.message;
    }
  });
  const classControls = Object.keys(classes).map((task) => {
    const options = [...new Set([...(labels.tasks[task] || []), classes[task]])];
    const sel = h(
      'select',
      { name: `class_${task}` },
      options.map((o) => h('option', { value: o, selected: o === classes[task] }, o)),
    );
    sel.addEventListener('change', () => {
      classes[task] = sel.value;
      write();
    });
    return field(`Class for ${task}`, sel);
  });
  render();
  write();
  return h(
    'div',
    { class: 'editor', id: 'correction-editor' },
    output.entities ? [tokenBox, selected, h('div', { class: 'toolbar' }, labelSelect, newLabel, mark, remove)] : null,
    classControls,
  );
}

export async function inferencePage(main, { id }) {
  const r = await get(`/inferences/${id}`);
  const judgeBox = h('div', { id: 'judge' });
  const showJudge = (rec) =>
    fill(
      judgeBox,
      rec.judge_status
        ? stats([
            ['Score', rec.llmaj_score === null ? '—' : fmtNum(rec.llmaj_score, 3)],
            ['Status', badge(rec.judge_status)],
            ['Judge', `${rec.judge_kind || '—'} ${rec.judge_model || ''}`],
            ['Judged', fmtDate(rec.judged_at)],
          ])
        : h(
            'p',
            { class: 'muted' },
            'Not sampled for judging (enable a judge on the project to score its inferences).',
          ),
      rec.judge_rationale || rec.judge_error
        ? h('p', { class: 'rationale' }, h('strong', {}, 'Rationale: '), rec.judge_rationale || rec.judge_error)
        : null,
    );
  showJudge(r);
  const feedbackBox = h('div', { id: 'feedback-current' });
  const showFeedback = (f) =>
    fill(
      feedbackBox,
      f
        ? stats([
            ['Verdict', badge(f.human_verdict)],
            ['Given', fmtDate(f.human_feedback_at)],
            ['Notes', f.notes || '—'],
          ])
        : h('p', { class: 'muted' }, 'No feedback yet.'),
      f && f.corrected_output ? pre(f.corrected_output) : null,
    );
  showFeedback(r.feedback);

  const corrected = h('textarea', { name: 'corrected_output', rows: 8, class: 'code', id: 'corrected-output' });
  const incorrect = h('input', {
    type: 'radio',
    name: 'verdict',
    value: 'incorrect',
    checked: r.feedback?.human_verdict === 'incorrect',
  });
  const correctionBox = h(
    'div',
    { id: 'correction', hidden: !incorrect.checked },
    r.text && r.output && typeof r.output === 'object' && !('text' in r.output) ? correctionEditor(r, corrected) : null,
    field('Corrected output (JSON)', corrected, 'The editor above writes it; you can also edit it here.'),
  );
  if (!corrected.value) corrected.value = JSON.stringify(r.output ?? null, null, 2);
  const form = h(
    'form',
    { id: 'feedback-form', class: 'card' },
    h('h2', {}, 'Give feedback'),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Verdict'),
      h(
        'label',
        { class: 'radio' },
        h('input', {
          type: 'radio',
          name: 'verdict',
          value: 'correct',
          checked: r.feedback?.human_verdict === 'correct',
        }),
        ' Correct',
      ),
      h('label', { class: 'radio' }, incorrect, ' Incorrect'),
    ),
    correctionBox,
    field('Notes', h('textarea', { name: 'notes', rows: 2, maxlength: 5000 })),
    h('button', { type: 'submit' }, 'Submit feedback'),
  );
  form.addEventListener('change', () => (correctionBox.hidden = !incorrect.checked));
  onSubmit(form, 'Submitting…', async (body) => {
    if (!body.verdict) throw new Error('Pick a verdict.');
    let correction = null;
    if (body.verdict === 'incorrect') {
      try {
        correction = JSON.parse(body.corrected_output);
      } catch {
        throw new Error('The corrected output is not valid JSON.');
      }
    }
    const saved = await post(`/inferences/${id}/feedback`, {
      verdict: body.verdict,
      corrected_output: correction,
      notes: body.notes || undefined,
    });
    showFeedback(saved);
    return `Feedback saved: ${saved.human_verdict}.`;
  });

  main.append(
    h('h1', {}, `Inference ${shortId(id)}`),
    h('p', {}, link('inferences', '← Explorer'), ' ', h('code', {}, id)),
    stats([
      ['When', fmtDate(r.created_at)],
      ['Model', r.training_job_id ? link(`training/${r.training_job_id}`, r.model_id) : r.model_id],
      ['Project', r.project_id ? link(`projects/${r.project_id}`, r.project_id) : '—'],
      ['Task', r.task],
      ['Surface', r.surface],
      ...(r.conversation_id ? [['Conversation', h('code', {}, r.conversation_id)]] : []),
      ['Status', badge(r.status)],
      ['Latency (ms)', fmtNum(r.latency_ms)],
      ['Cost (credits)', fmtNum(r.usage?.cost_credits, 6)],
    ]),
    h('h2', {}, 'Input'),
    r.text ? h('p', { class: 'input-text' }, r.text) : r.messages ? conversation(r.messages) : pre(r.inputs),
    r.schema ? h('details', {}, h('summary', {}, 'Schema'), pre(r.schema)) : '', // main.append would print null
    Object.keys(r.metadata || {}).length
      ? h('details', { id: 'metadata' }, h('summary', {}, 'Metadata'), pre(r.metadata))
      : '',
    h('h2', {}, 'Output'),
    r.text ? renderResult(r.text, r.output) : pre(r.output ?? r.outputs),
    h('h2', {}, 'Judge'),
    judgeBox,
    h('h2', {}, 'Feedback'),
    feedbackBox,
    form,
    h(
      'p',
      {},
      actionButton(
        'Delete inference',
        'Deleting…',
        async () => {
          const ask =
            'Delete this inference for good? Its input, output, feedback and score go; the credits stay billed.';
          if (!window.confirm(ask)) return;
          await del(`/inferences/${id}`);
          await navigate('/dashboard/inferences');
          flash('Inference deleted.', true);
        },
        flash,
        { class: 'danger', id: 'delete-inference' },
      ),
    ),
  );
  // A sampled record is scored shortly after it is stored: follow it until the judge is done.
  if (r.judge_status !== 'pending') return undefined;
  return poll(async () => {
    const next = await get(`/inferences/${id}`);
    showJudge(next);
    return next.judge_status !== 'pending';
  }, 1500);
}
