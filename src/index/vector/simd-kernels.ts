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
 * - for matrices of `INT16_MIN_DIM` or more dimensions (the IVF coarse assignment, k-means on
 *   whole vectors) `stageRows16` also quantises the staged rows to i16 in the kernel and
 *   `argminStaged16` runs `nearest16`: exact integer dot products against the matrix's 16-bit
 *   copy (`i32x4.dot_i16x8_s`, 8 multiply-adds an instruction), certified with a margin that
 *   includes the quantisation error (`certifyTolerance16`), re-checked like the f32 kernel's;
 *   about 35 % less time a row at 128 dimensions, 45 % at 768. QUIVER_SIMD16=0 (or
 *   `setInt16KernelEnabled(false)`) keeps every matrix on the f32 kernel;
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
  nearest16(xp: number, xs: number, rows: number, pairs: number, ct: number, kp: number, hp: number, scp: number, tp: number, dp: number, outp: number, sp: number): void;
  quantize16(xp: number, xs: number, rows: number, width: number, q: number, op: number, os: number, scp: number): void;
  row_norms(xp: number, xs: number, rows: number, n: number, outp: number): void;
}

/** A scratch block in the kernel's memory: its address and size class (0: none yet). */
interface Block {
  ptr: number;
  cap: number;
}

/** The module instance plus a power-of-two free-list allocator over its memory. */
class Kernel {
  readonly ex: KernelExports;
  private top = 1024; // bytes 0..1023 unused
  private readonly free = new Map<number, number[]>();
  private f32: Float32Array;
  private i32: Int32Array;
  private i16: Int16Array;
  private f64: Float64Array;
  // Scratch: staged rows, distances (blocks that grow: `ensureBlock`), per-row results.
  private readonly xBlock: Block = { ptr: 0, cap: 0 };
  private readonly dBlock: Block = { ptr: 0, cap: 0 };
  outPtr = 0;
  /** Per staged row: the second smallest F of the last `argminStaged`. */
  secondPtr = 0;
  stageId = 0;
  /** Columns of the last `argminStaged` (row stride of the distance block). */
  lastKp = 0;
  // Scratch of the 16-bit path: staged i16 rows, per-row scales (f32), margins (f64; the
  // row scales while staging) and norms (two f64 a row).
  private readonly x16Block: Block = { ptr: 0, cap: 0 };
  scalePtr = 0;
  tolPtr = 0;
  normsPtr = 0;

  constructor(ex: KernelExports) {
    this.ex = ex;
    this.f32 = new Float32Array(ex.memory.buffer);
    this.i32 = new Int32Array(ex.memory.buffer);
    this.i16 = new Int16Array(ex.memory.buffer);
    this.f64 = new Float64Array(ex.memory.buffer);
    this.outPtr = this.alloc(STAGE_ROWS * 4);
    this.secondPtr = this.alloc(STAGE_ROWS * 4);
    this.scalePtr = this.alloc(STAGE_ROWS * 4);
    this.tolPtr = this.alloc(STAGE_ROWS * 8);
    this.normsPtr = this.alloc(STAGE_ROWS * 16);
  }

  get xPtr(): number {
    return this.xBlock.ptr;
  }
  get dPtr(): number {
    return this.dBlock.ptr;
  }
  get x16Ptr(): number {
    return this.x16Block.ptr;
  }

  /** Views of the whole memory (rebuilt after growth). */
  views(): { f32: Float32Array; i32: Int32Array; i16: Int16Array; f64: Float64Array } {
    if (this.f32.buffer !== this.ex.memory.buffer) {
      this.f32 = new Float32Array(this.ex.memory.buffer);
      this.i32 = new Int32Array(this.ex.memory.buffer);
      this.i16 = new Int16Array(this.ex.memory.buffer);
      this.f64 = new Float64Array(this.ex.memory.buffer);
    }
    return { f32: this.f32, i32: this.i32, i16: this.i16, f64: this.f64 };
  }

  /** Ensures the i16 staging block for STAGE_ROWS rows of `rowValues` values (plus slack). */
  ensureScratch16(rowValues: number): boolean {
    return this.ensureBlock(this.x16Block, STAGE_ROWS * rowValues * 2 + 64);
  }

  /** Makes `block` at least `bytes` long (a new block; the old one freed); false when memory cannot grow. */
  private ensureBlock(block: Block, bytes: number): boolean {
    if (bytes <= block.cap) return true;
    if (block.cap > 0) this.release(block.ptr, block.cap);
    const p = this.alloc(bytes);
    if (p < 0) {
      block.cap = 0;
      return false;
    }
    block.ptr = p;
    block.cap = Kernel.sizeClass(bytes);
    return true;
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
    return this.ensureBlock(this.xBlock, STAGE_ROWS * width * 4) && this.ensureBlock(this.dBlock, STAGE_ROWS * kp * 4);
  }

}

let enabled = !/^(0|false|off|no)$/i.test(process.env.QUIVER_SIMD ?? '');
let int16Enabled = !/^(0|false|off|no)$/i.test(process.env.QUIVER_SIMD16 ?? '');
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

/**
 * Turns the 16-bit integer path (`stageRows16` / `argminStaged16`) off (every caller then stages
 * f32 rows) or back on; returns the previous setting. QUIVER_SIMD16=0 in the environment starts
 * with it off. Tests and benchmarks: results are the same either way.
 */
export function setInt16KernelEnabled(on: boolean): boolean {
  const prev = int16Enabled;
  int16Enabled = on;
  return prev;
}

const finalizer = new FinalizationRegistry<{ ptr: number; bytes: number; ptr16: number; bytes16: number }>((held) => {
  kernel?.release(held.ptr, held.bytes);
  if (held.ptr16 >= 0) kernel?.release(held.ptr16, held.bytes16);
});

/**
 * Largest |x̃| (and |c̃|) for dot products over `n` dimensions: n·q² < 2³¹, so every partial sum
 * of x̃·c̃ (dimensions padded to pairs) is exact in i32.
 */
export function quantLimit(n: number): number {
  return Math.min(32767, Math.floor(Math.sqrt(0x7fffffff / (2 * Math.ceil(n / 2)))));
}

/** The smallest power of two ≥ v (v > 0, finite). */
function pow2AtLeast(v: number): number {
  let s = 2 ** Math.ceil(Math.log2(v));
  while (s < v) s *= 2;
  while (s / 2 >= v) s /= 2;
  return s;
}

/**
 * Matrices of fewer dimensions stay on the f32 kernel: below 32 the per-column argmin, the same
 * work either way, outweighs the cheaper dot products (64 rows × 256 columns on this VM, µs a
 * row f32 / 16-bit including staging: dim 16 0.24 / 0.25, 32 0.41 / 0.36, 128 1.48 / 0.96, 768
 * 8.7 / 4.9).
 */
export const INT16_MIN_DIM = 32;

/** Quantisation scales outside this range (extreme magnitudes) leave the row or matrix to the f32 path. */
const MIN_SCALE = 2 ** -60;
const MAX_SCALE = 2 ** 60;

/** The 16-bit copy of a matrix (see simd-kernels.wat for the layout). */
interface Int16Copy {
  ptr: number;
  bytes: number;
  /** ⌈dim/2⌉. */
  pairs: number;
  /** s_c: a power of two; c̃ = round(c/s_c), |c̃| ≤ q. */
  scale: number;
  q: number;
  /** ≥ max_j ‖c_j‖₁. */
  c1max: number;
}

/**
 * The 16-bit copy of `c[co + j·dim ..]` (j < k), quantised with one power-of-two scale for the
 * matrix; null when its magnitudes are extreme or memory is short.
 */
function int16Copy(kern: Kernel, c: Float32Array, co: number, k: number, dim: number, kp: number): Int16Copy | null {
  const pairs = Math.ceil(dim / 2);
  const q = quantLimit(dim);
  let maxAbs = 0;
  let c1max = 0;
  for (let j = 0; j < k; j++) {
    let l1 = 0;
    for (let d = 0, o = co + j * dim; d < dim; d++) {
      const a = Math.abs(c[o + d]);
      if (a > maxAbs) maxAbs = a;
      l1 += a;
    }
    if (l1 > c1max) c1max = l1;
  }
  const scale = maxAbs > 0 ? pow2AtLeast(maxAbs / q) : 1;
  if (!(scale >= MIN_SCALE && scale <= MAX_SCALE)) return null;
  const bytes = pairs * kp * 4;
  const ptr = kern.alloc(bytes);
  if (ptr < 0) return null;
  const { i16 } = kern.views();
  const base = ptr >> 1;
  i16.fill(0, base, base + 2 * pairs * kp);
  const inv = 1 / scale;
  for (let j = 0; j < k; j++) {
    const o = co + j * dim;
    for (let d = 0; d < dim; d++) i16[base + ((d >> 1) * kp + j) * 2 + (d & 1)] = Math.round(c[o + d] * inv);
  }
  // A float64 sum of |c| with relative error ≪ 2⁻⁴⁰, rounded up.
  return { ptr, bytes, pairs, scale, q, c1max: c1max * (1 + 2 ** -40) };
}

/** K vectors of `dim` values in the kernel's memory (transposed, padded), with f32 norms and C. */
export class SimdMatrix {
  /** Columns, K rounded up to 16. */
  readonly kp: number;
  /** An upper bound of max_j ‖c_j‖. */
  readonly cmax: number;
  private ptr: number;
  private readonly bytes: number;
  /** The 16-bit copy, or null (extreme magnitudes, no memory). */
  private q16: Int16Copy | null;

  private constructor(readonly k: number, readonly dim: number, kp: number, cmax: number, ptr: number, bytes: number, q16: Int16Copy | null) {
    this.kp = kp;
    this.cmax = cmax;
    this.ptr = ptr;
    this.bytes = bytes;
    this.q16 = q16;
    finalizer.register(this, { ptr, bytes, ptr16: q16?.ptr ?? -1, bytes16: q16?.bytes ?? 0 }, this);
  }

  /** True when `argminStaged16` can serve this matrix now. */
  get int16(): boolean {
    return int16Enabled && this.q16 !== null && this.ptr >= 0;
  }

  /** @internal */
  get int16Copy(): Int16Copy {
    if (this.ptr < 0 || this.q16 === null) throw new Error('SimdMatrix has no 16-bit copy');
    return this.q16;
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
    return new SimdMatrix(k, dim, kp, cmax, ptr, bytes, dim >= INT16_MIN_DIM ? int16Copy(kern, c, co, k, dim, kp) : null);
  }

  /** Frees the kernel memory now (the matrix must not be used afterwards). */
  dispose(): void {
    if (this.ptr < 0) return;
    finalizer.unregister(this);
    kernel?.release(this.ptr, this.bytes);
    if (this.q16 !== null) kernel?.release(this.q16.ptr, this.q16.bytes);
    this.q16 = null;
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

/**
 * The 16-bit path's margin T for a row segment of norm ≤ X and ‖·‖₁ ≤ L1 quantised with scale
 * sx, against a matrix of norms ≤ C, ‖c_j‖₁ ≤ C1, scale sc, over n dimensions (derived in
 * simd-kernels.wat's 16-bit section): the quantisation error of x·c_j,
 * E_q = (sc·L1 + sx·C1)/2 + n·sx·sc/4, plus the f32 conversion, product and subtraction and the
 * f32 h_j, give |F̂_j − D_j/2| ≤ E_F; with the float64 reference's error, T = 4·E_F (+2 %) +
 * (2n+8)·2⁻⁵²·(X+C)² (as in `certifyTolerance`) + subnormal slack.
 */
export function certifyTolerance16(X: number, L1: number, sx: number, C: number, C1: number, sc: number, n: number): number {
  const u = 2 ** -24;
  const eq = (sc * L1 + sx * C1) / 2 + (n * sx * sc) / 4;
  const ef = eq * (1 + 2 * u) + 2 * u * X * C + u * C * C + n * 2 ** -53 * C * C;
  return 1.02 * 4 * ef + (2 * n + 8) * 2 ** -52 * (X + C) * (X + C) + (4 * n + 8) * 2 ** -140;
}

/**
 * A block of rows staged by `stageRows16`: the f32 rows (as `stageRows` stages them, so
 * `argminStaged` serves them too) and their i16 copy; valid until the next staging.
 */
export interface StagedRows16 extends StagedRows {
  /** Largest |x̃| (`quantLimit` of the matrices' dim). */
  readonly q: number;
  /** Per row: its scale s_x (a power of two), NaN when the row holds NaN/±Infinity or extreme magnitudes. */
  readonly scales: Float64Array;
}

/** Bytes a staged i16 row takes: `width` values rounded up to 8 (one v128). */
const row16Bytes = (width: number): number => Math.ceil(width / 8) * 16;

/**
 * Stages `count ≤ STAGE_ROWS` rows of `width` values (`x[xo + i·stride ..]`) as `stageRows` does
 * and quantises them to i16 in the kernel (`quantize16`), each with its own power-of-two scale,
 * |x̃| ≤ quantLimit(n) — n the dim of the matrices they will meet; null when the kernel, or its
 * 16-bit path, is unavailable or disabled.
 */
export function stageRows16(x: Float32Array, xo: number, stride: number, count: number, width: number, n: number): StagedRows16 | null {
  if (!int16Enabled) return null;
  const st = stageRows(x, xo, stride, count, width);
  const kern = kernel;
  if (st === null || kern === null || kern === undefined || !kern.ensureScratch16(row16Bytes(width) / 2)) return null;
  const q = quantLimit(n);
  kern.ex.quantize16(kern.xPtr, width * 4, count, width, q, kern.x16Ptr, row16Bytes(width), kern.tolPtr);
  const { f64 } = kern.views();
  const scales = f64.slice(kern.tolPtr >> 3, (kern.tolPtr >> 3) + count);
  return { id: st.id, count, width, q, scales };
}

/**
 * `argminStaged` for rows staged by `stageRows16`: the certified nearest column of `m` (or −1)
 * per row, from exact integer dot products; the F̂ values are in `stagedDistances()` and each
 * row's margin in `stagedTolerance()` for the re-check.
 */
export function argminStaged16(m: SimdMatrix, rows: StagedRows16, col: number, count: number): Int32Array {
  const kern = kernel;
  if (kern === null || kern === undefined || rows.id !== kern.stageId) throw new Error('argminStaged16: rows are no longer staged');
  if (count > rows.count || col < 0 || col + m.dim > rows.width) throw new Error('argminStaged16: outside the staged rows');
  const c16 = m.int16Copy;
  if (2 * c16.pairs * rows.q * c16.q > 0x7fffffff) throw new Error('argminStaged16: rows were quantised for fewer dimensions');
  if (!kern.ensureScratch(rows.width, m.kp)) throw new Error('argminStaged16: out of kernel memory');
  const n = m.dim;
  // Σx² and Σ|x| of each row's segment, in the kernel; the margin here (a few flops a row).
  kern.ex.row_norms(kern.xPtr + col * 4, rows.width * 4, count, n, kern.normsPtr);
  const { f32, f64 } = kern.views();
  const sp = kern.scalePtr >> 2;
  const tp = kern.tolPtr >> 3;
  const np = kern.normsPtr >> 3;
  const { scales } = rows;
  for (let r = 0; r < count; r++) {
    const sx = scales[r];
    const s = sx * c16.scale;
    let t = NaN;
    if (s >= 2 ** -120 && s <= 2 ** 120) {
      const X = Math.sqrt(f64[np + 2 * r]) * (1 + 2 ** -30);
      if (X <= MAX_CERTIFIED_NORM) t = certifyTolerance16(X, f64[np + 2 * r + 1] * (1 + 2 ** -30), sx, m.cmax, c16.c1max, c16.scale, n);
    }
    f32[sp + r] = Number.isNaN(t) ? 0 : s;
    f64[tp + r] = t;
  }
  kern.ex.nearest16(kern.x16Ptr + col * 2, row16Bytes(rows.width), count, c16.pairs, c16.ptr, m.kp, m.pointer + m.dim * m.kp * 4, kern.scalePtr, kern.tolPtr, kern.dPtr, kern.outPtr, kern.secondPtr);
  kern.lastKp = m.kp;
  const { i32 } = kern.views();
  return i32.subarray(kern.outPtr >> 2, (kern.outPtr >> 2) + count);
}

/** Row `r`'s margin T from the last `argminStaged16` (NaN: the row could not be certified at all). */
export function stagedTolerance(r: number): number {
  const kern = kernel!;
  return kern.views().f64[(kern.tolPtr >> 3) + r];
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
