import test from 'ava';
import { randomUUID } from 'node:crypto';
import protobuf from 'protobufjs';
import { isQuiverError } from '../../src/errors.js';
import { decodeRegionManifest, encodeRegionManifest, initialRegionManifest } from '../../src/manifest/region-manifest.js';
import { RegionManifestStore } from '../../src/manifest/region-manifest-store.js';
import { VersionedStore } from '../../src/manifest/versioned-store.js';
import { MemoryObjectStore } from '../../src/storage/memory-store.js';
import { bitReversedName } from '../../src/util/bit-reversed-name.js';

const REGION = '6f1c2a9e-8d3b-4c1a-9e2f-0123456789ab';

test('region manifest uses Lance field numbers', (t) => {
  const m = {
    ...initialRegionManifest(REGION, 2, 'writer-a'),
    version: 7,
    writerEpoch: 3,
    replayAfterWalEntryPosition: 11,
    walEntryPositionLastSeen: 12,
    currentGeneration: 4,
    flushedGenerations: [{ generation: 3, path: 'abcdef01_gen_3' }],
  };
  const bytes = encodeRegionManifest(m);
  t.deepEqual(decodeRegionManifest(bytes, 'x'), m);
  // Walk the raw wire format: field numbers must be Lance's.
  const reader = protobuf.Reader.create(bytes);
  const seen = new Map<number, unknown>();
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const field = tag >>> 3;
    if ((tag & 7) === 0) seen.set(field, Number(reader.uint64()));
    else seen.set(field, reader.bytes());
  }
  t.is(seen.get(1), 7);
  t.is(seen.get(2), 3);
  t.is(seen.get(3), 11);
  t.is(seen.get(4), 12);
  t.is(seen.get(6), 4);
  t.true(seen.has(8));
  t.is(seen.get(10), 2);
  t.true(seen.has(11));
  t.false(seen.has(5) || seen.has(7) || seen.has(9));
});

test('corrupt manifest bytes are a data error', (t) => {
  const err = t.throws(() => decodeRegionManifest(Uint8Array.of(0xff, 0xff, 0xff), 'bad'));
  t.true(isQuiverError(err, 'data'));
});

const codec = { encode: (n: number) => new TextEncoder().encode(String(n)), decode: (b: Uint8Array) => Number(new TextDecoder().decode(b)) };

test('versioned store: latest version with a correct, stale, missing or too-high hint', async (t) => {
  const store = new MemoryObjectStore();
  const vs = new VersionedStore(store, 'm', 'v', codec, 2);
  t.is(await vs.latestVersion(), 0);
  for (let v = 1; v <= 5; v++) await vs.write(v, v * 10);
  t.is(await vs.latestVersion(), 5);
  await store.put('m/version_hint.json', new TextEncoder().encode('{"version":2}'));
  t.is(await vs.latestVersion(), 5, 'stale hint');
  await store.delete('m/version_hint.json');
  t.is(await vs.latestVersion(), 5, 'missing hint');
  await store.put('m/version_hint.json', new TextEncoder().encode('{"version":99}'));
  t.is(await vs.latestVersion(), 5, 'hint past the end');
  t.deepEqual(await vs.readLatest(), { version: 5, doc: 50 });
  t.deepEqual(await vs.listVersions(), [1, 2, 3, 4, 5]);
  t.truthy(await store.head(`m/${bitReversedName(3, 'v')}`));
});

test('versioned store: a version is written once; a second writer loses', async (t) => {
  const vs = new VersionedStore(new MemoryObjectStore(), 'm', 'v', codec);
  await vs.write(1, 1);
  const err = await t.throwsAsync(vs.write(1, 2));
  t.true(isQuiverError(err, 'already_exists'));
  t.is(await vs.read(1), 1);
});

test('epoch claim: first claim writes the initial manifest, each later claim bumps version and epoch', async (t) => {
  const store = new MemoryObjectStore();
  const ms = new RegionManifestStore(store, 'r/manifest', REGION);
  const first = await ms.claimEpoch(1, randomUUID());
  t.like(first, { version: 1, writerEpoch: 1, replayAfterWalEntryPosition: 0, currentGeneration: 1, regionId: REGION, regionSpecId: 1 });
  const second = await ms.claimEpoch(1, randomUUID());
  t.like(second, { version: 2, writerEpoch: 2 });
});

test('epoch claim race: exactly one of several concurrent claims wins', async (t) => {
  const store = new MemoryObjectStore();
  await new RegionManifestStore(store, 'r/manifest', REGION).claimEpoch(1, randomUUID());
  const claims = await Promise.allSettled(Array.from({ length: 5 }, () => new RegionManifestStore(store, 'r/manifest', REGION).claimEpoch(1, randomUUID())));
  t.is(claims.filter((c) => c.status === 'fulfilled').length, 1);
  for (const c of claims) if (c.status === 'rejected') t.true(isQuiverError(c.reason, 'fenced'));
});

test('commit: applies the update on the latest version; a fenced writer cannot commit', async (t) => {
  const store = new MemoryObjectStore();
  const ms = new RegionManifestStore(store, 'r/manifest', REGION);
  const mine = await ms.claimEpoch(1, randomUUID());
  const next = await ms.commit({ epoch: mine.writerEpoch, id: mine.writerId }, (m) => ({ ...m, replayAfterWalEntryPosition: 3, currentGeneration: 2 }));
  t.like(next, { version: 2, writerEpoch: 1, replayAfterWalEntryPosition: 3, currentGeneration: 2 });
  await new RegionManifestStore(store, 'r/manifest', REGION).claimEpoch(1, randomUUID()); // a newer writer
  const err = await t.throwsAsync(ms.commit({ epoch: mine.writerEpoch, id: mine.writerId }, (m) => m));
  t.true(isQuiverError(err, 'fenced'));
  t.is((await ms.readLatest())!.writerEpoch, 2);
});
