/**
 * Bounded top-k by smallest (distance, id): a binary max-heap of at most k pairs in typed arrays.
 * Offering a candidate is O(1) when it cannot enter (the common case once the heap is full) and
 * O(log k) otherwise. Ties on distance are broken by the smaller id, whatever the offer order,
 * so results are deterministic ("ordered by distance, ties by position").
 */
export class TopK {
  readonly dist: Float64Array;
  readonly ids: Float64Array;
  size = 0;

  constructor(readonly k: number) {
    this.dist = new Float64Array(Math.max(1, k));
    this.ids = new Float64Array(Math.max(1, k));
  }

  /** A candidate needs a distance ≤ this to enter (Infinity until full); `<` always enters. */
  get bound(): number {
    return this.size < this.k ? Infinity : this.dist[0];
  }

  get full(): boolean {
    return this.size >= this.k;
  }

  clear(): void {
    this.size = 0;
  }

  offer(d: number, id: number): void {
    const k = this.k;
    if (k === 0) return;
    const dist = this.dist;
    const ids = this.ids;
    if (this.size < k) {
      let i = this.size++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        const pd = dist[p];
        if (pd < d || (pd === d && ids[p] < id)) {
          dist[i] = pd;
          ids[i] = ids[p];
          i = p;
        } else break;
      }
      dist[i] = d;
      ids[i] = id;
      return;
    }
    const top = dist[0];
    if (d > top || (d === top && id >= ids[0]) || d !== d) return;
    let i = 0;
    const n = this.size;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      if (r < n && (dist[r] > dist[l] || (dist[r] === dist[l] && ids[r] > ids[l]))) c = r;
      const cd = dist[c];
      if (cd < d || (cd === d && ids[c] < id)) break;
      dist[i] = cd;
      ids[i] = ids[c];
      i = c;
    }
    dist[i] = d;
    ids[i] = id;
  }

  /** Indices into dist/ids of the kept pairs, closest first (ties by id). */
  private order(): number[] {
    const { dist, ids } = this;
    return Array.from({ length: this.size }, (_, i) => i).sort((a, b) => dist[a] - dist[b] || ids[a] - ids[b]);
  }

  /** The kept pairs, closest first. */
  sorted(): { ids: number[]; distances: number[] } {
    const order = this.order();
    return { ids: order.map((i) => this.ids[i]), distances: order.map((i) => this.dist[i]) };
  }

  /** The kept pairs, closest first, as typed arrays (ids must fit in 32 bits). */
  toResult(): { positions: Uint32Array; distances: Float32Array } {
    const order = this.order();
    const positions = new Uint32Array(order.length);
    const distances = new Float32Array(order.length);
    for (let j = 0; j < order.length; j++) {
      positions[j] = this.ids[order[j]];
      distances[j] = this.dist[order[j]];
    }
    return { positions, distances };
  }
}
