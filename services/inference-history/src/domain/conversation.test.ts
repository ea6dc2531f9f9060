import { checkItem, type ItemInput, MAX_ITEM_CHARS, metadataProblems } from './conversation';

const empty = { role: '', texts: [], callId: '', name: '', arguments: '', output: '' };
const message = (fields: Partial<ItemInput> = {}): ItemInput => ({
  ...empty,
  type: 'message',
  role: 'user',
  texts: ['hi'],
  ...fields,
});
const call = (fields: Partial<ItemInput> = {}): ItemInput => ({
  ...empty,
  type: 'function_call',
  callId: 'call_1',
  name: 'lookup',
  arguments: '{"q":1}',
  ...fields,
});
const output = (fields: Partial<ItemInput> = {}): ItemInput => ({
  ...empty,
  type: 'function_call_output',
  callId: 'call_1',
  output: 'done',
  ...fields,
});

/** The fields named as wrong, or [] when the item passes. */
const fields = (input: ItemInput) => {
  const checked = checkItem(input, 'items[3]');
  return 'problems' in checked ? checked.problems.map((p) => p.field) : [];
};

describe('checkItem', () => {
  it('when an item is well formed, then it passes with only its own type’s fields', () => {
    expect(checkItem(message({ output: 'stray', callId: 'x' }), 'items[0]')).toEqual({
      item: { ...empty, type: 'message', role: 'user', texts: ['hi'] },
    });
    expect(checkItem(call({ role: 'user', texts: ['stray'] }), 'items[0]')).toEqual({
      item: { ...empty, type: 'function_call', callId: 'call_1', name: 'lookup', arguments: '{"q":1}' },
    });
    expect(checkItem(output({ name: 'stray' }), 'items[0]')).toEqual({
      item: { ...empty, type: 'function_call_output', callId: 'call_1', output: 'done' },
    });
    for (const role of ['user', 'assistant', 'system', 'developer']) expect(fields(message({ role }))).toEqual([]);
    expect(fields(message({ texts: [''] }))).toEqual([]);
    expect(fields(call({ arguments: '' }))).toEqual([]);
    expect(fields(output({ output: '' }))).toEqual([]);
  });

  it('when the type is not one of the three, then the type is named', () => {
    expect(fields(message({ type: 'reasoning' }))).toEqual(['items[3].type']);
    expect(fields(message({ type: 'unknown (0)' }))).toEqual(['items[3].type']);
  });

  it('when a message has a bad role or no text part, then role and texts are named', () => {
    expect(fields(message({ role: 'robot' }))).toEqual(['items[3].role']);
    expect(fields(message({ role: '' }))).toEqual(['items[3].role']);
    expect(fields(message({ texts: [] }))).toEqual(['items[3].texts']);
    expect(fields(message({ role: 'tool', texts: [] }))).toEqual(['items[3].role', 'items[3].texts']);
  });

  it('when a function call or its output lacks a call id or name, or one is over 200 characters, then it is named', () => {
    expect(fields(call({ callId: '' }))).toEqual(['items[3].call_id']);
    expect(fields(call({ name: '' }))).toEqual(['items[3].name']);
    expect(fields(call({ callId: 'c'.repeat(201), name: 'n'.repeat(201) }))).toEqual([
      'items[3].call_id',
      'items[3].name',
    ]);
    expect(fields(call({ callId: 'c'.repeat(200), name: 'n'.repeat(200) }))).toEqual([]);
    expect(fields(output({ callId: '' }))).toEqual(['items[3].call_id']);
  });

  it('when an item holds over 1,000,000 characters in all, then its text field is named', () => {
    const half = 'x'.repeat(MAX_ITEM_CHARS / 2);
    expect(fields(message({ texts: [half, half] }))).toEqual([]);
    expect(fields(message({ texts: [half, half, 'x'] }))).toEqual(['items[3].texts']);
    expect(fields(call({ arguments: `${half}${half}x` }))).toEqual(['items[3].arguments']);
    expect(fields(output({ output: `${half}${half}x` }))).toEqual(['items[3].output']);
    // A stray field of another type is dropped, not counted.
    expect(fields(message({ output: `${half}${half}` }))).toEqual([]);
  });

  it('when a text holds NUL, then the field is named and the message does not quote the text', () => {
    const checked = checkItem(message({ texts: ['secret\u0000text'] }), 'items[0]');
    expect(checked).toEqual({ problems: [{ field: 'items[0].texts', message: expect.any(String) }] });
    expect(JSON.stringify(checked)).not.toContain('secret');
    expect(fields(call({ arguments: '\u0000' }))).toEqual(['items[3].arguments']);
  });
});

describe('metadataProblems', () => {
  const pairs = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));

  it('when metadata has up to 16 pairs, keys of 1–64 characters and values up to 512, then it passes', () => {
    expect(metadataProblems({})).toEqual([]);
    expect(metadataProblems(pairs(16))).toEqual([]);
    expect(metadataProblems({ ['k'.repeat(64)]: 'v'.repeat(512) })).toEqual([]);
  });

  it('when it has too many pairs, a bad key or a long value, then each is named', () => {
    expect(metadataProblems(pairs(17)).map((p) => p.field)).toEqual(['metadata']);
    expect(metadataProblems({ '': 'v', ['k'.repeat(65)]: 'v' }).map((p) => p.field)).toEqual(['metadata']);
    expect(metadataProblems({ topic: 'v'.repeat(513), ok: 'v', nul: 'a\u0000' }).map((p) => p.field)).toEqual([
      'metadata.topic',
      'metadata.nul',
    ]);
  });
});
