import { recordedMessageOf, recordedTurnOf } from './recorded-turn';

describe('recorded turns', () => {
  it('when a turn carries tool calls or answers one, then they survive the message and back', () => {
    const call = {
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":1}' }],
    };
    const answer = { role: 'tool', content: 'found', toolCallId: 'call_1' };
    expect(recordedTurnOf(recordedMessageOf(call))).toEqual(call);
    expect(recordedTurnOf(recordedMessageOf(answer))).toEqual(answer);
  });

  it('when a turn is plain text, then the message has no tool fields and reads back without them', () => {
    const message = recordedMessageOf({ role: 'user', content: 'hello' });
    expect(message.toolCallsJson.length).toBe(0);
    expect(message.toolCallId).toBe('');
    expect(recordedTurnOf(message)).toEqual({ role: 'user', content: 'hello' });
  });
});
