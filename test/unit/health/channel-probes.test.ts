/**
 * Which channels the background probes pick: enabled channels idle for a whole interval, nothing in flight,
 * admitted by their breakers, each on its cheapest chat model; bounded concurrency; stop cancels.
 */
import { describe, expect, it } from 'vitest';
import { ChannelProbes, type ProbeTarget } from '../../../src/health/channel-probes.js';
import type { CatalogModel } from '../../../src/catalog/catalog-model.js';
import { operatorModel } from '../../../src/catalog/catalog-model.js';
import type { Catalog, ChannelRoute } from '../../../src/routing/catalog.js';
import { ChannelHealth } from '../../../src/routing/channel-health.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { silentLogger } from '../../../src/shared/logger.js';
import type { Channel } from '../../../src/domain/records.js';
import type { Model } from '../../../src/domain/model-records.js';
import { channel, T0 } from '../routing/routing-fixtures.js';

const POLICY = { failureThreshold: 1, failureRatePercent: 100, minimumRequests: 1000, windowMs: 60_000, cooldownMs: 10_000, maxCooldownMs: 60_000 };
const INTERVAL_MS = 60_000;

function model(id: string, price: bigint, kind: Model['kind'] = 'chat'): CatalogModel {
  return operatorModel({
    id, kind, public: true, upstream: null, ownedBy: 'operator', rpm: null, tpm: null, routingStrategy: 'weighted', cache: null, fallbacks: [], createdAt: 0, updatedAt: 0,
    pricing: { inputPerMtokNano: price, outputPerMtokNano: price, cachedInputPerMtokNano: null, cacheWritePerMtokNano: null, perRequestNano: null, perImageNano: null, perAudioMinuteNano: null, perMcharNano: null, perWebSearchNano: null, perGroundedPromptNano: null, perWebFetchNano: null, perFileSearchNano: null, perSearchUnitNano: null, batchInputPerMtokNano: null, batchOutputPerMtokNano: null },
  });
}

/** A catalog of the given models, each served by the given channels. */
function catalogOf(served: Array<[CatalogModel, Channel[]]>): Catalog {
  const routes = new Map<string, ChannelRoute[]>(served.map(([entry, channels]) => [entry.id, channels.map((target) => ({ channel: target, upstreamModel: `up-${entry.id}` }))]));
  return { models: () => served.map(([entry]) => entry), routes: (name: string) => routes.get(name) ?? [] } as unknown as Catalog;
}

function setup(served: Array<[CatalogModel, Channel[]]>, probe: (target: ProbeTarget, signal: AbortSignal) => Promise<{ ok: boolean; outcome: string }> = async () => ({ ok: true, outcome: 'success' }), concurrency = 2) {
  const clock = new ManualClock(T0);
  const health = new ChannelHealth(POLICY, clock, silentLogger);
  const probes = new ChannelProbes({ catalog: catalogOf(served), health, clock, logger: silentLogger, probe }, { intervalMs: INTERVAL_MS, concurrency });
  return { clock, health, probes };
}

const describeTargets = (targets: ProbeTarget[]): string[] => targets.map((target) => `${target.channel.id}:${target.model}:${target.upstreamModel}`);

describe('ChannelProbes', () => {
  it('picks every idle channel once, on its cheapest chat model', () => {
    const a = channel('a');
    const b = channel('b');
    const { probes } = setup([[model('pricey', 9n), [a, b]], [model('cheap', 1n), [a]], [model('embed', 0n, 'embedding'), [a, b]]]);
    expect(describeTargets(probes.idleTargets())).toEqual(['a:cheap:up-cheap', 'b:pricey:up-pricey']);
  });

  it('leaves alone a channel tried within the interval, one with attempts in flight, and one whose breaker is open', () => {
    const busy = channel('busy');
    const recent = channel('recent');
    const open = channel('open');
    const idle = channel('idle');
    const { clock, health, probes } = setup([[model('alpha', 1n), [busy, recent, open, idle]]]);
    health.acquire(busy, 'alpha');
    clock.advance(INTERVAL_MS);
    health.acquire(recent, 'alpha')?.succeeded();
    health.acquire(open, 'alpha')?.failed({ failureClass: 'server_error', retryAfterMs: null });
    expect(describeTargets(probes.idleTargets()).map((entry) => entry.split(':')[0])).toEqual(['idle']);
    clock.advance(INTERVAL_MS);
    // The open breaker's cooldown is over: it is probed again; the busy channel still has its attempt in flight.
    expect(describeTargets(probes.idleTargets()).map((entry) => entry.split(':')[0])).toEqual(['recent', 'open', 'idle']);
  });

  it('runs at most `concurrency` probes at once, and stop cancels those running', async () => {
    const channels = ['a', 'b', 'c', 'd', 'e'].map((id) => channel(id));
    let running = 0;
    let most = 0;
    const started: string[] = [];
    const { probes } = setup([[model('alpha', 1n), channels]], async (target, signal) => {
      started.push(target.channel.id);
      running += 1;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 20);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        }, { once: true });
      });
      running -= 1;
      return { ok: !signal.aborted, outcome: signal.aborted ? 'aborted' : 'success' };
    }, 2);
    expect(await probes.runOnce()).toBe(5);
    expect(most).toBe(2);
    expect(started).toHaveLength(5);
    const pass = probes.runOnce();
    await probes.stop();
    await pass;
    expect(started.length).toBeLessThan(10);
  });
});
