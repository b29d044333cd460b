/**
 * Sending the load and reading the streams: the run ({@link dev.infersim.bench.run.LoadRun}) with its open-loop pacer
 * and closed loop, lanes of event loops and their connections, the prompts and request bodies, and one streamed
 * request per {@link dev.infersim.bench.run.StreamExchange} (SSE framing, chunks, token counts), all on an injected
 * {@link dev.infersim.bench.run.ClientClock}. It hands each ended request to {@code measure} as a
 * {@link dev.infersim.bench.measure.RequestOutcome}; it uses {@code config} and {@code measure}, never {@code report}.
 */
package dev.infersim.bench.run;
