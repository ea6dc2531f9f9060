import type { PrefixCache } from '@whetstone/ml';
import { Counter, Gauge, type Registry } from '@whetstone/telemetry';

/**
 * The decoder prefix cache's hits, misses, evictions, expirations, bytes and
 * entries, read from the cache whenever the registry is scraped.
 */
export function registerPrefixCacheMetrics(registry: Registry, cache: PrefixCache): void {
  const counter = (name: string, help: string, read: () => number) =>
    new Counter({
      name: `model_server_prefix_cache_${name}_total`,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name: `model_server_prefix_cache_${name}`,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  counter(
    'hits',
    'Generate calls with cacheable breakpoints that started from a cached prefix',
    () => cache.stats().hits,
  );
  counter('misses', 'Generate calls with cacheable breakpoints that found none cached', () => cache.stats().misses);
  counter('evictions', 'Entries dropped to stay within PREFIX_CACHE_MB', () => cache.stats().evictions);
  counter('expirations', 'Entries dropped after their time to live without use', () => cache.stats().expirations);
  gauge('bytes', 'Bytes of decoder attention state held', () => cache.stats().bytes);
  gauge('entries', 'Prompt prefixes held', () => cache.stats().entries);
}
