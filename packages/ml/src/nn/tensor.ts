/**
 * Typed arrays kept for reuse. Training makes the same shapes step after step, and allocating every activation
 * and gradient afresh was most of what the garbage collector collected (about 1.8 GB of typed arrays an epoch
 * on wikigold). Buffers are grouped by power-of-two size and handed out as zeroed views, so a buffer serves
 * any shape up to its size until the pool takes it back.
 */
class BufferPool {
  private readonly free = new Map<number, Float32Array[]>();
  private readonly lent: Float32Array[] = [];

  take(n: number): Float32Array {
    const size = 2 ** Math.ceil(Math.log2(Math.max(1, n)));
    const buffer = this.free.get(size)?.pop() ?? new Float32Array(size);
    this.lent.push(buffer);
    const view = buffer.subarray(0, n);
    view.fill(0);
    return view;
  }

  /** Takes every lent buffer back for the next take. */
  reclaim(): void {
    for (const buffer of this.lent) {
      const list = this.free.get(buffer.length);
      if (list) list.push(buffer);
      else this.free.set(buffer.length, [buffer]);
    }
    this.lent.length = 0;
  }
}

/** Intermediate gradients of a backward pass run outside a training step. */
const gradPool = new BufferPool();
/** Everything the ops of one training step allocate (see {@link trainingStep}). */
const stepPool = new BufferPool();
let inBackward = false;
let inStep = false;

/**
 * A zeroed array of n values for an op's output. Inside {@link trainingStep} it comes from the step's pool;
 * elsewhere (inference, evaluation) it is the caller's to keep.
 */
export function opBuffer(n: number): Float32Array {
  return inStep ? stepPool.take(n) : new Float32Array(n);
}

/**
 * Runs one training step's forward and backward pass with every op output and intermediate gradient taken
 * from buffers that the next step reuses. Nothing `fn` computes with the ops may be kept once it returns
 * (read the loss inside); parameters and their gradients are the caller's own and are not affected.
 */
export function trainingStep<T>(fn: () => T): T {
  if (inStep) throw new Error('trainingStep: a training step is already running');
  inStep = true;
  try {
    return fn();
  } finally {
    inStep = false;
    stepPool.reclaim();
  }
}

/**
 * A small reverse-mode autograd core on Float32Array. Tensors are row-major
 * 2-D (`[rows, cols]`) or 1-D; an op records a backward closure only when one
 * of its inputs requires a gradient, so inference builds no tape at all.
 */
export class Tensor {
  grad: Float32Array | null = null;
  /** @internal */ readonly parents: readonly Tensor[];
  /** @internal */ readonly backwardFn: (() => void) | null;

  constructor(
    readonly data: Float32Array,
    readonly shape: readonly number[],
    readonly requiresGrad = false,
    parents: readonly Tensor[] = [],
    backwardFn: (() => void) | null = null,
  ) {
    const size = shape.reduce((a, b) => a * b, 1);
    if (size !== data.length) throw new Error(`shape [${shape.join(',')}] does not match ${data.length} values`);
    this.parents = parents;
    this.backwardFn = backwardFn;
  }

  get rows(): number {
    return this.shape.length === 1 ? 1 : this.shape[0]!;
  }

  get cols(): number {
    return this.shape[this.shape.length - 1]!;
  }

  /**
   * The gradient buffer, allocated on first use. An intermediate tensor's comes from a pool during a backward pass
   * and is taken back when the pass (or the training step) ends; a leaf's (a parameter's or an input's) is its
   * own and stays.
   */
  gradBuffer(): Float32Array {
    if (!this.grad) {
      const n = this.data.length;
      const pool = this.parents.length === 0 ? null : inStep ? stepPool : inBackward ? gradPool : null;
      this.grad = pool ? pool.take(n) : new Float32Array(n);
    }
    return this.grad;
  }

  /**
   * Back-propagates from this scalar (or with the given output gradient) into the leaves' gradients. As in
   * other autograd libraries, intermediate tensors keep no gradient afterwards.
   */
  backward(outputGrad?: Float32Array): void {
    if (inBackward) throw new Error('backward: another backward pass is running');
    inBackward = true;
    try {
      this.propagate(outputGrad);
    } finally {
      inBackward = false;
      if (!inStep) gradPool.reclaim();
    }
  }

  private propagate(outputGrad?: Float32Array): void {
    const order: Tensor[] = [];
    const seen = new Set<Tensor>();
    const visit = (t: Tensor): void => {
      if (seen.has(t) || !t.requiresGrad) return;
      seen.add(t);
      for (const p of t.parents) visit(p);
      order.push(t);
    };
    visit(this);
    const g = this.gradBuffer();
    if (outputGrad) g.set(outputGrad);
    else g.fill(1);
    try {
      for (let i = order.length - 1; i >= 0; i--) order[i]!.backwardFn?.();
    } finally {
      for (const t of order) if (t.parents.length > 0) t.grad = null;
    }
  }
}

/** A leaf tensor (a parameter when `requiresGrad`). */
export function tensor(data: Float32Array | number[], shape: readonly number[], requiresGrad = false): Tensor {
  return new Tensor(data instanceof Float32Array ? data : Float32Array.from(data), shape, requiresGrad);
}

export function zeros(shape: readonly number[], requiresGrad = false): Tensor {
  return new Tensor(new Float32Array(shape.reduce((a, b) => a * b, 1)), shape, requiresGrad);
}
