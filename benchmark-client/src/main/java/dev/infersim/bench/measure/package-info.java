/**
 * What a run measured and whether it can be trusted: the measured window that records each request's
 * {@link dev.infersim.bench.measure.RequestOutcome}, the server's ground truth, the validity verdicts (arrival fit,
 * timing error, send lag), the machine probes (scheduling noise, loop CPU, GC), the scraped server metrics, the
 * findings on the streams and the client's result keys ({@link dev.infersim.bench.measure.ClientKeys}). It uses only
 * {@code config}: it knows nothing of how requests are sent.
 */
package dev.infersim.bench.measure;
