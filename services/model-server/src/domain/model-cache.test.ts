import { ModelCache } from './model-cache';

describe('ModelCache', () => {
  it('evicts the least recently used ready model once over budget, never pinned or warming ones', () => {
    const cache = new ModelCache<string>(100);
    cache.startWarming('base', true);
    cache.ready('base', 'B', 50);
    cache.ready('a', 'A', 30);
    cache.ready('b', 'B', 30); // 110 > 100: 'a' is the least recently used unpinned
    expect(cache.peek('a')).toBeUndefined();
    cache.get('b');
    cache.startWarming('c');
    expect(cache.ready('d', 'D', 40)).toEqual(['b']);
    expect(cache.peek('base')?.status).toBe('ready');
    expect(cache.peek('c')?.status).toBe('warming');
  });

  it('records failures with their reason', () => {
    const cache = new ModelCache<string>(10);
    cache.startWarming('x');
    cache.failed('x', 'bundle is corrupt');
    expect(cache.peek('x')).toMatchObject({ status: 'failed', reason: 'bundle is corrupt' });
  });
});
