/**
 * {@code infersim check-harness}: reads another harness's per-request results (vLLM, GuideLLM, AIPerf, infersim or a
 * generic file), matches them to the mock server's truth timeline and judges their timing
 * ({@link dev.infersim.bench.harness.HarnessCheck}, {@link dev.infersim.bench.harness.HarnessFindings}). It uses
 * {@code measure} only, for the arrival-process test.
 */
package dev.infersim.bench.harness;
