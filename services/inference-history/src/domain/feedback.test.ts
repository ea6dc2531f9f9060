import { feedbackProblems } from './feedback';
import type { InferenceRecord } from './record';
import { taskOf } from './record';
import { mayBeInFlight } from './read-your-writes';

const record = (over: Partial<InferenceRecord> = {}): InferenceRecord => ({
  inferenceId: 'i',
  teamId: 't',
  keyId: '',
  userId: '',
  projectId: null,
  modelId: 'whetstone-extract-base',
  trainingJobId: null,
  baseModel: 'whetstone-extract-base',
  task: 'extraction',
  surface: 'native',
  inputs: ['Ada Lovelace met Charles Babbage in London.'],
  messages: [],
  schema: {
    entities: ['person', 'city'],
    classifications: [{ task: 'topic', labels: ['science', 'sport'] }],
    relations: ['met'],
    structures: { meeting: ['who::list', 'mood::[calm|tense]::str'] },
  },
  outputs: [{}],
  usage: {
    inputTokens: 1,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    costMicroCredits: 1n,
  },
  latencyMs: 1,
  status: 'succeeded',
  errorCode: null,
  createdAt: new Date(),
  completedAt: new Date(),
  llmajScore: null,
  metadata: {},
  feedback: null,
  ...over,
});
const fields = (r: InferenceRecord, correctedOutput: unknown, verdict: 'correct' | 'incorrect' = 'incorrect') =>
  feedbackProblems(r, { verdict, correctedOutput, notes: '' }).map((i) => i.field);

describe('feedback shape', () => {
  it('when the correction matches the schema and the text, then there is no problem', () => {
    expect(
      fields(record(), {
        entities: { person: ['Ada Lovelace', { text: 'London', start: 36, end: 42 }] },
        topic: 'science',
        relation_extraction: { met: [['Ada Lovelace', 'Charles Babbage']] },
        meeting: [{ who: ['Ada Lovelace'], mood: 'calm' }],
      }),
    ).toEqual([]);
  });

  it('when labels, tasks, spans or choices are not the original ones, then each offending path is named', () => {
    expect(
      fields(record(), {
        entities: { planet: ['London'], person: [{ text: 'Ada', start: 1, end: 4 }] },
        topic: 'cooking',
        relation_extraction: { met: [['Ada Lovelace', 'Grace Hopper']] },
        meeting: [{ mood: 'happy', venue: 'London' }],
        sentiment: 'positive',
      }),
    ).toEqual([
      'corrected_output.entities.planet',
      'corrected_output.entities.person.0',
      'corrected_output.topic',
      'corrected_output.relation_extraction.met.0.tail',
      'corrected_output.meeting.0.mood',
      'corrected_output.meeting.0.venue',
      'corrected_output.sentiment',
    ]);
  });

  it('when a single-label task gets a list, or a batch gets one object, then it is the wrong shape', () => {
    expect(fields(record(), { topic: ['science', 'sport'] })).toEqual(['corrected_output.topic']);
    expect(fields(record({ inputs: ['a', 'b'], outputs: [{}, {}] }), { entities: {} })).toEqual(['corrected_output']);
    expect(
      fields(record({ inputs: ['Ada', 'Bob'], outputs: [{}, {}] }), [{ entities: { person: ['Ada'] } }, {}]),
    ).toEqual([]);
  });

  it('when the verdict and the correction do not go together, or notes are too long, then 422 fields are named', () => {
    expect(fields(record(), null)).toEqual(['corrected_output']);
    expect(fields(record(), { topic: 'science' }, 'correct')).toEqual(['corrected_output']);
    expect(fields(record(), undefined, 'correct')).toEqual([]);
    expect(
      feedbackProblems(record(), { verdict: 'correct', correctedOutput: null, notes: 'x'.repeat(5001) })[0]!.field,
    ).toBe('notes');
  });

  it('when a decoder reply is corrected, then it is {text}', () => {
    const reply = record({ task: 'generate', schema: null, messages: [{ role: 'user', content: 'hi' }] });
    expect(fields(reply, { text: 'Hello!' })).toEqual([]);
    expect(fields(reply, { entities: {} })).toEqual(['corrected_output']);
  });
});

describe('task and read-your-writes rules', () => {
  it('files a native call under what its schema asks for', () => {
    expect(taskOf('extract', { entities: ['person'] })).toBe('ner');
    expect(taskOf('extract', { entities: ['person'], relations: ['met'] })).toBe('extraction');
    expect(taskOf('json', { structures: { a: ['b'] } })).toBe('structures');
    expect(taskOf('systemone', null)).toBe('decision');
    expect(taskOf('project', null)).toBe('extraction');
  });

  it('waits only for recent UUIDv7 ids', () => {
    const now = 1_000_000_000;
    expect(mayBeInFlight(now - 1_000, now, 30_000)).toBe(true);
    expect(mayBeInFlight(now - 31_000, now, 30_000)).toBe(false);
    expect(mayBeInFlight(null, now, 30_000)).toBe(false);
  });
});
