import { parseJudgeAnswer, rubricPrompt, rubricSubject, rubricTaskOf } from './llm-rubric';
import type { InferenceRecord } from './record';

const record = (over: Partial<InferenceRecord>) =>
  ({ inputs: [], messages: [], outputs: [], ...over }) as InferenceRecord;

describe('the LLM judge rubric', () => {
  it('when a record is a decoder reply, a classification or anything else, then it gets that rubric', () => {
    expect(rubricTaskOf(record({ task: 'generate', messages: [{ role: 'user', content: 'hi' }] }))).toBe('generation');
    expect(rubricTaskOf(record({ task: 'classification' }))).toBe('classification');
    for (const task of ['ner', 'relations', 'structures', 'extraction'])
      expect(rubricTaskOf(record({ task }))).toBe('extraction');
    for (const t of ['extraction', 'classification', 'generation'] as const)
      expect(rubricPrompt(t)).toContain('{"score": <number from 0 to 1>, "rationale"');
  });

  it('when the subject is built, then it carries the inputs, schema and outputs as JSON', () => {
    const subject = JSON.parse(
      rubricSubject(
        record({ task: 'ner', inputs: ['Ada'], schema: { entities: ['person'] }, outputs: [{ entities: {} }] }),
      ),
    );
    expect(subject).toEqual({ inputs: ['Ada'], schema: { entities: ['person'] }, outputs: [{ entities: {} }] });
  });

  it('when a decoder conversation called a tool, then the subject shows the call and the turn that answered it', () => {
    const call = { id: 'c1', name: 'weather', arguments: '{"city":"Oslo"}' };
    const subject = JSON.parse(
      rubricSubject(
        record({
          task: 'generate',
          messages: [
            { role: 'user', content: 'weather in Oslo?' },
            { role: 'assistant', content: '', toolCalls: [call] },
            { role: 'tool', content: 'rain', toolCallId: 'c1' },
          ],
          outputs: [{ text: 'It rains in Oslo.' }],
        }),
      ),
    );
    expect(subject).toEqual({
      conversation: [
        { role: 'user', content: 'weather in Oslo?' },
        { role: 'assistant', content: '', tool_calls: [call] },
        { role: 'tool', content: 'rain', tool_call_id: 'c1' },
      ],
      reply: { text: 'It rains in Oslo.' },
    });
  });

  it('when the answer is exactly the JSON object, then it parses; anything else is null', () => {
    expect(parseJudgeAnswer(' {"score": 0.7, "rationale": "two of three entities right"}\n')).toEqual({
      score: 0.7,
      rationale: 'two of three entities right',
    });
    for (const bad of [
      'Echo: {"score": 0.7}',
      '```json\n{"score": 0.7, "rationale": "x"}\n```',
      '{"score": 1.2, "rationale": "x"}',
      '{"score": "0.7", "rationale": "x"}',
      '{"score": 0.7, "rationale": ""}',
      '[0.7]',
      '',
    ])
      expect(parseJudgeAnswer(bad)).toBeNull();
  });
});
