/**
 * pnpm --filter @whetstone/bench bench:nn
 * The nn elementwise ops (LayerNorm, GELU, bias, LoRA linear, AdamW) forward + backward in TypeScript
 * against their fused onnxruntime graphs, one intra-op thread, median of BENCH_NN_RUNS runs of process CPU
 * time (BENCH_NN_CLOCK=wall for wall time: on a busy machine it is bimodal, descheduled runs included). Matmuls run
 * in ORT on both sides (the LoRA row compares three Gemm calls and JS scaling with one fused graph).
 * The last column is the path the op takes by default at that size.
 */
import { nn } from '@whetstone/ml/internals';

const RUNS = Number(process.env.BENCH_NN_RUNS ?? 15);
const RANK = 8;
const WALL = process.env.BENCH_NN_CLOCK === 'wall';

type Case = { op: nn.FusedOp; shape: string; size: number; prepare: () => () => void };

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

/** Milliseconds on the chosen clock: process CPU time (user + sys) by default, which other processes on a shared machine barely disturb. */
function now(): number {
  if (WALL) return Number(process.hrtime.bigint()) / 1e6;
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e3;
}

/** Median times in ms of `run` on each path, after warm-up calls; the paths alternate run by run. */
function time(op: nn.FusedOp, run: () => void, paths: number[]): number[] {
  const ms: number[][] = paths.map(() => []);
  for (let i = -3; i < RUNS; i++)
    paths.forEach((min, p) => {
      nn.setFusedMinSize(op, min);
      const t = now();
      run();
      if (i >= 0) ms[p]!.push(now() - t);
    });
  nn.setFusedMinSize(op);
  return ms.map(median);
}

const rng = new nn.Rng(1);
const param = (shape: number[], std = 1) =>
  nn.tensor(
    nn.randn(
      rng,
      shape.reduce((a, b) => a * b, 1),
      std,
    ),
    shape,
    true,
  );

/** Forward + backward of one op: the input gets a fresh gradient each run (as a tape intermediate does), parameters keep theirs. */
function fb(rows: number, cols: number, op: (x: nn.Tensor) => nn.Tensor): () => () => void {
  return () => {
    const data = nn.randn(rng, rows * cols, 1);
    const dy = nn.randn(rng, rows * cols, 1);
    return () => {
      const x = nn.tensor(data, [rows, cols], true);
      op(x).backward(dy);
    };
  };
}

function cases(): Case[] {
  const out: Case[] = [];
  for (const rows of [2048, 4096])
    for (const D of [128, 512]) {
      const shape = `${rows}×${D}`;
      const g = param([D]);
      const b = param([D]);
      out.push({ op: 'layerNorm', shape, size: rows * D, prepare: fb(rows, D, (x) => nn.layerNorm(x, g, b)) });
      out.push({ op: 'gelu', shape, size: rows * D, prepare: fb(rows, D, (x) => nn.gelu(x)) });
      out.push({ op: 'addBias', shape, size: rows * D, prepare: fb(rows, D, (x) => nn.addBias(x, b)) });
      const W = nn.tensor(nn.randn(rng, D * D, 0.05), [D, D]);
      const A = param([D, RANK], 0.05);
      const B = param([RANK, D], 0.05);
      out.push({
        op: 'loraLinear',
        shape: `${shape}·${D}×${D}, r ${RANK}`,
        size: rows * D * D,
        prepare: fb(rows, D, (x) => nn.loraLinear(x, W, A, B, 2)),
      });
    }
  // Two pre-LN blocks at D = 256 with a 4× MLP: 1.58M parameters in 20 tensors of 256 to 262k values.
  const D = 256;
  const shapes = [D, D, [D, 3 * D], [3 * D], [D, D], [D], D, D, [D, 4 * D], [4 * D], [4 * D, D], [D]].map((s) =>
    Array.isArray(s) ? s : [s],
  );
  const params = [...shapes, ...shapes].map((s) => param(s, 0.02));
  const total = params.reduce((a, p) => a + p.data.length, 0);
  out.push({
    op: 'adam',
    shape: `${(total / 1e6).toFixed(2)}M parameters, ${params.length} tensors`,
    size: total,
    prepare: () => {
      const opt = new nn.Adam(params, { learningRate: 1e-3, weightDecay: 0.01 });
      const grads = params.map((p) => nn.randn(rng, p.data.length, 1));
      return () => {
        params.forEach((p, i) => p.gradBuffer().set(grads[i]!));
        opt.step();
      };
    },
  });
  // Small sizes, to place the thresholds.
  for (const rows of [16, 64, 256]) {
    const g = param([128]);
    const b = param([128]);
    out.push({
      op: 'layerNorm',
      shape: `${rows}×128`,
      size: rows * 128,
      prepare: fb(rows, 128, (x) => nn.layerNorm(x, g, b)),
    });
    out.push({ op: 'gelu', shape: `${rows}×128`, size: rows * 128, prepare: fb(rows, 128, (x) => nn.gelu(x)) });
  }
  for (const n of [4096, 32768, 262144]) {
    const p = param([n]);
    out.push({
      op: 'adam',
      shape: `one tensor of ${n}`,
      size: n,
      prepare: () => {
        const opt = new nn.Adam([p], { learningRate: 1e-3 });
        const grad = nn.randn(rng, n, 1);
        return () => {
          p.gradBuffer().set(grad);
          opt.step();
        };
      },
    });
  }
  return out;
}

function main(): void {
  if (nn.setMatmulBackend('ort') !== 'ort') throw new Error('onnxruntime-node did not load');
  const rows: string[] = [];
  for (const c of cases()) {
    const min = nn.setFusedMinSize(c.op);
    // Over many tensors the default sends each Adam update its own way, so it is timed too.
    const mixed = c.op === 'adam' && c.shape.includes('tensors');
    const [js, ort, chosen] = time(c.op, c.prepare(), mixed ? [Infinity, 0, min] : [Infinity, 0]);
    const path = mixed ? `mixed: ${chosen!.toFixed(2)} ms` : c.size >= min ? 'ORT' : 'JS';
    rows.push(
      `| ${c.op} | ${c.shape} | ${js!.toFixed(2)} | ${ort!.toFixed(2)} | ${(js! / ort!).toFixed(2)}× | ${path} |`,
    );
    process.stderr.write(`${rows[rows.length - 1]}\n`);
  }
  console.log(
    `nn ops, forward + backward (Adam: one step), median ${WALL ? 'wall' : 'CPU'} time of ${RUNS} runs, 1 intra-op thread\n`,
  );
  console.log('| op | shape | JS ms | ORT ms | JS/ORT | default |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
}

main();
