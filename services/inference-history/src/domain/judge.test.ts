import { afterFailure, isScore, judgeSettingsProblems } from './judge';

describe('judge rules', () => {
  it('when settings are valid builtin ones, then there is no problem', () => {
    expect(judgeSettingsProblems({ sampleRate: 0, kind: 'builtin', judgeModel: '' })).toEqual([]);
    expect(judgeSettingsProblems({ sampleRate: 1, kind: 'builtin', judgeModel: '' })).toEqual([]);
  });

  it('when the rate is outside 0–1 or not a number, or the kind unknown, then each field is named', () => {
    for (const sampleRate of [-0.1, 1.01, Number.NaN])
      expect(judgeSettingsProblems({ sampleRate, kind: 'builtin', judgeModel: '' }).map((i) => i.field)).toEqual([
        'sample_rate',
      ]);
    expect(judgeSettingsProblems({ sampleRate: 0.5, kind: 'oracle', judgeModel: '' })[0]).toMatchObject({
      field: 'kind',
      message: 'must be one of: builtin, llm',
    });
  });

  it('when the llm judge names no model, then judge_model is required', () => {
    expect(judgeSettingsProblems({ sampleRate: 1, kind: 'llm', judgeModel: ' ' }).map((i) => i.field)).toEqual([
      'judge_model',
    ]);
    expect(judgeSettingsProblems({ sampleRate: 1, kind: 'llm', judgeModel: 'gpt-x' })).toEqual([]);
  });

  it('when a failure is retryable and attempts remain, then the retry waits longer each time; else it gives up', () => {
    expect(afterFailure(1, 3, true)).toEqual({ retryInMs: 2_000 });
    expect(afterFailure(2, 3, true)).toEqual({ retryInMs: 4_000 });
    expect(afterFailure(3, 3, true)).toEqual({ giveUp: true });
    expect(afterFailure(1, 3, false)).toEqual({ giveUp: true });
  });

  it('when a judge answers, then only a finite number from 0 to 1 is a score', () => {
    expect([0, 0.5, 1].every(isScore)).toBe(true);
    expect([-0.01, 1.01, Number.NaN, '0.5', null].some(isScore)).toBe(false);
  });
});
