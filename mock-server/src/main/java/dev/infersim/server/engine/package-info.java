/**
 * The engine on the real clock: one engine thread per data-parallel rank ({@link
 * dev.infersim.server.engine.EngineLoop}) running the simulator's engine core, the choices it times ({@link
 * dev.infersim.server.engine.Choice}) and hands to event loops, the commands and LoRA changes it applies between steps,
 * and the KV connector of prefill/decode disaggregation ({@link dev.infersim.server.engine.KvTransferConnector}), which
 * holds and frees the blocks of those choices. Knows no HTTP; uses {@code json}, {@code observe}, {@code config},
 * {@code output} and {@code kv}.
 */
package dev.infersim.server.engine;
