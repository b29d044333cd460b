/**
 * The demo ({@code infersim demo}): one workload measured with the mock server and the benchmark client, simulated and
 * predicted over a request-rate sweep; the analysis of where the three agree and why they differ, the closed loop, and
 * the HTML page. {@link dev.infersim.demo.Demo} runs it. It uses every model package (simulator, prediction,
 * queueing, mock server, benchmark client) and is used only by the cli.
 */
package dev.infersim.demo;
