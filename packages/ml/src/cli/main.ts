import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { NgramClassifier } from '../classify/ngram-classifier';
import { LinearTagger } from '../extract/linear-tagger';
import { loadGlove } from '../assets';
import { conllToJsonl, validateJsonl, csvToJsonl, type Example } from '../data';
import { classificationPRF, spanPRF } from '../eval';

const HELP = `Usage: pnpm whetstone ml <command> [options]

Train, evaluate and run the built-in models locally; no services needed.

Commands:
  train     train a model on a dataset file and save it
  eval      evaluate a saved model on a labelled file
  predict   run a saved model on text

Run \`pnpm whetstone ml <command> --help\` for its options.
Built so far: text classification (hashed n-gram model) and entity extraction (linear BIO tagger with GloVe).
The transformer encoder, LoRA, zero-shot and decoders are not built yet.
`;

const TRAIN_HELP = `Usage: pnpm whetstone ml train --data <file> --out <dir> [options]

Train a text classifier on JSONL ({"text", "label"} rows) or CSV (text,label header), or, with --task ner,
an entity tagger on JSONL ({"text", "entities": [{start, end, label}]}) or CoNLL/BIO.

Options:
  --task <t>           classification (default) or ner
  --data <file>        training file (.jsonl or .csv)
  --eval <file>        labelled file to report F1 on after training (optional)
  --out <dir>          where to write model.json and manifest.json
  --epochs <n>         passes over the data (default 10)
  --learning-rate <x>  AdaGrad step (default 0.5)
  --seed <n>           random seed; the same seed reproduces the model (default 13)
  --multi-label        sigmoid per label instead of one softmax
  -h, --help           show this help

Examples:
  pnpm whetstone ml train --data ../shared/datasets/banking77/train.jsonl --eval ../shared/datasets/banking77/test.jsonl --out .data/models/banking77
  pnpm whetstone ml train --task ner --data ../shared/datasets/wikigold/train.jsonl --eval ../shared/datasets/wikigold/test.jsonl --out .data/models/wikigold --epochs 6
`;

const EVAL_HELP = `Usage: pnpm whetstone ml eval --model <dir> --data <file>

Report micro and per-label precision, recall and F1 of a saved model on a labelled file.

Options:
  --model <dir>   a directory written by \`train\`
  --data <file>   labelled JSONL or CSV
  --per-label     print every label's figures
  -h, --help      show this help
`;

const PREDICT_HELP = `Usage: pnpm whetstone ml predict --model <dir> (--text "<text>" | --file <file>)

Print the predicted label and confidence as JSON, one line per input.

Options:
  --model <dir>   a directory written by \`train\`
  --text <text>   one input
  --file <file>   one input per line
  -h, --help      show this help
`;

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  isTTY: boolean;
}

class UsageError extends Error {}

function readLabelled(file: string): { text: string; label: string }[] {
  if (!existsSync(file)) throw new UsageError(`no such file: ${file}`);
  let content = readFileSync(file, 'utf8');
  if (file.endsWith('.csv')) {
    const converted = csvToJsonl(content);
    if (converted.errors.length) throw new Error(`${file}: ${converted.errors.map((e) => `line ${e.line} ${e.field}: ${e.reason}`).slice(0, 10).join('; ')}`);
    content = converted.jsonl;
  }
  const report = validateJsonl(content, 'classification', { minExamples: 2 });
  if (report.errors.length) {
    const shown = report.errors.slice(0, 10).map((e) => `  line ${e.line}, ${e.field}: ${e.reason}`).join('\n');
    throw new Error(`${file} has ${report.errors.length} invalid rows:\n${shown}${report.errors.length > 10 ? '\n  …' : ''}`);
  }
  return report.examples.filter((e: Example) => e.label).map((e) => ({ text: e.text!, label: e.label! }));
}

function bar(io: Io, fraction: number, suffix: string): void {
  const width = 28;
  const filled = Math.round(fraction * width);
  const line = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ${suffix}`;
  io.err(io.isTTY ? `\r${line}` : `${line}\n`);
}

function loadModel(dir: string): NgramClassifier {
  const file = path.join(dir, 'model.json');
  if (!existsSync(file)) throw new UsageError(`no model in ${dir} (expected model.json written by \`ml train\`)`);
  return NgramClassifier.fromJSON(JSON.parse(readFileSync(file, 'utf8')));
}

function taskOf(dir: string): string {
  const manifest = path.join(dir, 'manifest.json');
  if (!existsSync(manifest)) throw new UsageError(`no model in ${dir} (expected manifest.json written by \`ml train\`)`);
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { task?: string }).task ?? 'classification';
}

function printReport(io: Io, name: string, r: ReturnType<typeof classificationPRF>, perLabel: boolean): void {
  io.out(`${name}: micro F1 ${r.f1.toFixed(4)}  precision ${r.precision.toFixed(4)}  recall ${r.recall.toFixed(4)}\n`);
  if (perLabel) for (const [l, s] of Object.entries(r.perLabel)) io.out(`  ${l.padEnd(48)} F1 ${s.f1.toFixed(3)}  support ${s.support}\n`);
}

function readEntities(file: string): Example[] {
  if (!existsSync(file)) throw new UsageError(`no such file: ${file}`);
  let content = readFileSync(file, 'utf8');
  if (/\.(conll|bio|txt)$/.test(file)) {
    const converted = conllToJsonl(content);
    if (converted.errors.length) throw new Error(`${file}: ${converted.errors.map((e) => `line ${e.line} ${e.field}: ${e.reason}`).slice(0, 10).join('; ')}`);
    content = converted.jsonl;
  }
  const report = validateJsonl(content, 'extraction', { minExamples: 2 });
  if (report.errors.length) {
    const shown = report.errors.slice(0, 10).map((e) => `  line ${e.line}, ${e.field}: ${e.reason}`).join('\n');
    throw new Error(`${file} has ${report.errors.length} invalid rows:\n${shown}${report.errors.length > 10 ? '\n  …' : ''}`);
  }
  return report.examples;
}

async function trainNer(values: Record<string, string>, io: Io): Promise<void> {
  const epochs = Number(values.epochs ?? 6);
  const seed = Number(values.seed ?? 13);
  if (!Number.isInteger(epochs) || epochs < 1 || epochs > 1000) throw new UsageError('--epochs must be an integer from 1 to 1000');
  const train = readEntities(values.data!);
  io.err(`training an entity tagger on ${train.length} sentences, ${epochs} epochs\n`);
  const started = Date.now();
  const model = LinearTagger.train(train, {
    epochs,
    seed,
    embeddings: loadGlove(),
    onEpoch: (epoch, errors) => bar(io, epoch / epochs, `epoch ${epoch}/${epochs} token errors ${errors}`),
  });
  if (io.isTTY) io.err('\n');
  const metrics: Record<string, number> = {};
  if (values.eval) {
    const test = readEntities(values.eval);
    const r = spanPRF(test.map((e) => e.entities ?? []), test.map((e) => model.extract(e.text ?? '')));
    Object.assign(metrics, { f1: r.f1, precision: r.precision, recall: r.recall });
    io.out(`eval on ${test.length} sentences: micro F1 ${r.f1.toFixed(4)}  precision ${r.precision.toFixed(4)}  recall ${r.recall.toFixed(4)}\n`);
    for (const [l, x] of Object.entries(r.perLabel)) io.out(`  ${l.padEnd(20)} F1 ${x.f1.toFixed(3)}  support ${x.support}\n`);
  }
  mkdirSync(values.out!, { recursive: true });
  writeFileSync(path.join(values.out!, 'model.json'), JSON.stringify(model.toJSON()));
  const manifest = {
    base: 'whetstone-linear-tagger',
    mode: 'full',
    task: 'ner',
    schema: { entities: model.entityTypes },
    tokenizer: 'whetstone-regex-words',
    embeddings: 'glove-40k',
    hyperparameters: { nr_epochs: epochs, seed },
    metrics,
    trained_at: new Date().toISOString(),
    training_seconds: (Date.now() - started) / 1000,
  };
  writeFileSync(path.join(values.out!, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  io.out(`saved ${path.join(values.out!, 'model.json')} and manifest.json\n`);
}

const commands: Record<string, { help: string; run: (args: string[], io: Io) => Promise<void> }> = {
  train: {
    help: TRAIN_HELP,
    async run(args, io) {
      const { values } = parseArgs({ args, options: { task: { type: 'string' }, data: { type: 'string' }, eval: { type: 'string' }, out: { type: 'string' }, epochs: { type: 'string' }, 'learning-rate': { type: 'string' }, seed: { type: 'string' }, 'multi-label': { type: 'boolean' } } });
      if (!values.data || !values.out) throw new UsageError('--data and --out are required');
      const task = values.task ?? 'classification';
      if (task !== 'classification' && task !== 'ner') throw new UsageError('--task must be classification or ner');
      if (task === 'ner') return trainNer(values as Record<string, string>, io);
      const epochs = Number(values.epochs ?? 10);
      const learningRate = Number(values['learning-rate'] ?? 0.5);
      const seed = Number(values.seed ?? 13);
      if (!Number.isInteger(epochs) || epochs < 1 || epochs > 1000) throw new UsageError('--epochs must be an integer from 1 to 1000');
      if (!(learningRate > 0 && learningRate <= 10)) throw new UsageError('--learning-rate must be in (0, 10]');
      const train = readLabelled(values.data);
      io.err(`training on ${train.length} examples, ${new Set(train.map((e) => e.label)).size} labels, ${epochs} epochs\n`);
      const started = Date.now();
      const { model, epochLosses } = NgramClassifier.train(
        train.map((e) => ({ text: e.text, labels: [e.label] })),
        { epochs, learningRate, seed, multiLabel: Boolean(values['multi-label']), onProgress: (p) => bar(io, p.epoch / epochs, `epoch ${p.epoch}/${epochs} loss ${p.loss.toFixed(4)} ${Math.round(p.examplesPerSecond)} ex/s eta ${p.etaSeconds.toFixed(1)} s`) },
      );
      if (io.isTTY) io.err('\n');
      const metrics: Record<string, number> = { train_loss: epochLosses[epochLosses.length - 1]! };
      if (values.eval) {
        const test = readLabelled(values.eval);
        const r = classificationPRF(test.map((e) => [e.label]), test.map((e) => [model.predict(e.text).label]));
        Object.assign(metrics, { f1: r.f1, precision: r.precision, recall: r.recall });
        printReport(io, `eval on ${test.length} examples`, r, false);
      }
      mkdirSync(values.out, { recursive: true });
      writeFileSync(path.join(values.out, 'model.json'), JSON.stringify(model.toJSON()));
      const manifest = {
        base: 'whetstone-ngram-classifier',
        mode: 'full',
        task: 'classification',
        schema: { labels: model.labels, multi_label: model.multiLabel },
        tokenizer: 'whetstone-regex-words+bigrams',
        hyperparameters: { nr_epochs: epochs, learning_rate: learningRate, seed },
        metrics,
        trained_at: new Date().toISOString(),
        training_seconds: (Date.now() - started) / 1000,
      };
      writeFileSync(path.join(values.out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
      io.out(`saved ${path.join(values.out, 'model.json')} and manifest.json\n`);
    },
  },
  eval: {
    help: EVAL_HELP,
    async run(args, io) {
      const { values } = parseArgs({ args, options: { model: { type: 'string' }, data: { type: 'string' }, 'per-label': { type: 'boolean' } } });
      if (!values.model || !values.data) throw new UsageError('--model and --data are required');
      if (taskOf(values.model) === 'ner') {
        const tagger = LinearTagger.fromJSON(JSON.parse(readFileSync(path.join(values.model, 'model.json'), 'utf8')), loadGlove());
        const test = readEntities(values.data);
        printReport(io, 'model', spanPRF(test.map((e) => e.entities ?? []), test.map((e) => tagger.extract(e.text ?? ''))), Boolean(values['per-label']));
        return;
      }
      const model = loadModel(values.model);
      const test = readLabelled(values.data);
      printReport(io, 'model', classificationPRF(test.map((e) => [e.label]), test.map((e) => [model.predict(e.text).label])), Boolean(values['per-label']));
    },
  },
  predict: {
    help: PREDICT_HELP,
    async run(args, io) {
      const { values } = parseArgs({ args, options: { model: { type: 'string' }, text: { type: 'string' }, file: { type: 'string' } } });
      if (!values.model || (!values.text && !values.file)) throw new UsageError('--model and one of --text or --file are required');
      const inputs = values.text ? [values.text] : readFileSync(values.file!, 'utf8').split('\n').filter((l) => l.trim());
      if (taskOf(values.model) === 'ner') {
        const tagger = LinearTagger.fromJSON(JSON.parse(readFileSync(path.join(values.model, 'model.json'), 'utf8')), loadGlove());
        for (const text of inputs) {
          const entities = tagger.extract(text).map((e) => ({ text: e.text, label: e.label, start: e.start, end: e.end, confidence: Number(e.confidence.toFixed(4)) }));
          io.out(`${JSON.stringify({ text, entities })}\n`);
        }
        return;
      }
      const model = loadModel(values.model);
      for (const text of inputs) {
        const p = model.predict(text);
        io.out(`${JSON.stringify({ text, label: p.label, confidence: Number(p.confidence.toFixed(4)) })}\n`);
      }
    },
  },
};

/** `pnpm whetstone ml …`; returns the exit code (0 ok, 1 failed, 2 usage). */
export async function runMlCli(argv: string[], io: Io = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s), isTTY: Boolean(process.stderr.isTTY) }): Promise<number> {
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
