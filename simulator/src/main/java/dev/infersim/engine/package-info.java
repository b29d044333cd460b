/**
 * The serving-engine model the simulator, the mock server and the predictions share: GPU and model profiles and a
 * vLLM-style {@link dev.infersim.engine.Deployment}, the roofline {@link dev.infersim.engine.CostModel} of one engine
 * iteration (or {@link dev.infersim.engine.FixedTiming}), the paged {@link dev.infersim.engine.KvCacheManager} with
 * prefix caching, scheduling policies by name ({@link dev.infersim.engine.SchedulingPolicies}), and the
 * {@link dev.infersim.engine.EngineCore}: {@code submit}, {@code planStep(nowNanos)} and {@code completeStep(plan)}, over a
 * scheduler and the step timing the engine is given (the cost model or fixed latencies).
 * Pure Java with no I/O, threads or wall clock: the caller passes time in.
 */
package dev.infersim.engine;
