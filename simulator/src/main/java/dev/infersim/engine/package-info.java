/**
 * The serving-engine model the simulator, the mock server and the predictions share: a vLLM-style
 * {@link dev.infersim.engine.Deployment} (its GPU and model from {@link dev.infersim.engine.profile}, read by
 * {@link dev.infersim.engine.Profiles}), the roofline {@link dev.infersim.engine.CostModel} of one engine iteration (or
 * {@link dev.infersim.engine.FixedTiming}), the paged {@link dev.infersim.engine.KvCacheManager} with prefix caching,
 * scheduling policies by name ({@link dev.infersim.engine.SchedulingPolicies}), and the
 * {@link dev.infersim.engine.EngineCore}: {@code submit}, {@code planStep(nowNanos)} and {@code completeStep(plan)}, over a
 * {@code Scheduler} (vLLM V1's {@code SchedulerInterface}: vLLM V1's policy, or fixed latencies' timelines) and the
 * {@code StepTiming} that prices the batch it plans.
 * Pure Java with no I/O, threads or wall clock: the caller passes time in. Uses {@link dev.infersim.engine.profile} and
 * {@link dev.infersim.common}; {@link dev.infersim.engine.calibration} sits above it.
 */
package dev.infersim.engine;
