import { describe, expect, it } from 'vitest';
import { AdmissionControl } from '../../../src/http/admission-control.js';

const OPTIONS = { maxInFlight: 1000, queueTargetMs: 20, intervalMs: 250, minShare: 0.1 };

/** Admits `count` requests, expecting each to be admitted. */
function admit(control: AdmissionControl, count: number): void {
  for (let index = 0; index < count; index++) expect(control.tryAdmit()).toBe(true);
}

/** One interval of 25 delay samples: `late` of them at `lateMs` (just over the target of 20 ms), the rest at 1 ms. */
function interval(control: AdmissionControl, late: number, lateMs = 22): void {
  control.observeInterval(Array.from({ length: 25 }, (_, index) => (index < late ? lateMs : 1)));
}

/** How many of `arrivals` requests are admitted (each admitted one released at once). */
function admittedOf(control: AdmissionControl, arrivals: number): number {
  let admitted = 0;
  for (let index = 0; index < arrivals; index++) {
    if (control.tryAdmit()) {
      admitted += 1;
      control.release();
    }
  }
  return admitted;
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

  it('takes a few long pauses in an interval for no standing queue: the median decides', () => {
    const control = new AdmissionControl(OPTIONS);
    interval(control, 12);
    control.observeInterval([400, 1, 1]);
    expect(control.share).toBe(1);
    expect(admittedOf(control, 100)).toBe(100);
    expect(control.overloaded).toBe(false);
  });

  it('lowers the admitted share to 80 % after the second interval in a row whose median delay is above the target, and after each further one, and spreads the refusals evenly', () => {
    let shed = 0;
    const control = new AdmissionControl(OPTIONS, () => (shed += 1));
    // One late interval (the first turns of a burst) lowers nothing; a quiet one starts the count again.
    interval(control, 13);
    expect(control.share).toBe(1);
    interval(control, 0);
    interval(control, 13);
    expect(control.share).toBe(1);
    interval(control, 13);
    expect(control.share).toBeCloseTo(0.8, 12);
    expect(admittedOf(control, 1000)).toBe(800);
    expect(shed).toBe(200);
    expect(control.overloaded).toBe(true);
    // Evenly: of any 10 arrivals in a row, 8 are admitted.
    expect(admittedOf(control, 10)).toBe(8);
    interval(control, 25);
    expect(control.share).toBeCloseTo(0.64, 12);
    expect(admittedOf(control, 100)).toBe(64);
  });

  it('lowers the share by the target over the median delay when that is steeper, down to half an interval', () => {
    const control = new AdmissionControl(OPTIONS);
    interval(control, 13, 30);
    interval(control, 13, 30);
    expect(control.share).toBeCloseTo(20 / 30, 12);
    interval(control, 25, 400);
    expect(control.share).toBeCloseTo(20 / 30 / 2, 12);
  });

  it('while shedding, refuses whatever the share an arrival in a turn that has run past the sampler\'s due time', () => {
    const control = new AdmissionControl(OPTIONS);
    control.start();
    try {
      const sampledAt = performance.now();
      // Admitting all: a long turn refuses nothing (a burst of new streams is served).
      expect(control.tryAdmit(sampledAt + 10_000)).toBe(true);
      control.release();
      interval(control, 25);
      interval(control, 25);
      expect(control.share).toBeCloseTo(0.8, 12);
      // The sampler last ran no later than now and is due 10 ms after: an arrival past that is refused, and so is
      // every later one in the same turn, whatever the credit the share has built.
      let refusedLate = 0;
      for (let index = 0; index < 10; index++) if (!control.tryAdmit(performance.now() + 10 + 1)) refusedLate += 1;
      expect(refusedLate).toBe(10);
      expect(control.overloaded).toBe(true);
      // Arrivals early in a turn are admitted by the share: 8 of 10.
      let admitted = 0;
      for (let index = 0; index < 10; index++) {
        if (control.tryAdmit(sampledAt)) {
          admitted += 1;
          control.release();
        }
      }
      expect(admitted).toBe(8);
      // At the floor the turns are long whatever is admitted: the share alone decides, a tenth is served.
      for (let index = 0; index < 50; index++) interval(control, 25, 400);
      expect(control.share).toBe(0.1);
      let admittedAtFloor = 0;
      for (let index = 0; index < 100; index++) {
        if (control.tryAdmit(performance.now() + 10 + 1)) {
          admittedAtFloor += 1;
          control.release();
        }
      }
      expect(admittedAtFloor).toBe(10);
    } finally {
      control.stop();
    }
  });

  it('never lowers the share under the floor, so a process that stays overloaded still serves some', () => {
    const control = new AdmissionControl(OPTIONS);
    for (let index = 0; index < 50; index++) interval(control, 25);
    expect(control.share).toBe(0.1);
    expect(admittedOf(control, 1000)).toBe(100);
  });

  it('raises the share by a tenth of all arrivals each interval under the target, back to all', () => {
    const control = new AdmissionControl(OPTIONS);
    for (let index = 0; index < 4; index++) interval(control, 25);
    expect(control.share).toBeCloseTo(0.512, 12);
    interval(control, 0);
    expect(control.share).toBeCloseTo(0.612, 12);
    for (let index = 0; index < 3; index++) interval(control, 0);
    expect(control.share).toBeCloseTo(0.912, 12);
    interval(control, 0);
    expect(control.share).toBe(1);
    expect(admittedOf(control, 1000)).toBe(1000);
  });

  it('keeps the in-flight bound whatever the share', () => {
    const control = new AdmissionControl({ ...OPTIONS, maxInFlight: 5 });
    interval(control, 25);
    interval(control, 25);
    let admitted = 0;
    for (let index = 0; index < 100; index++) if (control.tryAdmit()) admitted += 1;
    expect(admitted).toBe(5);
    expect(control.inFlight).toBe(5);
  });

  it('measures the delay itself once started, and not at all without a target', async () => {
    const control = new AdmissionControl({ ...OPTIONS, intervalMs: 50 });
    control.start();
    try {
      // Block the event loop for most of two intervals: the samples in them are late by ~40 ms.
      const blockUntil = async (ms: number): Promise<void> => {
        const end = performance.now() + ms;
        while (performance.now() < end) {
          const busy = performance.now() + 40;
          while (performance.now() < busy) { /* the loop is held */ }
          await new Promise((resolve) => setImmediate(resolve));
        }
      };
      await blockUntil(400);
      expect(control.share).toBeLessThan(1);
    } finally {
      control.stop();
    }
    const off = new AdmissionControl({ ...OPTIONS, queueTargetMs: 0 });
    off.start();
    off.stop();
    expect(off.share).toBe(1);
  });
});
