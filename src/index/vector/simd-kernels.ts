/**
 * WebAssembly SIMD nearest-centroid kernel (issue 7): the blocked distance computation behind
 * `NearestCentroids` (kmeans.ts), used for IVF assignment, PQ encoding and k-means.
 *
 * The kernel source is simd-kernels.wat (read its header for the layout and the error bound);
 * simd-kernels.wasm.ts holds it assembled (scripts/gen-simd-wasm.ts). One module instance and one
 * linear memory per process (per worker), created on first use:
 * - a matrix (`SimdMatrix`: K vectors of `dim` values) is stored transposed and padded to a
 *   multiple of 16 columns, with its squared norms as f32 (+Inf in the padding) and
 *   C ≥ max ‖c_j‖; memory comes from a small power-of-two free-list allocator, released by
 *   `dispose()` or, failing that, when the matrix is garbage-collected;
 * - rows are staged (`stageRows`) into a shared scratch block of up to `STAGE_ROWS` rows, then
 *   `argminStaged` runs the kernel's `nearest` (F = (‖c‖² − 2x·c)/2 in f32, then a certified
 *   argmin) over a column range of them (a PQ sub-space), giving per row the nearest column, or
 *   −1 when another column is within the rounding tolerance (`certifyTolerance`); the caller
 *   re-checks those with its exact float64 distance, reading the candidates from
 *   `stagedDistances()`;
 * - `SimdSeeding` (k-means++ seeding) holds a whole sample in a private instance and runs the
 *   seeding's per-centre update loop there, with the same float64 arithmetic as the JS loop.
 *
 * Nothing here decides ties or exactness: the kernel only proves "this is the strict minimum of
 * any distance within the tolerance of the exact one" or declines. Without WebAssembly SIMD (or
 * with `setSimdKernelsEnabled(false)`, or QUIVER_SIMD=0 in the environment) `simdAvailable()` is
 * false and callers use their pure-JS path, which gives the same results.
 */
import { SIMD_KERNELS_WASM_BASE64 } from './simd-kernels.wasm.js';

/** Rows staged per kernel call. */
export const STAGE_ROWS = 64;
/** Matrices larger than this stay on the JS path (the model already holds them once). */
const MAX_MATRIX_BYTES = 256 * 1024 * 1024;
/** Beyond this, products could overflow f32; such matrices (and rows, in the kernel) are not certified. */
export const MAX_CERTIFIED_NORM = 1e15;
/** The kernel's error bound assumes (n + 1)·2⁻²⁴ ≪ 1. */
const MAX_DIM = 65536;

interface KernelExports {
  memory: WebAssembly.Memory;
  nearest(xp: number, xs: number, rows: number, dim: number, ct: number, kp: number, cmax: number, dp: number, outp: number, sp: number): void;
  seed_update(xp: number, n: number, dim: number, cp: number, ccp: number, ap: number, dp: number, cidx: number): number;
}

/** The module instance plus a power-of-two free-list allocator over its memory. */
class Kernel {
  readonly ex: KernelExports;
  private top = 1024; // bytes 0..1023 unused
  private readonly free = new Map<number, number[]>();
  private f32: Float32Array;
  private i32: Int32Array;
  // Scratch: staged rows, distances, per-row results.
  xPtr = 0;
  xCap = 0;
  dPtr = 0;
  dCap = 0;
  outPtr = 0;
  /** Per staged row: the second smallest F of the last `argminStaged`. */
  secondPtr = 0;
  stageId = 0;
  /** Columns of the last `argminStaged` (row stride of the distance block). */
  lastKp = 0;

  constructor(ex: KernelExports) {
    this.ex = ex;
    this.f32 = new Float32Array(ex.memory.buffer);
    this.i32 = new Int32Array(ex.memory.buffer);
    this.outPtr = this.alloc(STAGE_ROWS * 4);
    this.secondPtr = this.alloc(STAGE_ROWS * 4);
  }

  /** Views of the whole memory (rebuilt after growth). */
  views(): { f32: Float32Array; i32: Int32Array } {
    if (this.f32.buffer !== this.ex.memory.buffer) {
      this.f32 = new Float32Array(this.ex.memory.buffer);
      this.i32 = new Int32Array(this.ex.memory.buffer);
    }
    return { f32: this.f32, i32: this.i32 };
  }

  static sizeClass(bytes: number): number {
    let s = 64;
    while (s < bytes) s *= 2;
    return s;
  }

  /** 64-byte aligned block of at least `bytes`, or −1 when memory cannot grow. */
  alloc(bytes: number): number {
    const size = Kernel.sizeClass(bytes);
    const list = this.free.get(size);
    if (list !== undefined && list.length > 0) return list.pop()!;
    const ptr = this.top;
    const end = ptr + size;
    const have = this.ex.memory.buffer.byteLength;
    if (end > have) {
      const pages = Math.ceil((end - have) / 65536);
      try {
        this.ex.memory.grow(Math.max(pages, Math.min(256, have / 65536))); // at least double up to 16 MB steps
      } catch {
        try {
          this.ex.memory.grow(pages);
        } catch {
          return -1;
        }
      }
    }
    this.top = end;
    return ptr;
  }

  release(ptr: number, bytes: number): void {
    const size = Kernel.sizeClass(bytes);
    let list = this.free.get(size);
    if (list === undefined) this.free.set(size, (list = []));
    list.push(ptr);
  }

  /** Ensures scratch for `rows` rows of `width` values and `rows × kp` distances. */
  ensureScratch(width: number, kp: number): boolean {
    const xBytes = STAGE_ROWS * width * 4;
    if (xBytes > this.xCap) {
      if (this.xCap > 0) this.release(this.xPtr, this.xCap);
      const p = this.alloc(xBytes);
      if (p < 0) {
        this.xCap = 0;
        return false;
      }
      this.xPtr = p;
      this.xCap = Kernel.sizeClass(xBytes);
    }
    const dBytes = STAGE_ROWS * kp * 4;
    if (dBytes > this.dCap) {
      if (this.dCap > 0) this.release(this.dPtr, this.dCap);
      const p = this.alloc(dBytes);
      if (p < 0) {
        this.dCap = 0;
        return false;
      }
      this.dPtr = p;
      this.dCap = Kernel.sizeClass(dBytes);
    }
    return true;
  }
}

let enabled = !/^(0|false|off|no)$/i.test(process.env.QUIVER_SIMD ?? '');
let compiled: WebAssembly.Module | null | undefined;
let kernel: Kernel | null | undefined;

/** The compiled module, or null without WebAssembly SIMD (or multi-value) support. */
function compiledModule(): WebAssembly.Module | null {
  if (compiled !== undefined) return compiled;
  compiled = null;
  try {
    if (typeof WebAssembly !== 'object') return null;
    const bytes = Uint8Array.from(Buffer.from(SIMD_KERNELS_WASM_BASE64, 'base64'));
    if (!WebAssembly.validate(bytes)) return null;
    compiled = new WebAssembly.Module(bytes);
  } catch {
    compiled = null;
  }
  return compiled;
}

function instantiate(): KernelExports | null {
  const mod = compiledModule();
  if (mod === null) return null;
  try {
    return new WebAssembly.Instance(mod, {}).exports as unknown as KernelExports;
  } catch {
    return null;
  }
}

function loadKernel(): Kernel | null {
  if (kernel !== undefined) return kernel;
  const ex = instantiate();
  kernel = ex === null ? null : new Kernel(ex);
  return kernel;
}

/** True when the WebAssembly SIMD kernel is loaded and enabled. */
export function simdAvailable(): boolean {
  return enabled && loadKernel() !== null;
}

/** Turns the SIMD kernel off (pure-JS paths) or back on; returns the previous setting. Tests and benchmarks. */
export function setSimdKernelsEnabled(on: boolean): boolean {
  const prev = enabled;
  enabled = on;
  return prev;
}

const finalizer = new FinalizationRegistry<{ ptr: number; bytes: number }>((held) => {
  kernel?.release(held.ptr, held.bytes);
});

/** K vectors of `dim` values in the kernel's memory (transposed, padded), with f32 norms and C. */
export class SimdMatrix {
  /** Columns, K rounded up to 16. */
  readonly kp: number;
  /** An upper bound of max_j ‖c_j‖. */
  readonly cmax: number;
  private ptr: number;
  private readonly bytes: number;

  private constructor(readonly k: number, readonly dim: number, kp: number, cmax: number, ptr: number, bytes: number) {
    this.kp = kp;
    this.cmax = cmax;
    this.ptr = ptr;
    this.bytes = bytes;
    finalizer.register(this, { ptr, bytes }, this);
  }

  /**
   * The matrix of `c[co + j·dim ..]` (j < k) with float64 squared norms `norms`, or null when the
   * kernel is unavailable or disabled, the matrix too large, or its norms too large to certify.
   */
  static create(c: Float32Array, co: number, k: number, dim: number, norms: Float64Array): SimdMatrix | null {
    if (!enabled || k < 1 || dim < 1 || dim > MAX_DIM) return null;
    const kern = loadKernel();
    if (kern === null) return null;
    let maxNorm = 0;
    for (let j = 0; j < k; j++) {
      const v = norms[j];
      if (!(v <= MAX_CERTIFIED_NORM * MAX_CERTIFIED_NORM)) return null; // also NaN
      if (v > maxNorm) maxNorm = v;
    }
    const kp = (k + 15) & ~15;
    const bytes = (dim + 1) * kp * 4;
    if (bytes > MAX_MATRIX_BYTES) return null;
    if (!kern.ensureScratch(1, kp)) return null; // the distance block for kp columns
    const ptr = kern.alloc(bytes);
    if (ptr < 0) return null;
    const { f32 } = kern.views();
    const base = ptr >> 2;
    f32.fill(0, base, base + dim * kp);
    for (let j = 0; j < k; j++) {
      const o = co + j * dim;
      for (let d = 0; d < dim; d++) f32[base + d * kp + j] = c[o + d];
    }
    const nb = base + dim * kp;
    for (let j = 0; j < k; j++) f32[nb + j] = Math.fround(norms[j]) / 2;
    f32.fill(Infinity, nb + k, nb + kp);
    // sqrt of a float64 sum with relative error ≪ 2⁻³⁰, rounded up generously.
    const cmax = Math.sqrt(maxNorm) * (1 + 2 ** -30);
    return new SimdMatrix(k, dim, kp, cmax, ptr, bytes);
  }

  /** Frees the kernel memory now (the matrix must not be used afterwards). */
  dispose(): void {
    if (this.ptr < 0) return;
    finalizer.unregister(this);
    kernel?.release(this.ptr, this.bytes);
    this.ptr = -1;
  }

  /** @internal */
  get pointer(): number {
    if (this.ptr < 0) throw new Error('SimdMatrix used after dispose()');
    return this.ptr;
  }
}

/**
 * Copies vectors `idx[io + i·is]` (i < count) of matrix `m` to `out[oo + i·os ..)` (dim values
 * each) from the kernel's copy, which is in cache right after `argminStaged` ran over it.
 */
export function copyColumns(
  m: SimdMatrix,
  idx: Uint8Array | Int32Array,
  io: number,
  is: number,
  count: number,
  out: Float32Array,
  oo: number,
  os: number,
): void {
  const { f32 } = kernel!.views();
  const base = m.pointer >> 2;
  const { kp, dim } = m;
  for (let i = 0; i < count; i++) {
    const src = base + idx[io + i * is];
    const dst = oo + i * os;
    for (let d = 0; d < dim; d++) out[dst + d] = f32[src + d * kp];
  }
}

/** A block of rows in the kernel's scratch memory; valid until the next `stageRows`. */
export interface StagedRows {
  readonly id: number;
  readonly count: number;
  readonly width: number;
}

/**
 * Copies `count ≤ STAGE_ROWS` rows of `width` values (`x[xo + i·stride ..]`) into the kernel's
 * scratch block; null when the kernel is unavailable or disabled.
 */
export function stageRows(x: Float32Array, xo: number, stride: number, count: number, width: number): StagedRows | null {
  if (!enabled || count > STAGE_ROWS) return null;
  const kern = loadKernel();
  if (kern === null || !kern.ensureScratch(width, 16)) return null;
  const { f32 } = kern.views();
  const base = kern.xPtr >> 2;
  if (stride === width) f32.set(x.subarray(xo, xo + count * width), base);
  else for (let i = 0; i < count; i++) f32.set(x.subarray(xo + i * stride, xo + i * stride + width), base + i * width);
  return { id: ++kern.stageId, count, width };
}

/**
 * For staged rows `0 .. count)`, columns `col .. col + m.dim)` of each row against matrix `m`:
 * an Int32Array view (valid until the next kernel call) with, per row, the certified nearest
 * column of `m` or −1 (re-check needed; the distances are in `stagedDistances()`).
 */
export function argminStaged(m: SimdMatrix, rows: StagedRows, col: number, count: number): Int32Array {
  const kern = kernel;
  if (kern === null || kern === undefined || rows.id !== kern.stageId) throw new Error('argminStaged: rows are no longer staged');
  if (count > rows.count || col < 0 || col + m.dim > rows.width) throw new Error('argminStaged: outside the staged rows');
  if (!kern.ensureScratch(rows.width, m.kp)) throw new Error('argminStaged: out of kernel memory');
  const ex = kern.ex;
  const xp = kern.xPtr + col * 4;
  const xs = rows.width * 4;
  ex.nearest(xp, xs, count, m.dim, m.pointer, m.kp, m.cmax, kern.dPtr, kern.outPtr, kern.secondPtr);
  kern.lastKp = m.kp;
  const { i32 } = kern.views();
  return i32.subarray(kern.outPtr >> 2, (kern.outPtr >> 2) + count);
}

/**
 * Per row of the last `argminStaged`: the second smallest F (f32), i.e. the smallest F_j over the
 * columns other than the row's minimum (a view valid until the next kernel call).
 */
export function stagedSeconds(count: number): Float32Array {
  const kern = kernel!;
  const { f32 } = kern.views();
  return f32.subarray(kern.secondPtr >> 2, (kern.secondPtr >> 2) + count);
}

/** Row `r`'s f32 half-distances F_j ≈ (‖c_j‖² − 2x·c_j)/2 (j < kp) from the last `argminStaged`. */
export function stagedDistances(r: number): Float32Array {
  const kern = kernel!;
  const { f32 } = kern.views();
  const o = (kern.dPtr >> 2) + r * kern.lastKp;
  return f32.subarray(o, o + kern.lastKp);
}

/**
 * The kernel's certification margin T (see simd-kernels.wat) for a row of norm ≤ `x`, matrix
 * norms ≤ `c`, `n` dimensions: columns whose 2F̂ is more than T above the smallest cannot be the
 * exact nearest.
 */
export function certifyTolerance(x: number, c: number, n: number): number {
  return 2 ** -24 * 1.02 * (4 * n + 8) * c * (x + c) + (2 * n + 8) * 2 ** -52 * (x + c) * (x + c) + (4 * n + 8) * 2 ** -140;
}

/** Largest sample `SimdSeeding` copies (bytes). */
const MAX_SEEDING_BYTES = 1024 * 1024 * 1024;

/**
 * k-means++ seeding state in a private kernel instance (its own memory, released with this
 * object): the n points (copied once), and `dist`, `assign` and `cc` as views into that memory,
 * which `update` changes exactly as the JS loop of kmeans.ts's seedPlusPlus would (same float64
 * operations in the same order).
 */
export class SimdSeeding {
  private readonly ex: KernelExports;
  private readonly cPtr: number;
  private readonly ccPtr: number;
  private readonly aPtr: number;
  private readonly dPtr: number;
  private readonly centre: Float32Array;
  /** Squared distance of each point to its seed (float64). */
  readonly dist: Float64Array;
  /** Seed of each point. */
  readonly assign: Int32Array;
  /** Squared distance from the new centre to each earlier one (set before `update`). */
  readonly cc: Float64Array;

  private constructor(ex: KernelExports, readonly n: number, readonly dim: number, k: number) {
    this.ex = ex;
    const up = (b: number) => (b + 63) & ~63;
    this.cPtr = 64 + up(n * dim * 4);
    this.ccPtr = this.cPtr + up(dim * 4);
    this.aPtr = this.ccPtr + up(k * 8);
    this.dPtr = this.aPtr + up(n * 4);
    const buf = ex.memory.buffer;
    this.centre = new Float32Array(buf, this.cPtr, dim);
    this.cc = new Float64Array(buf, this.ccPtr, k);
    this.assign = new Int32Array(buf, this.aPtr, n);
    this.dist = new Float64Array(buf, this.dPtr, n);
  }

  static bytes(n: number, dim: number, k: number): number {
    const up = (b: number) => (b + 63) & ~63;
    return 64 + up(n * dim * 4) + up(dim * 4) + up(k * 8) + up(n * 4) + up(n * 8);
  }

  /** The points `data[i·dim ..)` (i < n), or null without the kernel or when too large. */
  static create(data: Float32Array, n: number, dim: number, k: number): SimdSeeding | null {
    if (!enabled || n < 1 || dim < 1 || k < 1) return null;
    const bytes = SimdSeeding.bytes(n, dim, k);
    if (bytes > MAX_SEEDING_BYTES) return null;
    const ex = instantiate();
    if (ex === null) return null;
    try {
      const have = ex.memory.buffer.byteLength;
      if (bytes > have) ex.memory.grow(Math.ceil((bytes - have) / 65536));
    } catch {
      return null;
    }
    new Float32Array(ex.memory.buffer, 64, n * dim).set(data.subarray(0, n * dim));
    return new SimdSeeding(ex, n, dim, k);
  }

  /**
   * New centre `cIdx` = `c[co .. co + dim)`: every point with cc[assign[i]] < 4·dist[i] whose
   * squared distance to it is below dist[i] moves to it; returns Σ dist[i] (summed in order).
   */
  update(c: Float32Array, co: number, cIdx: number): number {
    this.centre.set(c.subarray(co, co + this.dim));
    return this.ex.seed_update(64, this.n, this.dim, this.cPtr, this.ccPtr, this.aPtr, this.dPtr, cIdx);
  }
}
