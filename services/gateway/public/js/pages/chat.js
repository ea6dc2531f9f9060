// Chat playground: streams /v1/chat/completions for decoder jobs and upstream models.
import { get, postStream, session } from '../api.js';
import { field, fmtNum, h, onSubmit } from '../ui.js';

export async function chatPage(main) {
  const [{ data: models }, { data: bases }] = await Promise.all([get('/v1/models'), get('/v1/base-models')]);
  // Not offered here: the built-in bases (extraction, or training-only) and upstream embedding models.
  const notChat = new Set(bases.filter((b) => b.provider === 'whetstone' || b.task === 'embedding').map((b) => b.id));
  const chatModels = models.filter((m) => !notChat.has(m.id));
  const key = h('input', {
    name: 'api_key',
    type: 'password',
    autocomplete: 'off',
    required: true,
    value: session.apiKey,
    placeholder: 'wst_sk_…',
  });
  const thread = h('div', { id: 'chat-thread', class: 'thread', 'aria-live': 'polite' });
  const usage = h('p', { class: 'muted', id: 'chat-usage' });
  const messages = [];
  let controller = null;
  const stop = h('button', { type: 'button', disabled: true }, 'Stop');
  stop.addEventListener('click', () => controller && controller.abort());

  const form = h(
    'form',
    { id: 'chat-form', class: 'card' },
    field(
      'Model',
      h(
        'select',
        { name: 'model', required: true },
        chatModels.map((m) => h('option', { value: m.id }, `${m.id} (${m.owned_by})`)),
      ),
      'Decoder jobs of your team, upstream chat models, or a project id.',
    ),
    field(
      'API key',
      key,
      'Chat calls take an API key; the one you created in this tab is filled in. It is kept in memory only.',
    ),
    field('System prompt', h('input', { name: 'system' })),
    field('Message', h('textarea', { name: 'message', rows: 3, required: true })),
    field('Max tokens', h('input', { name: 'max_tokens', type: 'number', min: 1, max: 2048, value: '64' })),
    h('div', { class: 'toolbar' }, h('button', { type: 'submit' }, 'Send'), stop),
  );
  onSubmit(form, 'Streaming…', async (body) => {
    session.apiKey = body.api_key;
    messages.push({ role: 'user', content: body.message });
    thread.append(h('p', { class: 'msg user' }, h('strong', {}, 'You: '), body.message));
    const reply = h('span', {});
    thread.append(h('p', { class: 'msg assistant' }, h('strong', {}, `${body.model}: `), reply));
    controller = new AbortController();
    stop.disabled = false;
    let text = '';
    try {
      await postStream(
        '/v1/chat/completions',
        {
          model: body.model,
          messages: [...(body.system ? [{ role: 'system', content: body.system }] : []), ...messages],
          max_tokens: Number(body.max_tokens) || undefined,
          stream: true,
        },
        { 'X-API-Key': body.api_key },
        (data) => {
          if (data === '[DONE]') return;
          const chunk = JSON.parse(data);
          if (chunk.error) throw new Error(chunk.error.message);
          const piece = chunk.choices?.[0]?.delta?.content;
          if (piece) {
            text += piece;
            reply.textContent = text;
          }
          if (chunk.usage)
            usage.textContent = `${fmtNum(chunk.usage.prompt_tokens)} prompt and ${fmtNum(chunk.usage.completion_tokens)} completion tokens; finish: ${chunk.choices?.[0]?.finish_reason}`;
        },
        controller.signal,
      );
    } catch (e) {
      if (e.name !== 'AbortError') {
        messages.pop();
        throw e;
      }
    } finally {
      stop.disabled = true;
      controller = null;
    }
    messages.push({ role: 'assistant', content: text });
    form.querySelector('textarea[name=message]').value = '';
  });
  main.append(h('h1', {}, 'Chat playground'), thread, usage, form);
  return () => controller && controller.abort();
}
