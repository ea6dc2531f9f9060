import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { conllToJsonl, validateJsonl, csvToJsonl, type DatasetKind, type Example, type RowError } from '../data';
import { EXTRACT_BASE_ID } from '../zeroshot/base-model';
import {
  ENCODER_DEFAULTS,
  evaluateBundle,
  headline,
  loadModel,
  readManifest,
  trainModel,
  type Metrics,
  type TrainingType,
} from '../pipeline';

const HELP = `Usage: pnpm whetstone ml <command> [options]

Train, evaluate and run whetstone-extract-base locally; no services needed.
The same pipeline as training jobs: a transformer entity encoder with label-name heads for
entities, hashed n-gram classifiers for classification tasks, full fine-tuning or LoRA.

Commands:
  train     train on a dataset file and save the model
  eval      evaluate a saved model on a labelled file
  predict   run a saved model on text

Run \`pnpm whetstone ml <command> --help\` for its options.
`;

const TRAIN_HELP = `Usage: pnpm whetstone ml train --data <file> --out <dir> [options]

Train on entities (JSONL {"text", "entities": [{start, end, label}]} or CoNLL/BIO .conll/.bio/.txt),
relations with given spans (JSONL {"text", "head": {start, end}, "tail": {start, end}, "label"}, one
pair per row; label no_relation, none or Other when unrelated) or classification (JSONL {"text",
"label", "task"?} or CSV with a text,label header). The kind is read from the data. Writes
model.bundle (what the model-server loads) and manifest.json.

Options:
  --data <file>         training file
  --eval <file>         labelled file to report F1 on after training (optional)
  --out <dir>           where to write model.bundle and manifest.json
  --mode <m>            full (default) or lora
  --epochs <n>          passes over the data (default 6)
  --learning-rate <x>   AdamW peak rate for the encoder (default 0.002; the classifiers' AdaGrad step is 15× it, 250× multi-label)
  --batch-size <n>      texts per step (default ${ENCODER_DEFAULTS.batchSize})
  --lora-rank <n>       LoRA rank (default ${ENCODER_DEFAULTS.loraRank}); alpha is 2×rank
  --seed <n>            the same seed and data reproduce the model (default 13)
  --checkpoints <dir>   write weights/<step> (resumable) and sampler_weights/<step> after each epoch
  --resume <file>       continue from a weights/<step> checkpoint
  --task <t>            ner or classification, when the file's kind is ambiguous
  --out-of-scope <l>    reject out-of-scope inputs as label <l>: a temperature and a confidence threshold
                        are fitted on the --eval rows (give a dev file, not the test file); a task with an
                        oos, none or other label gets them without this option
  -h, --help            show this help

Examples:
  pnpm whetstone ml train --data datasets/wikigold/train.jsonl --eval datasets/wikigold/test.jsonl --out .data/models/wikigold
  pnpm whetstone ml train --mode lora --data datasets/wikigold/train.jsonl --out .data/models/wikigold-lora
  pnpm whetstone ml train --data datasets/banking77/train.jsonl --eval datasets/banking77/test.jsonl --out .data/models/banking77
`;

const EVAL_HELP = `Usage: pnpm whetstone ml eval --model <dir> --data <file> [--labels [<list>]] [--macro]

Report the headline figure of a saved model on a labelled file, named for what it is: relation micro F1
when the file has relations (with given spans: no-relation excluded, with accuracy; end to end: label and
both arguments exact, with the arguments' span F1), micro span F1 for entities (exact label and offsets),
or accuracy for single-label classification; with precision, recall, and per-label figures on request.

Options:
  --model <dir>      a directory written by \`train\`
  --data <file>      labelled JSONL, CSV or CoNLL
  --labels [<list>]  score only these labels (comma-separated); alone, only the labels the file has, so
                     labels it lacks are not counted as false positives
  --macro            also print macro F1 (the unweighted mean of the scored labels' F1)
  --per-label        print every label's figures
  -h, --help         show this help
`;

const PREDICT_HELP = `Usage: pnpm whetstone ml predict --model <dir> (--text "<text>" | --file <file>) [--threshold <x>]

Print the model's extraction for its trained schema as JSON, one line per input
(entities with confidence and character offsets; classifications with confidence).

Options:
  --model <dir>     a directory written by \`train\`
  --text <text>     one input
  --file <file>     one input per line
  --threshold <x>   minimum confidence of an entity (default 0)
  -h, --help        show this help
`;

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  isTTY: boolean;
  /** The clock that paces non-TTY progress lines (tests pass their own). Default `Date.now`. */
  now?: () => number;
}

class UsageError extends Error {}

/** Reads a labelled file as canonical rows: CoNLL and CSV are converted; JSONL is validated with row-level errors. */
function readRows(file: string, task?: string): Example[] {
  if (!existsSync(file)) throw new UsageError(`no such file: ${file}`);
  let content = readFileSync(file, 'utf8');
  let kind: DatasetKind;
  const convert = (converted: { jsonl: string; errors: RowError[] }): string => {
    if (converted.errors.length)
      throw new Error(
        `${file}: ${converted.errors
          .map((e) => `line ${e.line} ${e.field}: ${e.reason}`)
          .slice(0, 10)
          .join('; ')}`,
      );
    return converted.jsonl;
  };
  if (/\.(conll|bio|txt)$/.test(file)) {
    content = convert(conllToJsonl(content));
    kind = 'extraction';
  } else if (file.endsWith('.csv')) {
    content = convert(csvToJsonl(content));
    kind = 'classification';
  } else if (task) kind = task === 'ner' ? 'extraction' : 'classification';
  else kind = /"(entities|relations|head)"\s*:/.test(content.slice(0, 4096)) ? 'extraction' : 'classification';
  const report = validateJsonl(content, kind, { minExamples: 2 });
  if (report.errors.length) {
    const shown = report.errors
      .slice(0, 10)
      .map((e) => `  line ${e.line}, ${e.field}: ${e.reason}`)
      .join('\n');
    throw new Error(
      `${file} has ${report.errors.length} invalid rows:\n${shown}${report.errors.length > 10 ? '\n  …' : ''}`,
    );
  }
  return report.examples;
}

/** Without a terminal, a progress line at most this often (and the last one), so logs stay short. */
const NON_TTY_PROGRESS_EVERY_MS = 5_000;

function progressBar(io: Io): (fraction: number, suffix: string) => void {
  let last = -Infinity;
  return (fraction, suffix) => {
    const now = (io.now ?? Date.now)();
    if (!io.isTTY && fraction < 1 && now - last < NON_TTY_PROGRESS_EVERY_MS) return;
    last = now;
    const width = 28;
    const filled = Math.round(Math.min(1, fraction) * width);
    const line = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ${suffix}`;
    io.err(io.isTTY ? `\r${line}   ` : `${line}\n`);
  };
}

function bundleIn(dir: string): Uint8Array {
  const file = path.join(dir, 'model.bundle');
  if (!existsSync(file)) throw new UsageError(`no model in ${dir} (expected model.bundle written by \`ml train\`)`);
  return readFileSync(file);
}

function printMetrics(io: Io, name: string, m: Metrics, perLabel: boolean, macro = true): void {
  io.out(`${name}: ${headline(macro ? m : { ...m, macro_f1: undefined })}\n`);
  if (perLabel)
    for (const [l, s] of Object.entries(m.per_label))
      io.out(`  ${l.padEnd(48)} F1 ${s.f1.toFixed(3)}  support ${s.support}\n`);
}

/** The labels a labelled file has: entity, relation (`relation/<label>`) and `<task>/<label>` names. */
function labelsIn(rows: Example[]): string[] {
  const labels = new Set<string>();
  for (const r of rows) {
    for (const e of r.entities ?? []) labels.add(e.label);
    for (const x of (r as { relations?: { label: string }[] }).relations ?? []) labels.add(`relation/${x.label}`);
    if (r.label && r.head) labels.add(`relation/${r.label}`);
    else if (r.label) labels.add(`${r.task ?? ''}/${r.label}`).add(r.label);
  }
  return [...labels];
}

function int(
  values: Record<string, string | boolean | undefined>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = values[name];
  const n = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
  return n;
}

const commands: Record<string, { help: string; run: (args: string[], io: Io) => Promise<void> }> = {
  train: {
    help: TRAIN_HELP,
    async run(args, io) {
      const { values } = parseArgs({
        args,
        options: {
          task: { type: 'string' },
          data: { type: 'string' },
          eval: { type: 'string' },
          out: { type: 'string' },
          mode: { type: 'string' },
          epochs: { type: 'string' },
          'learning-rate': { type: 'string' },
          'batch-size': { type: 'string' },
          'lora-rank': { type: 'string' },
          seed: { type: 'string' },
          checkpoints: { type: 'string' },
          resume: { type: 'string' },
          'out-of-scope': { type: 'string' },
        },
      });
      if (!values.data || !values.out) throw new UsageError('--data and --out are required');
      if (values.task && values.task !== 'ner' && values.task !== 'classification')
        throw new UsageError('--task must be ner or classification');
      const mode = (values.mode ?? 'full') as TrainingType;
      if (mode !== 'full' && mode !== 'lora') throw new UsageError('--mode must be full or lora');
      const nrEpochs = int(values, 'epochs', 6, 1, 1000);
      const batchSize = int(values, 'batch-size', ENCODER_DEFAULTS.batchSize, 1, 1024);
      const loraRank = int(values, 'lora-rank', ENCODER_DEFAULTS.loraRank, 1, 128);
      const seed = int(values, 'seed', 13, 0, 2 ** 31 - 1);
      const learningRate = Number(values['learning-rate'] ?? 0.002);
      if (!(learningRate > 0 && learningRate <= 0.1)) throw new UsageError('--learning-rate must be in (0, 0.1]');
      if (values.resume && !existsSync(values.resume)) throw new UsageError(`no such checkpoint: ${values.resume}`);
      const train = readRows(values.data, values.task);
      const heldout = values.eval ? readRows(values.eval, values.task) : [];
      const controller = new AbortController();
      const onSigint = () => controller.abort();
      process.once('SIGINT', onSigint);
      const started = Date.now();
      const bar = progressBar(io);
      try {
        const result = await trainModel({
          baseModel: EXTRACT_BASE_ID,
          trainingType: mode,
          train,
          heldout,
          hyperparameters: { nrEpochs, learningRate, batchSize, loraRank, seed },
          signal: controller.signal,
          ...(values['out-of-scope'] ? { outOfScope: { label: values['out-of-scope'] } } : {}),
          ...(values.resume ? { resumeFrom: readFileSync(values.resume) } : {}),
          onLog: (_level, message) => io.err(`${io.isTTY ? '\n' : ''}${message}\n`),
          onProgress: (p) =>
            bar(
              p.step / Math.max(1, p.totalSteps),
              `epoch ${p.epoch}/${nrEpochs} loss ${p.loss.toFixed(4)} ${p.examplesPerSecond} rows/s eta ${p.etaSeconds} s${p.metrics ? ` held-out ${p.metrics.f1.toFixed(4)}` : ''}`,
            ),
          ...(values.checkpoints
            ? {
                onCheckpoint: async (c) => {
                  const file = path.join(values.checkpoints!, c.id);
                  mkdirSync(path.dirname(file), { recursive: true });
                  writeFileSync(file, c.bytes);
                },
              }
            : {}),
        });
        if (io.isTTY) io.err('\n');
        if (heldout.length) printMetrics(io, `eval on ${heldout.length} rows`, result.metrics, true);
        mkdirSync(values.out, { recursive: true });
        writeFileSync(path.join(values.out, 'model.bundle'), result.bundle);
        writeFileSync(
          path.join(values.out, 'manifest.json'),
          `${JSON.stringify({ ...result.manifest, training_seconds: (Date.now() - started) / 1000 }, null, 2)}\n`,
        );
        io.out(
          `saved ${path.join(values.out, 'model.bundle')} (${(result.bundle.byteLength / 1e6).toFixed(2)} MB) and manifest.json in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
        );
      } finally {
        process.removeListener('SIGINT', onSigint);
      }
    },
  },
  eval: {
    help: EVAL_HELP,
    async run(args, io) {
      // `--labels` alone means the labels the file has.
      const i = args.indexOf('--labels');
      const normalized =
        i >= 0 && (i === args.length - 1 || args[i + 1]!.startsWith('--'))
          ? [...args.slice(0, i + 1), '', ...args.slice(i + 1)]
          : args;
      const { values } = parseArgs({
        args: normalized,
        options: {
          model: { type: 'string' },
          data: { type: 'string' },
          labels: { type: 'string' },
          macro: { type: 'boolean' },
          'per-label': { type: 'boolean' },
        },
      });
      if (!values.model || !values.data) throw new UsageError('--model and --data are required');
      const bundle = bundleIn(values.model);
      const { schema } = readManifest(bundle);
      const task = schema.entities.length || schema.relations.length ? 'ner' : 'classification';
      const rows = readRows(values.data, task);
      const given = values.labels
        ?.split(',')
        .map((l) => l.trim())
        .filter(Boolean);
      const labels = values.labels === undefined ? undefined : given?.length ? given : labelsIn(rows);
      const scope = labels ? ` (scoring ${given?.length ? 'the given' : "the file's"} ${labels.length} labels)` : '';
      printMetrics(
        io,
        `model on ${rows.length} rows${scope}`,
        evaluateBundle(bundle, rows, labels ? { labels } : {}),
        Boolean(values['per-label']),
        Boolean(values.macro),
      );
    },
  },
  predict: {
    help: PREDICT_HELP,
    async run(args, io) {
      const { values } = parseArgs({
        args,
        options: {
          model: { type: 'string' },
          text: { type: 'string' },
          file: { type: 'string' },
          threshold: { type: 'string' },
        },
      });
      if (!values.model || (!values.text && !values.file))
        throw new UsageError('--model and one of --text or --file are required');
      const threshold = Number(values.threshold ?? 0);
      if (!(threshold >= 0 && threshold <= 1)) throw new UsageError('--threshold must be from 0 to 1');
      if (values.file && !existsSync(values.file)) throw new UsageError(`no such file: ${values.file}`);
      const model = loadModel(bundleIn(values.model));
      const inputs = values.text
        ? [values.text]
        : readFileSync(values.file!, 'utf8')
            .split('\n')
            .filter((l) => l.trim());
      for (const text of inputs)
        io.out(
          `${JSON.stringify({ text, ...model.extract(text, {}, { threshold, includeConfidence: true, includeSpans: true }) })}\n`,
        );
    },
  },
};

/** `pnpm whetstone ml …`; returns the exit code (0 ok, 1 failed, 2 usage). */
export async function runMlCli(
  argv: string[],
  io: Io = {
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
    isTTY: Boolean(process.stderr.isTTY),
  },
): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(HELP);
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    io.err(`error: unknown command '${name}'\n\n${HELP}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(command.help);
    return 0;
  }
  try {
    await command.run(rest, io);
    return 0;
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`error: ${(err as Error).message}\n\n${command.help}`);
      return 2;
    }
    io.err(`error: ${(err as Error).message}\n`);
    return 1;
  }
}
