import { readFileSync, unlinkSync } from 'node:fs';
import type { FailpointName, Failpoints, Logger } from '../application/ports';

/**
 * Failpoints armed by a file, in the manner of etcd's gofail: the file holds
 * one failpoint name; the first time the trainer reaches that point it removes
 * the file (so the restarted process runs on) and SIGKILLs itself, leaving
 * exactly what a crash leaves. Without a file, `hit` costs one failed read.
 */
export function failpointFile(file: string, logger: Logger): Failpoints {
  return {
    hit(name: FailpointName) {
      let armed: string;
      try {
        armed = readFileSync(file, 'utf8').trim();
      } catch {
        return;
      }
      if (armed !== name) return;
      unlinkSync(file);
      logger.warn({ failpoint: name }, 'failpoint reached: the trainer kills itself here');
      process.kill(process.pid, 'SIGKILL');
    },
  };
}
