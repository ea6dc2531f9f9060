import { isUuid } from './validation';
import { uuidTimeMs, uuidv7 } from './ids';

describe('uuidv7', () => {
  it('when minted, then it is a canonical version-7 UUID carrying its millisecond', () => {
    const at = Date.UTC(2026, 10, 25, 12, 0, 0, 123);
    const id = uuidv7(at);
    expect(isUuid(id)).toBe(true);
    expect(id[14]).toBe('7');
    expect('89ab').toContain(id[19]);
    expect(uuidTimeMs(id)).toBe(at);
  });

  it('when minted later, then it sorts after (time-ordered)', () => {
    expect(uuidv7(1_000) < uuidv7(2_000)).toBe(true);
  });

  it('when the id is a v4 UUID or not a UUID, then it has no time', () => {
    expect(uuidTimeMs('5b0f3c1e-0000-4000-8000-000000000000')).toBeNull();
    expect(uuidTimeMs('nope')).toBeNull();
  });
});
