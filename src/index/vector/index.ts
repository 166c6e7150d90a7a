/**
 * Vector search: exact brute force (`flatKnn`) over a `VectorSource`, and an in-memory IVF-PQ
 * index (`trainIvfPq` → `IvfPqIndex`) with a portable model and index encoding. Self-contained:
 * depends only on apache-arrow.
 */
export { distanceAt, dotAt, l2At, METRICS, type Metric, normAt, vectorNorm } from './distance.js';
export { flatKnn, type FlatKnnOptions, type KnnResult } from './flat-knn.js';
export { DEFAULT_NPROBES, DEFAULT_REFINE_FACTOR, IvfPqIndex, type IvfPqSearchOptions } from './ivf-pq-index.js';
export {
  decodeIvfPqModel,
  defaultPartitions,
  defaultSubVectors,
  encodeIvfPqModel,
  type IvfPqModel,
  trainIvfPq,
  type TrainIvfPqParams,
} from './ivf-pq-model.js';
export { kmeans, type KMeansOptions, type KMeansResult, Rng } from './kmeans.js';
export { TopK } from './top-k.js';
export { type VectorChunk, type VectorLocation, VectorSource } from './vector-source.js';
