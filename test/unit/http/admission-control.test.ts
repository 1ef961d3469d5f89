import { describe, expect, it } from 'vitest';
import { AdmissionControl } from '../../../src/http/admission-control.js';

const OPTIONS = { maxInFlight: 1000, queueTargetMs: 20, intervalMs: 200, minInFlight: 64 };

/** Admits `count` requests, expecting each to be admitted. */
function admit(control: AdmissionControl, count: number): void {
  for (let index = 0; index < count; index++) expect(control.tryAdmit()).toBe(true);
}

/** Feeds one delay sample every 10 ms from `from` to `to` (performance.now() times). */
function samples(control: AdmissionControl, delayMs: number, from: number, to: number): void {
  for (let now = from; now <= to; now += 10) control.observeDelay(delayMs, now);
}

describe('AdmissionControl', () => {
  it('admits up to the bound, refuses beyond it, and admits again after a release', () => {
    let shed = 0;
    const control = new AdmissionControl({ ...OPTIONS, maxInFlight: 3, queueTargetMs: 0 }, () => (shed += 1));
    admit(control, 3);
    expect(control.tryAdmit()).toBe(false);
    expect(shed).toBe(1);
    expect(control.overloaded).toBe(true);
    control.release();
    expect(control.tryAdmit()).toBe(true);
    expect(control.inFlight).toBe(3);
  });

  it('admits everything when the bound is 0 (off)', () => {
    const control = new AdmissionControl({ ...OPTIONS, maxInFlight: 0 });
    admit(control, 10_000);
    expect(control.overloaded).toBe(false);
  });

  it('ignores one long pause: a single late sample lowers nothing', () => {
    const control = new AdmissionControl(OPTIONS);
    admit(control, 500);
    samples(control, 2, 0, 1000);
    control.observeDelay(400, 1400);
    samples(control, 2, 1410, 2000);
    expect(control.limit).toBe(1000);
  });

  it('lowers the bound below the requests in flight when the delay stays above the target for an interval, and again each further interval', () => {
    const control = new AdmissionControl(OPTIONS);
    admit(control, 500);
    samples(control, 30, 1000, 1150);
    expect(control.limit).toBe(1000);
    samples(control, 30, 1160, 1220);
    expect(control.limit).toBe(400);
    expect(control.tryAdmit()).toBe(false);
    samples(control, 30, 1230, 1430);
    expect(control.limit).toBe(320);
  });

  it('never lowers the bound under the floor', () => {
    const control = new AdmissionControl(OPTIONS);
    admit(control, 10);
    samples(control, 50, 0, 2000);
    expect(control.limit).toBe(64);
    admit(control, 54);
    expect(control.tryAdmit()).toBe(false);
  });

  it('raises the bound by a tenth each interval once the delay is back under the target, up to the maximum', () => {
    const control = new AdmissionControl(OPTIONS);
    admit(control, 500);
    samples(control, 30, 0, 250);
    expect(control.limit).toBe(400);
    samples(control, 1, 260, 450);
    expect(control.limit).toBe(440);
    samples(control, 1, 460, 650);
    expect(control.limit).toBe(484);
    samples(control, 1, 660, 10_000);
    expect(control.limit).toBe(1000);
  });
});
