import { isNewer } from './trained-model';

describe('isNewer', () => {
  const held = { updatedAt: new Date('2026-01-01T00:00:02Z') };

  it('when nothing is held, then any event applies', () => {
    expect(isNewer(null, new Date(0))).toBe(true);
  });

  it('when the event is older than what is held, then it is ignored; equal or later applies', () => {
    expect(isNewer(held, new Date('2026-01-01T00:00:01Z'))).toBe(false);
    expect(isNewer(held, new Date('2026-01-01T00:00:02Z'))).toBe(true);
    expect(isNewer(held, new Date('2026-01-01T00:00:03Z'))).toBe(true);
  });
});
