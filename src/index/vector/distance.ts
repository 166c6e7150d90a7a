/**
 * Vector distances (Lance's definitions). The pure kernels live in exec/kernels/distance.ts
 * (layer 1) so the expression evaluator can use them too; this module re-exports them for the
 * index code.
 */
export * from '../../../exec/kernels/distance.js';
