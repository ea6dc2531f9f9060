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

  /** The gradient buffer, allocated on first use. */
  gradBuffer(): Float32Array {
    if (!this.grad) this.grad = new Float32Array(this.data.length);
    return this.grad;
  }

  /** Back-propagates from this scalar (or with the given output gradient). */
  backward(outputGrad?: Float32Array): void {
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
    for (let i = order.length - 1; i >= 0; i--) order[i]!.backwardFn?.();
  }
}

/** A leaf tensor (a parameter when `requiresGrad`). */
export function tensor(data: Float32Array | number[], shape: readonly number[], requiresGrad = false): Tensor {
  return new Tensor(data instanceof Float32Array ? data : Float32Array.from(data), shape, requiresGrad);
}

export function zeros(shape: readonly number[], requiresGrad = false): Tensor {
  return new Tensor(new Float32Array(shape.reduce((a, b) => a * b, 1)), shape, requiresGrad);
}
