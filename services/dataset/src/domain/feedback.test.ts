import { feedbackDatasetType, feedbackExamples, rowFor, type FeedbackVerdict } from './feedback';

const TEXT = 'Ada Lovelace met Charles Babbage in London. Ada wrote; Adam did not.';
const verdict = (answer: unknown, over: Partial<FeedbackVerdict> = {}): FeedbackVerdict => ({
  inferenceId: '0193a1b2-0000-7000-8000-000000000001',
  teamId: 'team',
  projectId: 'project',
  task: 'extraction',
  verdict: 'incorrect',
  answer,
  inputs: [TEXT],
  schema: { entities: ['person', 'city'], classifications: [{ task: 'tags', labels: ['a', 'b'], multi_label: true }] },
  submittedAt: new Date(),
  ...over,
});

describe('feedback rows', () => {
  it('when the verdict is on a decoder reply, then the conversation plus the vouched reply is one chat row', () => {
    const messages = [{ role: 'user', content: 'Say hello' }];
    const corrected = feedbackExamples(verdict({ text: 'Hello there!' }, { task: 'generate', messages }));
    expect(corrected).toEqual({
      rows: [{ messages: [...messages, { role: 'assistant', content: 'Hello there!' }] }],
      issues: [],
    });
    const confirmed = feedbackExamples(
      verdict([{ text: 'Hi.', finish_reason: 'stop' }], { task: 'generate', verdict: 'correct', messages }),
    );
    expect(confirmed.rows[0]!.messages!.at(-1)).toEqual({ role: 'assistant', content: 'Hi.' });
    expect(feedbackDatasetType([...corrected.rows, ...confirmed.rows])).toBe('generation');
    expect(feedbackExamples(verdict({ text: ' ' }, { task: 'generate', messages })).rows).toEqual([]);
  });

  it('when mentions are surface strings, then every whole-word occurrence becomes a span, longest mention first', () => {
    const { rows, issues } = feedbackExamples(
      verdict({
        entities: { person: ['Ada', 'Ada Lovelace', 'Charles Babbage'], city: [{ text: 'London', start: 36 }] },
      }),
    );
    expect(issues).toEqual([]);
    expect(rows).toEqual([
      {
        text: TEXT,
        entities: [
          { start: 0, end: 12, label: 'person' },
          { start: 17, end: 32, label: 'person' },
          { start: 36, end: 42, label: 'city' },
          // "Ada" inside "Ada Lovelace" is taken already, and "Adam" is not a whole-word "Ada".
          { start: 44, end: 47, label: 'person' },
        ],
      },
    ]);
    expect(rows.map((r) => TEXT.slice(r.entities![3]!.start, r.entities![3]!.end))).toEqual(['Ada']);
  });

  it('when a mention is not in the text, then the verdict gives no row and the issue names the mention', () => {
    expect(feedbackExamples(verdict({ entities: { person: ['Ada Lovelace', 'Grace Hopper'] } }))).toEqual({
      rows: [],
      issues: [{ field: 'output.entities.person.1', reason: '"Grace Hopper" is not in the input text' }],
    });
  });

  it('when the output has classification tasks, then they become {task, labels, multi_label} as the schema says', () => {
    const { rows } = feedbackExamples(
      verdict({ sentiment: 'positive', tags: [{ label: 'a', confidence: 0.9 }], meeting: [{ who: ['Ada'] }] }),
    );
    expect(rows).toEqual([
      {
        text: TEXT,
        classifications: [
          { task: 'sentiment', labels: ['positive'] },
          { task: 'tags', labels: ['a'], multi_label: true },
        ],
      },
    ]);
    expect(feedbackDatasetType(rows)).toBe('classification');
    expect(rowFor('extraction', rows[0]!)).toEqual({
      text: TEXT,
      entities: [],
      classifications: rows[0]!.classifications,
    });
  });

  it('when a batch of inputs has one output each, then each input is a row; a count mismatch is an issue', () => {
    const two = verdict([{ entities: { city: ['Paris'] } }, { entities: {} }], {
      inputs: ['Paris is big.', 'Nothing.'],
    });
    expect(feedbackExamples(two).rows).toEqual([
      { text: 'Paris is big.', entities: [{ start: 0, end: 5, label: 'city' }] },
      { text: 'Nothing.', entities: [] },
    ]);
    expect(feedbackDatasetType(feedbackExamples(two).rows)).toBe('extraction');
    expect(feedbackExamples(verdict([{}, {}])).issues).toEqual([
      { field: 'output', reason: 'has 2 outputs for 1 inputs' },
    ]);
    expect(feedbackExamples(verdict({ text: 'a decoder reply' })).issues).toEqual([
      { field: 'output', reason: 'has no entities or classifications to learn from' },
    ]);
  });
});
