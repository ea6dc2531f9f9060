import { JOB_STATUSES, TRANSITIONS, canTransition, isTerminal, sourcesOf, type JobStatus } from './job-status';

const ALLOWED: [JobStatus, JobStatus][] = [
  ['requested', 'running'],
  ['requested', 'cancelled'],
  ['running', 'requested'],
  ['running', 'complete'],
  ['running', 'failed'],
  ['running', 'cancelled'],
  ['complete', 'deployed'],
  ['deployed', 'complete'],
];
const key = ([from, to]: [JobStatus, JobStatus]) => `${from}→${to}`;
const allowed = new Set(ALLOWED.map(key));
const every = JOB_STATUSES.flatMap((from) => JOB_STATUSES.map((to): [JobStatus, JobStatus] => [from, to]));
const forbidden = every.filter((pair) => !allowed.has(key(pair)));

describe('job status transitions', () => {
  it.each(ALLOWED)('when a job is %s, then it may move to %s', (from, to) => {
    expect(canTransition(from, to)).toBe(true);
  });

  it.each(forbidden)('when a job is %s, then it may not move to %s', (from, to) => {
    expect(canTransition(from, to)).toBe(false);
  });

  it('when the table is read whole, then it holds exactly the allowed moves (36 pairs, 8 allowed)', () => {
    expect(every).toHaveLength(36);
    expect(forbidden).toHaveLength(28);
    const table = Object.entries(TRANSITIONS).flatMap(([from, tos]) => tos.map((to) => `${from}→${to}`));
    expect(table.sort()).toEqual([...allowed].sort());
  });

  it('when a move is applied, then its sources are exactly the statuses that may make it', () => {
    expect(sourcesOf('running')).toEqual(['requested']);
    expect(sourcesOf('requested')).toEqual(['running']);
    expect(sourcesOf('cancelled')).toEqual(['requested', 'running']);
    expect(sourcesOf('complete')).toEqual(['running', 'deployed']);
    expect(sourcesOf('failed')).toEqual(['running']);
    expect(sourcesOf('deployed')).toEqual(['complete']);
  });

  it('when a job is terminal, then no training move leaves it (only deployment moves: complete ⇄ deployed)', () => {
    expect(JOB_STATUSES.filter(isTerminal)).toEqual(['complete', 'failed', 'deployed', 'cancelled']);
    for (const status of ['failed', 'cancelled'] as const) expect(TRANSITIONS[status]).toEqual([]);
    expect(TRANSITIONS.complete).toEqual(['deployed']);
    expect(TRANSITIONS.deployed).toEqual(['complete']);
  });
});
