/**
 * The settings of {@code infersim serve} as values: {@link dev.infersim.server.config.ServerOptions} and the records it
 * holds (faults, timeouts, KV events and transfer, LoRA modules, model features, metrics, pod identity, gRPC), and
 * the part changed at run time ({@link dev.infersim.server.config.RuntimeConfig}). Uses {@code json}, and the loaded
 * tokenizer and dataset of {@code text} and the truth-log writer of {@code observe} that the options carry.
 */
package dev.infersim.server.config;
