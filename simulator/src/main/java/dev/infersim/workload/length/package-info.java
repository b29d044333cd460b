/**
 * How long prompts and outputs are: {@link dev.infersim.workload.length.LengthDistribution} and its laws (fixed, uniform
 * with vLLM's range ratio, clipped log-normal, Zipf, empirical, geometric), read from specs and YAML, and
 * {@link dev.infersim.workload.length.OutputLength}, the rule that turns {@code max_tokens} and an EOS model into the
 * tokens generated (also the mock's).
 * Uses only {@link dev.infersim.common}; the rest of {@link dev.infersim.workload} uses it.
 */
package dev.infersim.workload.length;
