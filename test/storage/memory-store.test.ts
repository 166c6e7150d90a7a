import { MemoryObjectStore } from '../../src/storage/memory-store.js';
import { objectStoreConformance } from './conformance.js';

objectStoreConformance('memory', async () => ({ store: new MemoryObjectStore(), cleanup: async () => {} }));
