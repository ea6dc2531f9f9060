import type { Job } from './job';

/** The hub README of a pushed model: where it came from and how well it did. */
export function modelCard(job: Job): string {
  const m = job.metrics ?? {};
  return [
    '---',
    'library_name: whetstone',
    `base_model: ${job.rootBaseModel}`,
    'tags: [whetstone, extraction]',
    '---',
    `# ${job.modelName}`,
    '',
    `Trained with Whetstone (${job.trainingType}, ${job.nrEpochs} epochs, learning rate ${job.learningRate}) from \`${job.rootBaseModel}\` on ${job.datasets.map((d) => `${d.name} v${d.version_number}`).join(', ')}.`,
    '',
    `Held-out metrics: ${JSON.stringify({ f1: m.f1, precision: m.precision, recall: m.recall, ...(m.perplexity === undefined ? {} : { loss: m.loss, perplexity: m.perplexity }) })}`,
    '',
  ].join('\n');
}

/** One line for the job log: extraction figures, or a decoder's held-out loss with its generation F1 when scored. */
export function metricsSummary(m: Record<string, unknown>): string {
  const scores = `f1 ${String(m.f1)}, precision ${String(m.precision)}, recall ${String(m.recall)}`;
  if (m.perplexity === undefined) return scores;
  const loss = `held-out loss ${String(m.loss)} (base ${String(m.base_loss)}), perplexity ${String(m.perplexity)}`;
  return m.f1 === undefined ? loss : `${loss}; generation ${scores}`;
}
