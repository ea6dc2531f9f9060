/** Validation reports: what a processed version tells its team about the file. */
import { MAX_REPORTED_ISSUES, type ReportIssue, type VersionReport } from './dataset';

/** One problem in one line of a file (line 0: the whole file). */
export interface RowProblem {
  line: number;
  field: string;
  reason: string;
}

/** Duplicates listed in a report's issues; the rest are only counted. */
const LISTED_DUPLICATES = 20;

/** What the row validator found, as the report needs it. */
export interface ValidationOutcome {
  rows: number;
  valid: number;
  duplicates: number[];
  errors: RowProblem[];
  totalErrors: number;
  labels: Record<string, number>;
  trainRows: number;
  heldoutRows: number;
}

/**
 * The report of a file whose rows were all checked; failure_reason is set when any row was fatal. `notes` are what
 * the maker of the file found before (feedback that could not become rows): listed first, never fatal.
 */
export function validationReport(outcome: ValidationOutcome, notes: ReportIssue[] = []): VersionReport {
  const first = outcome.errors[0];
  return {
    total_rows: outcome.rows,
    valid_rows: outcome.valid,
    duplicate_rows: outcome.duplicates.length,
    duplicate_lines: outcome.duplicates.slice(0, MAX_REPORTED_ISSUES),
    train_rows: outcome.trainRows,
    heldout_rows: outcome.heldoutRows,
    issues: [
      ...notes.map((n) => ({ ...n, fatal: false })),
      ...outcome.errors.map((e) => ({ line: e.line, field: e.field, reason: e.reason, fatal: true })),
      ...outcome.duplicates.slice(0, LISTED_DUPLICATES).map((line) => ({
        line,
        field: '(row)',
        reason: 'duplicate of an earlier row (kept, not fatal)',
        fatal: false,
      })),
    ].slice(0, MAX_REPORTED_ISSUES),
    issues_truncated: Math.max(0, notes.length + outcome.totalErrors - MAX_REPORTED_ISSUES),
    failure_reason:
      outcome.totalErrors > 0 && first
        ? `${outcome.totalErrors} problem(s) found; the first is on line ${first.line}: ${first.reason}`
        : '',
    labels: outcome.labels,
  };
}

/** The report of a file that failed before its rows were checked (too large, not UTF-8, bad CSV, a crash). */
export function failureReport(problems: RowProblem[], reason: string): VersionReport {
  const first = problems[0];
  return {
    total_rows: 0,
    valid_rows: 0,
    duplicate_rows: 0,
    duplicate_lines: [],
    train_rows: 0,
    heldout_rows: 0,
    issues: problems.slice(0, MAX_REPORTED_ISSUES).map((e) => ({ ...e, fatal: true })),
    issues_truncated: Math.max(0, problems.length - MAX_REPORTED_ISSUES),
    failure_reason: first ? `${reason}; the first problem is on line ${first.line}: ${first.reason}` : reason,
    labels: {},
  };
}
