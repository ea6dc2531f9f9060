import { AppError } from '@whetstone/errors';
import type { InferenceRecordView } from '../../../../application/history-ports';
import {
  completionMessagesOf,
  completionOfRecord,
  continuedConversation,
  cursorPage,
  inputItemsOf,
} from './stored-responses';

const record = (over: Partial<InferenceRecordView> = {}) =>
  ({
    inference_id: 'r1',
    status: 'succeeded',
    error_code: null,
    schema: null,
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'weather', arguments: '{}' }] },
      { role: 'tool', content: 'sunny', tool_call_id: 'c1' },
    ],
    outputs: [{ text: 'It is sunny.', finish_reason: 'stop' }],
    ...over,
  }) as InferenceRecordView;

describe('stored responses', () => {
  it('when a stored call is continued, then its system prompt, turns and reply come first', () => {
    const { system, turns } = continuedConversation(record());
    expect(system).toEqual([{ text: 'be brief' }]);
    expect(turns.map((t) => [t.role, t.content.map((b) => b.text).join(''), t.toolCalls.length, t.toolCallId])).toEqual(
      [
        ['user', 'weather?', 0, ''],
        ['assistant', '', 1, ''],
        ['tool', 'sunny', 0, 'c1'],
        ['assistant', 'It is sunny.', 0, ''],
      ],
    );
  });

  it('when a stored call failed, then it cannot be continued', () => {
    expect(() => continuedConversation(record({ status: 'failed', error_code: 'CLIENT_DISCONNECTED' }))).toThrow(
      AppError,
    );
  });

  it('when input items are listed, then each turn is an item (the system prompt is not) and cursors page them', () => {
    const items = inputItemsOf(record());
    expect(items.map((i) => [i.type, i.id])).toEqual([
      ['message', 'msg_r1_0'],
      ['function_call', 'fc_r1_1_0'],
      ['function_call_output', 'fco_r1_2'],
    ]);
    const ids = (page: { data: Record<string, unknown>[] }) => page.data.map((i) => i.id);
    expect(ids(cursorPage(items, { limit: 20, order: 'desc' }))).toEqual(['fco_r1_2', 'fc_r1_1_0', 'msg_r1_0']);
    const first = cursorPage(items, { limit: 2, order: 'asc' });
    expect(first).toMatchObject({ first_id: 'msg_r1_0', last_id: 'fc_r1_1_0', has_more: true });
    expect(cursorPage(items, { limit: 2, order: 'asc', after: 'fc_r1_1_0' })).toMatchObject({
      data: [{ id: 'fco_r1_2' }],
      has_more: false,
    });
    expect(ids(cursorPage(items, { limit: 20, order: 'asc', before: 'fco_r1_2' }))).toEqual(['msg_r1_0', 'fc_r1_1_0']);
    expect(() => cursorPage(items, { limit: 20, order: 'asc', after: 'nope' })).toThrow(AppError);
  });

  it('when a stored chat completion is read back, then its reply and messages are in chat completions shapes', () => {
    const r = record({
      usage: { input_tokens: 10, cache_read_tokens: 4, cache_write_tokens: 0, output_tokens: 3 } as never,
      created_at: '2026-11-28T00:00:00.000Z',
    });
    expect(completionOfRecord(r)).toMatchObject({
      id: 'chatcmpl-r1',
      created: 1795824000,
      choices: [{ message: { content: 'It is sunny.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 4 } },
    });
    expect(completionMessagesOf(r)).toEqual([
      { id: 'chatcmpl-r1-0', role: 'system', content: 'be brief' },
      { id: 'chatcmpl-r1-1', role: 'user', content: 'weather?' },
      {
        id: 'chatcmpl-r1-2',
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{}' } }],
      },
      { id: 'chatcmpl-r1-3', role: 'tool', content: 'sunny', tool_call_id: 'c1' },
    ]);
  });
});
