import { canMove, formatProblem } from './dataset';
import { failureReport, validationReport } from './report';

describe('dataset domain rules', () => {
  it('when a version is ready or failed, then it never moves again', () => {
    expect(canMove('ready', 'converting')).toBe(false);
    expect(canMove('failed', 'ready')).toBe(false);
    expect(canMove('uploading', 'converting')).toBe(true);
    expect(canMove('validating', 'converting')).toBe(true);
  });

  it('when the format does not fit the type, then the problem names it', () => {
    expect(formatProblem('generation', 'csv')?.detail).toBe('must be jsonl for generation datasets');
    expect(formatProblem('extraction', 'conll')).toBeNull();
    expect(formatProblem('extraction', 'csv')?.detail).toBe('csv is for classification datasets');
  });

  it('when rows failed, then the report lists fatal issues before duplicates and counts the rest', () => {
    const errors = Array.from({ length: 100 }, (_, i) => ({ line: i + 1, field: 'text', reason: 'missing' }));
    const report = validationReport({
      rows: 110,
      valid: 10,
      duplicates: [105],
      errors,
      totalErrors: 130,
      labels: {},
      trainRows: 9,
      heldoutRows: 1,
    });
    expect(report.issues).toHaveLength(100);
    expect(report.issues.every((i) => i.fatal)).toBe(true);
    expect(report.issues_truncated).toBe(30);
    expect(report.failure_reason).toBe('130 problem(s) found; the first is on line 1: missing');
  });

  it('when the file failed before its rows were read, then the reason carries the first problem', () => {
    expect(failureReport([{ line: 3, field: '(row)', reason: 'bad quote' }], 'the CSV file has errors')).toMatchObject({
      failure_reason: 'the CSV file has errors; the first problem is on line 3: bad quote',
      issues: [{ line: 3, fatal: true }],
    });
    expect(failureReport([], 'processing failed').failure_reason).toBe('processing failed');
  });
});
