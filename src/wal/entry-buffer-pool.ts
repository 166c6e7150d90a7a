/** The process-wide pool of WAL entry buffers the appenders share (see util/buffer-pool.ts). */
import { BufferPool } from '../util/buffer-pool.js';

export const walEntryBuffers = new BufferPool();
